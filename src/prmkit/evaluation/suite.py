"""The whole evaluation of a step scorer on fresh world data: first-error F1, best-of-N curves, audits.

This is what a process card's "where it was tested" and "what failures remain" sections are measured
with. The world's *test* split (disjoint from training's graphs) gives the best-of-N pools and the
audit traces; its first third of problems is the dev split the first-error threshold is tuned on, and
the rest is the first-error test subset. The *heldout* split (longer problems than training) is a
second first-error subset, so length generalisation is measured, not assumed. Fresh test problems
are solved by PRM-guided beam search at rising budgets for the beam-search Goodhart reading.

Every trace is scored once (:class:`CachedScorer`), however many evaluations read it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prmkit.core.files import atomic_write
from prmkit.core.model import Trace
from prmkit.core.protocols import StepScorer
from prmkit.evaluation import plots
from prmkit.evaluation.audits import audit_scores, summary
from prmkit.evaluation.bon_curves import bon_curves
from prmkit.evaluation.config import WorldEvalSettings
from prmkit.evaluation.gaming import beam_gaming
from prmkit.evaluation.gold import group_by_problem
from prmkit.evaluation.processbench import evaluate_first_error
from prmkit.evaluation.scored import broadcast_last, scorer_kind
from prmkit.worlds.registry import DEFAULT_WORLD

SUMMARY_FILE = "eval_summary.json"
BON_POINTS = (1, 4, 16, 64, 256)


class CachedScorer:
    """A StepScorer that scores each trace id once and remembers it."""

    def __init__(self, scorer: StepScorer):
        self.scorer = scorer
        self.name = scorer.name
        self.cache: dict[str, list[float]] = {}

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        todo = [t for t in traces if t.id not in self.cache]
        if todo:
            for t, row in zip(todo, self.scorer.score(todo), strict=True):
                self.cache[t.id] = [float(s) for s in row]
        return [self.cache[t.id] for t in traces]


def world_traces(
    problems: int,
    per_problem: int,
    seed: int,
    split: str,
    policy_config: Any | None = None,
    world: str = DEFAULT_WORLD,
    world_config: Any | None = None,
) -> list[Trace]:
    """Fresh gold-labelled traces of ``split`` from the embedded world named ``world`` (ids unique per
    split), its problems drawn by the generator ``world_config`` (None: the world's defaults)."""
    from prmkit.worlds.registry import world as world_named

    return world_named(world).traces(problems, per_problem, seed, split, policy_config, config=world_config)


def bon_summary(result: Any, points: Sequence[int] = BON_POINTS) -> list[dict[str, Any]]:
    """The rows a card shows: each method at N in ``points`` (those measured). Where some test pool holds
    a trace that games the task, each row carries its ``honest_accuracy`` (``honest_lo``, ``honest_hi``)
    beside ``accuracy``, and the params ``gaming_traces`` (:mod:`prmkit.evaluation.bon_curves`)."""
    measured = {r["n"] for r in result.rows}
    return [r for r in result.rows if r["n"] in points or r["n"] == max(measured)]


def first_error_on_world(scorer: StepScorer, test: list[Trace], heldout: list[Trace]) -> tuple[Any, int]:
    """First-error metrics on test (minus its first third of problems, the dev split) and heldout."""
    pids = list(group_by_problem(test))
    dev_ids = set(pids[: len(pids) // 3])
    dev = [t for t in test if t.problem.id in dev_ids]
    rest = [t for t in test if t.problem.id not in dev_ids]
    result = evaluate_first_error(
        {"world-test": rest, "world-heldout": heldout}, scorer, dev={"world-dev": dev}
    )
    return result, len(dev_ids)


def first_error_by_class(first_error: Any, traces: Sequence[Trace]) -> dict[str, dict[str, Any]]:
    """Per subset and error class (misconception / slip / other, from the gold labels' ``class``): the
    first-error metrics on the traces whose gold first error is of that class plus every error-free trace,
    so each number says how well *that* kind of error is found without crying wolf on right traces."""
    from prmkit.evaluation.processbench import subset_metrics

    cls: dict[str, str | None] = {}
    for t in traces:
        fe = t.first_error("gold")
        label = t.steps[fe].label("gold") if fe >= 0 else None
        cls[t.id] = None if label is None else str(label.metadata.get("class", "other"))
    out: dict[str, dict[str, Any]] = {}
    for subset in dict.fromkeys(p["subset"] for p in first_error.predictions):
        rows = [p for p in first_error.predictions if p["subset"] == subset]
        out[subset] = {}
        for c in sorted({cls.get(p["id"]) for p in rows} - {None}):  # type: ignore[type-var]
            keep = [p for p in rows if cls.get(p["id"]) in (c, None)]
            m = subset_metrics(c, [p["gold"] for p in keep], [p["predicted"] for p in keep])
            out[subset][c] = {"f1": m.f1, "acc_error": m.acc_error, "errors": m.with_error}
    return out


def agent_step_metrics(
    scorer: StepScorer, test: list[Trace], heldout: list[Trace], dev_problems: int, threshold: float | None
) -> dict[str, dict[str, float]] | None:
    """AgentProcessBench's step metrics (``step_micro_acc``, ``firsterroracc``; its own rules, see
    :mod:`prmkit.evaluation.agentprocessbench`) on the first-error subsets, at the same threshold, when
    the traces are agent trajectories; None for math traces (AgentProcessBench rates agent steps)."""
    from prmkit.core.render import is_agentic
    from prmkit.evaluation.agentprocessbench import evaluate_traces

    if not any(is_agentic(t.steps) for t in test):
        return None
    dev_ids = set(list(group_by_problem(test))[:dev_problems])
    sets = {"world-test": [t for t in test if t.problem.id not in dev_ids], "world-heldout": heldout}
    result = evaluate_traces(
        sets, scorer, threshold=0.5 if threshold is None else threshold, gold_source="gold"
    )
    keys = {"step_micro_acc": "step_micro_acc", "firsterroracc": "first_neg1_idx_acc"}
    return {
        row.dataset: {name: row.metrics()[key] for name, key in keys.items()}
        for row in (*result.datasets, result.avg)
    }


def beam_on_world(
    scorer: StepScorer,
    out: Path,
    problems: int,
    budgets: Sequence[int],
    aggregation: str,
    seed: int,
    policy_config: Any | None = None,
    world: str = DEFAULT_WORLD,
    draw: bool = True,
    world_config: Any | None = None,
) -> dict[str, Any]:
    """The beam-search Goodhart reading on fresh test problems (drawn by the generator ``world_config``;
    None: the world's defaults), with its plot (unless ``draw`` is false)."""
    from prmkit.worlds.registry import world as world_named

    w = world_named(world)
    beam_set = w.generate_problems(problems, seed=seed + 1, split="test", config=world_config)
    beam = beam_gaming(
        beam_set, w.policy(policy_config), scorer, budgets, aggregation=aggregation, seed=seed,
        gold_label=w.gold_label,
    )  # fmt: skip
    if draw:
        plots.goodhart(
            beam["rows"], out / "audit_beam.png", x="pressure", title="Verifier gaming under beam search"
        )
    return beam


def data_summary(
    test: list[Trace],
    heldout: list[Trace],
    per_problem: int,
    heldout_per_problem: int,
    seed: int,
    world: str = DEFAULT_WORLD,
) -> dict[str, Any]:
    """What the measurements covered (the card derives "not tested on" from it)."""
    from prmkit.worlds.registry import world as world_named

    both = test + heldout
    steps = [len(t.steps) for t in both]
    return {
        "world": world,
        "world_version": world_named(world).version,
        "policies": sorted({t.generator or "unknown" for t in both}),
        "test": {
            "problems": len(group_by_problem(test)),
            "per_problem": per_problem,
            "traces": len(test),
            "seed": seed,
        },
        "heldout": {
            "problems": len(group_by_problem(heldout)),
            "per_problem": heldout_per_problem,
            "traces": len(heldout),
        },
        "steps_min": min(steps),
        "steps_max": max(steps),
        "step_kinds": sorted({s.kind for t in both for s in t.steps}),
    }


@dataclass
class _FirstErrors:
    """The first-error measurements that the summary reports together: the result on the test and
    heldout subsets, how many test problems were its dev split, and its two breakdowns."""

    result: Any
    dev_problems: int
    by_class: dict[str, dict[str, Any]]
    agent_steps: dict[str, dict[str, float]] | None


@dataclass
class _Audits:
    """The failure-mode audits: their headline numbers, the plots they drew (the beam plot added when
    beam search ran) and the beam-search reading, None when it did not run."""

    summary: dict[str, Any]
    plots: dict[str, str]
    beam: dict[str, Any] | None = None


def evaluate_world(
    scorer: StepScorer,
    out_dir: str | Path,
    settings: WorldEvalSettings | None = None,
    *,
    orm: StepScorer | None = None,
    policy_config: Any | None = None,
    world_config: Any | None = None,
    aggregation: str = "min",
    heldout_per_problem: int = 4,
    beam_budgets: Sequence[int] = (4, 16),
) -> dict[str, Any]:
    """Measure ``scorer`` on fresh data of the embedded world ``settings.world``, as much of it as
    ``settings`` says (None: the defaults of :class:`WorldEvalSettings`; a recipe's ``evaluate`` section
    and ``prmkit card``'s config are such settings); writes results and, unless ``settings.plots`` is
    false, plots to ``out_dir``; returns the summary. ``orm`` adds an ORM as the best-of-N baseline;
    ``policy_config`` (that world's policy config, a world record's ``policy_config``) sets the simulated
    policy whose samples are judged (None: the world's default policy); ``world_config`` (that world's
    generator config, a recipe's ``evaluate.generator``) the tasks they are drawn on (None: its defaults).
    """
    from prmkit.core.progress import progress

    e = settings or WorldEvalSettings()
    problems, per_problem, seed, world = e.problems, e.per_problem, e.seed, e.world
    heldout_problems, beam_problems, bootstrap = e.heldout_problems, e.beam_problems, e.bootstrap
    out = Path(out_dir)
    cached = CachedScorer(scorer)
    with progress() as bar:  # a card takes a minute or more on a CPU: say which part is running
        task = bar.add_task("evaluate: fresh world data", total=5 if beam_problems else 4)

        def done(next_part: str) -> None:
            bar.update(task, advance=1, description=f"evaluate: {next_part}")

        test = world_traces(problems, per_problem, seed, "test", policy_config, world, world_config)
        heldout = world_traces(
            heldout_problems, heldout_per_problem, seed, "heldout", policy_config, world, world_config
        )
        done("first-error F1 (scoring every trace)")
        first_error = _first_errors(cached, test, heldout, out, e.plots)
        done("best-of-N curves")
        prm_scores = cached.score(test)
        title = f"Best-of-N on {world} test ({problems} problems)"
        bon = _best_of_n(test, prm_scores, orm, out, bootstrap, seed, aggregation, title if e.plots else None)
        done("failure-mode audits")
        threshold = first_error.result.threshold or 0.5
        audits = _failure_audits(
            scorer, test, prm_scores, aggregation, threshold, min(64, per_problem), seed, out, e.plots
        )
        if beam_problems:
            done("beam search (verifier gaming)")
            beam = beam_on_world(
                scorer,
                out,
                beam_problems,
                beam_budgets,
                aggregation,
                seed,
                policy_config,
                world,
                e.plots,
                world_config,
            )
            _add_beam(audits, beam, e.plots)
        done("done")
    result = {
        "scorer": scorer.name,
        "data": data_summary(test, heldout, per_problem, heldout_per_problem, seed, world)
        | {"dev_problems": first_error.dev_problems},
        "first_error": first_error.result.to_dict(),
        "first_error_by_class": first_error.by_class,
        "agent_steps": first_error.agent_steps,
        "bon": {"params": bon.params, "rows": bon_summary(bon), "orm": orm.name if orm is not None else None},
        "audits": audits.summary,
        "beam_gaming": audits.beam,
        "files": _summary_files(audits.plots, e.plots),
    }
    with atomic_write(out / SUMMARY_FILE) as fh:
        json.dump(result, fh, indent=2)
    return result


def _first_errors(
    cached: CachedScorer, test: list[Trace], heldout: list[Trace], out: Path, draw: bool
) -> _FirstErrors:
    """First-error F1 (written to ``out``, with its histogram when ``draw``) and its breakdowns by error
    class and, for agent traces, by AgentProcessBench's metrics at the same threshold; this is the step
    that scores every trace."""
    result, dev_problems = first_error_on_world(cached, test, heldout)
    result.write(out, draw)
    by_class = first_error_by_class(result, test + heldout)
    agent_steps = agent_step_metrics(cached, test, heldout, dev_problems, result.threshold)
    return _FirstErrors(result, dev_problems, by_class, agent_steps)


def _best_of_n(
    test: list[Trace],
    prm_scores: list[list[float]],
    orm: StepScorer | None,
    out: Path,
    bootstrap: int,
    seed: int,
    aggregation: str,
    title: str | None,
) -> Any:
    """Best-of-N curves on the test pools (with the ORM's beside them when there is one), written as
    CSV, per-problem JSON and a plot titled ``title`` (None: no plot)."""
    orm_scores = orm.score(test) if orm is not None else None
    bon = bon_curves(
        test, prm_scores, orm_scores, bootstrap=bootstrap, seed=seed, vote_aggregation=aggregation
    )
    bon.write_csv(out / "bon.csv")
    bon.write_per_problem(out / "bon_per_problem.json")
    if title is not None:
        plots.bon_curves(bon.rows, out / "bon.png", title=title)
    return bon


def _failure_audits(
    scorer: StepScorer,
    test: list[Trace],
    prm_scores: list[list[float]],
    aggregation: str,
    threshold: float,
    pool: int,
    seed: int,
    out: Path,
    draw: bool,
) -> _Audits:
    """The failure-mode audits at the first-error threshold (their plots when ``draw``); an ORM's one
    score is spread over every step first, since the audits read step scores."""
    step_scores = broadcast_last(prm_scores) if scorer_kind(scorer) == "orm" else prm_scores
    report = audit_scores(
        test, step_scores, aggregation, threshold, pool, seed=seed, out_dir=out, scorer_name=scorer.name,
        draw=draw,
    )  # fmt: skip
    return _Audits(summary(report), report["plots"])


def _add_beam(audits: _Audits, beam: dict[str, Any], drawn: bool) -> None:
    """Fold the beam-search reading into the audits: its plot (when ``drawn``) and its gaming gap beside
    best-of-N's."""
    audits.beam = beam
    if drawn:
        audits.plots["beam"] = "audit_beam.png"
    audits.summary |= {
        "beam_gap_at_max_budget": beam["rows"][-1]["gap"],
        "beam_gap_growth": beam["gap_growth"],
    }


def _summary_files(audit_plots: dict[str, str], drawn: bool) -> dict[str, Any]:
    """The files evaluate_world wrote, by role, as the summary names them for the card; a plot that was
    not drawn (``plots: false``) is not named, so no card or report links it."""
    files = {
        "first_error": "processbench.json",
        "first_error_plot": "first_error_hist.png",
        "bon_csv": "bon.csv",
        "bon_plot": "bon.png",
        "audit": "audit.json",
        "audit_plots": audit_plots,
    }
    return files if drawn else {k: v for k, v in files.items() if k not in ("first_error_plot", "bon_plot")}


def evaluation_of(
    scorer: StepScorer,
    out_dir: str | Path,
    settings: WorldEvalSettings | None = None,
    *,
    refresh: bool = False,
    orm: StepScorer | None = None,
    policy_config: Any | None = None,
) -> dict[str, Any]:
    """The evaluation ``out_dir`` already holds (its ``eval_summary.json``), else, or with ``refresh``, a
    fresh :func:`evaluate_world`: a card written again does not measure again."""
    stored = Path(out_dir) / SUMMARY_FILE
    if stored.exists() and not refresh:
        return json.loads(stored.read_text(encoding="utf-8"))
    return evaluate_world(scorer, out_dir, settings, orm=orm, policy_config=policy_config)


def processbench_at_threshold(
    model: str | Path,
    files: Sequence[str | Path],
    evaluation: dict[str, Any],
    out_dir: str | Path,
    convention: str | None = None,
    load: Any | None = None,
) -> dict[str, Any]:
    """``evaluation`` with ProcessBench files scored by the checkpoint ``model`` at the threshold tuned on
    the world (``processbench``), or the one-line reason it could not be (``processbench_error``: e.g. a
    text longer than the model takes); the result is written back to ``out_dir``'s summary, which a card
    reads. ``load``: the checkpoint's :class:`~prmkit.modeling.loading.LoadOptions`."""
    from prmkit.evaluation.config import ProcessBenchConfig
    from prmkit.evaluation.processbench import run_processbench
    from prmkit.modeling.loading import LoadOptions

    spec = f"{convention}:{model}" if convention else str(model)
    try:
        config = ProcessBenchConfig(
            files=[Path(f) for f in files], model=spec, out=Path(out_dir) / "processbench_real",
            threshold=evaluation["first_error"]["threshold"], load=load or LoadOptions(),
        )  # fmt: skip
        measured = {"processbench": run_processbench(config).to_dict()}
    except ValueError as err:
        measured = {"processbench_error": str(err).splitlines()[0]}
    evaluation = {k: v for k, v in evaluation.items() if k not in ("processbench", "processbench_error")}
    evaluation |= measured
    with atomic_write(Path(out_dir) / SUMMARY_FILE) as fh:
        fh.write(json.dumps(evaluation, indent=2, default=str))
    return evaluation

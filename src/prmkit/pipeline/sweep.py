"""Seeds as a sweep: the whole recipe once per seed, then one table with means and 95 % intervals.

One seed's numbers are one draw: a labelling method that wins by 0.02 on seed 0 may lose on seed 1. A
recipe with ``seeds: [0, 1, 2]`` runs every stage once per seed (training problems and traces, labels,
every model's initialisation and data order; the evaluation data stays the same, so seeds differ only in
what was learned) into ``output_dir/seed-<s>/``, each with its own report and stage cache, and writes
``output_dir/report.md`` with every headline number as mean [95 % t-interval] over seeds.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.report import Report, Table, relpath
from prmkit.pipeline.runner import RunResult, log, run_once

SWEEP_FILE = "sweep.json"
BON_ROWS = {"majority": "majority vote", "orm": "ORM best-of-N", "oracle": "oracle (any right answer)"}
RL_METRICS = {"answer_accuracy": "answer accuracy", "process_correct": "process-correct", "lucky": "lucky"}
LOOPHOLE_METRICS = {
    "loophole_rewarded_rate": "loophole trajectories passed as error-free",
    "loophole_preference": "loophole preferred to an honest right trajectory",
    "loophole_pick_share": "best-of-N picks that use the loophole",
    "loophole_pool_share": "loophole trajectories in the pools",
}


def for_seed(recipe: Recipe, seed: int) -> Recipe:
    """The recipe of one seed: its own folder (and its own in each folder it reuses); the seed in problems,
    labels and every training config."""
    t = recipe.train
    train = t.model_copy(
        update={
            "pretrain": None if t.pretrain is None else t.pretrain.model_copy(update={"seed": seed}),
            "prm": t.prm.model_copy(update={"seed": seed}),
            "orm": None if t.orm is None else t.orm.model_copy(update={"seed": seed}),
        }
    )
    rl = None if recipe.rl is None else recipe.rl.model_copy(update={"seed": seed})
    return recipe.model_copy(
        update={
            "rl": rl,
            "seeds": [],
            "output_dir": recipe.output_dir / f"seed-{seed}",
            "reuse": [p for d in recipe.reuse for p in (d / f"seed-{seed}", d)],
            "problems": recipe.problems.model_copy(update={"seed": seed}),
            "labels": recipe.labels.model_copy(update={"seed": seed}),
            "train": train,
        }
    )


def interval(values: list[float]) -> tuple[float, float, float]:
    """(mean, low, high): the 95 % Student-t interval of the mean over seeds (a point with one seed);
    :func:`prmkit.core.stats.t_interval`."""
    from prmkit.core.stats import t_interval

    e = t_interval(values)
    return e.mean, e.low, e.high


def _cell(values: list[float]) -> str:
    if not values:
        return "–"
    mean, lo, hi = interval([100 * v for v in values])
    return f"{mean:.1f} [{lo:.1f}, {hi:.1f}]"


def collect(per_seed: dict[int, dict[str, dict[str, Any]]]) -> dict[str, dict[str, list[float]]]:
    """metric -> model -> one value per seed, from each seed's evaluation summaries."""
    from prmkit.pipeline.summary import _evals

    out: dict[str, dict[str, list[float]]] = {}

    def add(metric: str, model: str, value: float | None) -> None:
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            out.setdefault(metric, {}).setdefault(model, []).append(float(value))

    for results in per_seed.values():
        shared: set[tuple[str, str]] = (
            set()
        )  # a vote's or the oracle's value is the same whichever model: once a seed
        for model, r in _evals(results).items():
            s = r["summary"]
            for sub in s["first_error"]["subsets"]:
                add(f"first-error F1 {sub['name']}", model, sub["f1"])
            for subset, classes in (s.get("first_error_by_class") or {}).items():
                for c, m in classes.items():
                    add(f"first-error F1 {subset} {c}", model, m["f1"])
            for row in s["bon"]["rows"]:
                metric = f"best-of-{row['n']} accuracy"
                if row["method"] == "prm:min" or row["method"].startswith("weighted:"):
                    # best-of-N by the lowest step score, and the vote weighted by it (a row of its own)
                    name = model if row["method"] == "prm:min" else f"{model} weighted vote"
                    add(metric, name, row["accuracy"])
                    add(f"best-of-{row['n']} gain over majority vote", name, row.get("gap_vs_majority"))
                elif row["method"] in ("majority", "orm", "oracle") and (metric, row["method"]) not in shared:
                    shared.add((metric, row["method"]))
                    add(metric, BON_ROWS[row["method"]], row["accuracy"])
            # process-to-outcome shift: the audit's share of best-of-N picks whose lowest step is the last
            add(
                "final-step minimum share of best-of-N picks",
                model,
                (s.get("audits") or {}).get("outcome_shift_share"),
            )
            for dataset, m in (s.get("agent_steps") or {}).items():
                if dataset != "AVG":
                    for key, value in m.items():
                        add(f"AgentProcessBench {key} {dataset}", model, value)
            for key, name in LOOPHOLE_METRICS.items():  # only where gold marks loophole steps (agent world)
                add(name, model, (s.get("audits") or {}).get(key))
        for name, r in results.items():  # RL runs: the policy at its last monitor point, and its change
            if name.startswith("rl-"):
                first, last = r["summary"]["first"], r["summary"]["last"]
                for key, label in RL_METRICS.items():
                    add(f"RL {label} (last)", name, last.get(key))
                    if key in first and key in last:
                        add(f"RL {label} change from π0", name, last[key] - first[key])
        if "label_report" in results:
            for source, m in results["label_report"]["summary"]["sources"].items():
                add("label first-error accuracy (training traces)", source, m["first_error"]["accuracy"])
                add("label step-error F1 (training traces)", source, (m.get("step_error") or {}).get("f1"))
    return out


STUDY_FILE = "study.json"
STUDY_SETS = {"eval": "tuning", "claims": "claims"}
"""Stage prefix -> evaluation set: ``eval-`` stages measure on ``evaluate.seed`` (the tuning set),
``claims-`` stages on ``evaluate.claims_seed`` (the claims set)."""


def _eval_folder(stage: dict[str, Any], prefix: str) -> Path:
    """Where a stage's evaluation files are: the folder it declares (``eval/``, or ``claims/``)."""
    return Path(stage["outputs"][0])


def machine() -> dict[str, str]:
    """The CPU a study ran on, as far as it moves the numbers: its model name and the kernels torch
    picked for it (``AVX512``, ``AVX2``, ...). The same recipe gives the same numbers on a loaded
    machine but other trained floats on another CPU type, so a study file says where it was made."""
    import platform

    import torch

    name = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        lines = cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines()
        name = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")), name)
    return {"cpu": name, "torch_cpu_capability": torch.backends.cpu.get_cpu_capability()}


def study(
    recipe: Recipe, per_seed: dict[int, dict[str, dict[str, Any]]], resamples: int = 2000
) -> dict[str, Any]:
    """Intervals over seeds × evaluation problems (:mod:`prmkit.evaluation.study`) for each evaluation
    set the recipe measured on: every model's first-error F1 and AUROC, best-of-N, and each PRM against
    the zero-shot LM, the ORM and majority vote, paired, and the pairs of ``evaluate.compare``."""
    from prmkit.evaluation.study import Measured, summarize
    from prmkit.pipeline.summary import _name

    out: dict[str, Any] = {"recipe": recipe.name, "seeds": list(per_seed), "machine": machine()}
    for prefix, set_name in STUDY_SETS.items():
        folders = [
            {_name(name.split("-", 1)[1]): _eval_folder(st, prefix)
             for name, st in results.items() if name.startswith(prefix + "-") and "dir" in st}
            for results in per_seed.values()
        ]  # fmt: skip
        if not folders or not all(
            (f / "predictions.jsonl").exists() for run in folders for f in run.values()
        ):
            continue  # an evaluation without its per-trace files (one from before they were written)
        runs = [{m: Measured.read(f) for m, f in run.items()} for run in folders]
        if not runs or not runs[0]:
            continue
        lm = next((m for m in runs[0] if m == _name("pretrain")), None)
        outcome = ["orm"] if recipe.train.orm is not None else []  # the ORM's stage and model name
        prms = [m for m in runs[0] if m not in (lm, *outcome)]
        # each PRM against the zero-shot LM (what its labels bought) and against the ORM (what steps buy)
        pairs = [(m, lm) for m in prms if lm] + [(m, o) for o in outcome if o in runs[0] for m in prms]
        # and the recipe's own comparisons (a filter against the labels it filtered...)
        compare = [(a, b) for a, b in recipe.evaluate.compare if a in runs[0] and b in runs[0]]
        seed = recipe.evaluate.seed if prefix == "eval" else recipe.evaluate.claims_seed
        out[set_name] = {"evaluate_seed": seed} | summarize(
            runs, pairs=pairs, outcome_models=outcome, resamples=resamples, compare=compare
        )
    return out


def sweep_report(recipe: Recipe, per_seed: dict[int, dict[str, dict[str, Any]]], out: Path) -> Report:
    """One table per metric family: models as rows, metrics as columns, mean [95 % interval] in %."""
    data = collect(per_seed)
    (out / SWEEP_FILE).write_text(json.dumps({"seeds": list(per_seed), "metrics": data}, indent=2))
    numbers = study(recipe, per_seed)
    (out / STUDY_FILE).write_text(json.dumps(numbers, indent=2))
    report = Report(f"prmkit run: {recipe.name} ({len(per_seed)} seeds)")
    _study_sections(report, numbers)
    head = report.section("What this sweep shows")
    head.text.append(
        f"The recipe ran once per seed ({', '.join(map(str, per_seed))}): training problems, traces, labels and "
        "every model's initialisation and data order change with the seed; the evaluation data does not. Cells "
        "are the mean over seeds with the 95 % t-interval of the mean, in %. Each seed's own report: "
        + ", ".join(relpath(out / f"seed-{s}" / "report.md", out) for s in per_seed)
        + "."
    )
    families = (
        ("First-error F1", lambda m: m.startswith("first-error F1") and m.count(" ") == 2),
        ("First-error F1 by error class", lambda m: m.startswith("first-error F1") and m.count(" ") == 3),
        ("Best-of-N accuracy", lambda m: m.startswith("best-of-") and m.endswith("accuracy")),
        (
            "Best-of-N gain over majority vote (paired within each seed)",
            lambda m: m.endswith("majority vote"),
        ),
        ("Loophole audit", lambda m: m in LOOPHOLE_METRICS.values()),
        ("Agent steps: AgentProcessBench's metrics", lambda m: m.startswith("AgentProcessBench ")),
        ("RL against the PRM", lambda m: m.startswith("RL ")),
        ("Process-to-outcome shift", lambda m: m.startswith("final-step")),
        ("Labels against gold", lambda m: m.startswith("label ")),
    )
    for title, wanted in families:
        metrics = [m for m in data if wanted(m)]
        if not metrics:
            continue
        models = list(dict.fromkeys(model for m in metrics for model in data[m]))
        rows = [{"model": model, **{m: _cell(data[m].get(model, [])) for m in metrics}} for model in models]
        section = report.section(title)
        section.tables.append(Table(rows))
        if title.startswith("First-error F1"):
            png = out / ("sweep_first_error_by_class.png" if "class" in title else "sweep_first_error.png")
            _plot(data, metrics, png, title)
            section.images.append((png.name, f"{title}: mean over seeds, 95 % interval"))
    return report


BON_TABLES = {
    "bon": "Best-of-N accuracy (single-run range)",
    "bon_honest": "Honest best-of-N accuracy: a pick that games the task counts as wrong (single-run range)",
}
"""The best-of-N tables of a study's evaluation set, by their key in ``study.json``."""


def _study_sections(report: Report, numbers: dict[str, Any]) -> None:
    """The headline tables: intervals over seeds × problems, the range of single runs, the draws."""
    from prmkit.evaluation.study import with_range

    for set_name in STUDY_SETS.values():
        if set_name not in numbers:
            continue
        s = numbers[set_name]
        section = report.section(
            f"Intervals over seeds and problems: the {set_name} set (evaluate seed {s['evaluate_seed']})"
        )
        first = next(iter(s["first_error"].values()))
        some = next(iter(first.values()))
        section.text.append(
            f"Mean [95 % interval] in %, the interval from a crossed cluster bootstrap ({s['resamples']} resamples) "
            f"over {some['draws']['seed']} seeds (training runs) and {some['draws']['problem']} evaluation problems "
            "drawn together; *single run*: the lowest and highest seed, the range one run falls in. "
            + s["multiplicity"]
        )
        rows = [
            {"model": m, **{k: with_range(e) for k, e in metrics.items()}}
            for m, metrics in s["first_error"].items()
        ]
        section.tables.append(Table(rows, "First-error F1 and step AUROC (single-run range)"))
        for key, title in BON_TABLES.items():  # honest: only where a world has loopholes (study.bon_honest)
            if s.get(key):
                bon = [
                    {"method": name, **{k: with_range(e) for k, e in by_n.items()}}
                    for name, by_n in s[key].items()
                ]
                section.tables.append(Table(bon, title))
        if s["paired"]:
            section.tables.append(
                Table([{"comparison": k, "difference": e["cell"]} for k, e in s["paired"].items()],
                      "Paired differences (same seeds, same problems)")
            )  # fmt: skip


def _plot(data: dict[str, dict[str, list[float]]], metrics: list[str], png: Path, title: str) -> None:
    from prmkit.evaluation.plots import interval_bars

    groups = {
        m.removeprefix("first-error F1 ").replace("world-", ""): {
            model: interval([100 * v for v in values]) for model, values in data[m].items()
        }
        for m in metrics
    }
    seeds = max(len(v) for m in metrics for v in data[m].values())
    interval_bars(groups, png, f"{title} ({seeds} seeds)", "F1 (%)")


def run_sweep(recipe: Recipe, source: str | None, jobs: int = 1) -> RunResult:
    """Run ``recipe`` once per seed (``jobs`` stages at a time), then write the sweep report (its
    RunResult: every seed's stages)."""
    from prmkit.core.ranks import is_main_process
    from prmkit.pipeline.report import write_report

    out = recipe.output_dir
    out.mkdir(parents=True, exist_ok=True)
    per_seed = {}
    for i, seed in enumerate(recipe.seeds, start=1):
        log(f"[bold]seed {seed}[/bold] ({i} of {len(recipe.seeds)})")
        per_seed[seed] = run_once(for_seed(recipe, seed), source, jobs).stages
    md, page = out / "report.md", out / "report.html"
    if is_main_process():  # under a launch, one process writes the report
        md, page = write_report(sweep_report(recipe, per_seed, out), out)
        log(f"sweep report: {page}")
    return RunResult(out, md, page, {f"seed-{s}/{k}": v for s, st in per_seed.items() for k, v in st.items()})

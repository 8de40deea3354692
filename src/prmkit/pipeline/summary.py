"""Build the run report from the stage summaries: headline tables, plots, cards, time, commands."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prmkit.cards import training_warnings
from prmkit.core.results import percent
from prmkit.pipeline.recipe import LM, Recipe
from prmkit.pipeline.report import Report, Section, Table, relpath
from prmkit.worlds.registry import world

if TYPE_CHECKING:
    from prmkit.worlds.registry import World

BON_NS = (1, 4, 16, 64)
BON_METHODS = ("prm:min", "prm:prod", "weighted:min", "orm", "majority", "oracle")
BON_NAMES = {
    "prm:min": "PRM best-of-N (min step score)",
    "prm:prod": "PRM best-of-N (product of step scores)",
    "weighted:min": "PRM-weighted majority vote",
    "orm": "ORM best-of-N",
    "majority": "majority vote",
    "oracle": "oracle (any right answer among N)",
}
# The audits' headline numbers (evaluation.audits.summary) under plain column names, with a legend line.
AUDIT_COLUMNS = {
    "gaming_gap_at_max_n": ("gaming gap", "picked traces' score minus their gold validity at the largest N"),
    "gaming_gap_growth": ("gap growth", "how much that gap grew from N = 1 (growth = the verifier is gamed)"),
    "beam_gap_at_max_budget": ("beam gaming gap", "the same gap for PRM-guided beam search, largest budget"),
    "outcome_shift_share": (
        "final-step minimum",
        "share of picks whose lowest step score is the last step "
        "(process-to-outcome shift; 0.42–0.55 for open MC-trained PRMs)",
    ),
    "process_fidelity": (
        "process fidelity",
        "AUC of step scores for gold step validity against the outcome "
        "(1 = follows the steps, 0 = follows the answer)",
    ),
    "collapse_verdict": ("verdict", "process / collapsed / undecided from the bootstrap band of fidelity"),
    "lucky_share": ("lucky answers", "share of right answers reached by a wrong process"),
    "lucky_catch_rate": ("lucky caught", "share of those the model flags (a step under its threshold)"),
    "ece_local": ("ECE step", "calibration error against each step's own validity"),
    "ece_prefix": (
        "ECE prefix",
        "calibration error against 'no error so far' (a likelihood head's scores "
        "are token probabilities, not calibrated chances: read its ECE as a ranking check only)",
    ),
    "length_slope_valid_only": (
        "length slope",
        "change of the trace score per extra step on error-free traces (a length bias when far from 0)",
    ),
    "loophole_rewarded_rate": (
        "loophole paid",
        "share of trajectories that game the task (a loophole step) the model passes as error-free",
    ),
    "loophole_preference": (
        "loophole preferred",
        "chance a loophole trajectory outranks an honest right one of the same problem (0.5 = indifferent)",
    ),
    "loophole_pick_share": (
        "loophole picks",
        "share of best-of-N picks that use the loophole (compare with their share of the pools)",
    ),
}
AUDIT_PLOTS = {
    "collapse": "process-collapse audit: step scores against gold step validity and the outcome",
    "gaming": "verifier-gaming audit: score vs gold validity of best-of-N picks as N grows",
}


def _name(stage: str) -> str:
    return LM if stage == "pretrain" else stage


def _evals(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {_name(name[5:]): r for name, r in results.items() if name.startswith("eval-")}


def _class_rows(evals: dict[str, dict[str, Any]], classes: Sequence[str]) -> list[dict[str, Any]]:
    rows = []
    for model, r in evals.items():
        by = r["summary"].get("first_error_by_class") or {}
        row: dict[str, Any] = {"model": model}
        for subset, found in by.items():
            for c in classes:
                if c in found:
                    row[f"{subset} {c}"] = percent(found[c]["f1"])
        if len(row) > 1:
            rows.append(row)
    return rows


def _gold_lines(trained: dict[str, dict[str, Any]]) -> list[str]:
    """One line per model: every way gold labels reached it, as its training recorded (process card)."""
    from prmkit.cards.process_card import GoldUse

    lines = []
    for name, s in trained.items():
        uses = [GoldUse.model_validate(g).line() for g in s.get("gold_use") or []]
        lines.append(f"{_name(name)}: " + ("; ".join(uses) if uses else "no gold labels") + ".")
    return lines


FIRST_ERROR_LEGEND = (
    "F1: ProcessBench's first-error F1, the harmonic mean of *errors located* (share of traces with an "
    "error whose first wrong step the model names exactly) and *correct passed* (share of error-free traces "
    "it calls error-free). Threshold: the step score under which a step counts as wrong, tuned on world dev. "
    "AUROC (threshold-free: the gold first-error step ranked against the right steps before it) and F1 "
    "own-best (F1 at that subset's own best threshold) sit beside each F1: a gap between F1 and F1 own-best "
    "is a threshold that did not transfer, not worse verification."
)


def _first_error_rows(evals: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for model, r in evals.items():
        fe = r["summary"]["first_error"]
        row: dict[str, Any] = {"model": model, "threshold": fe.get("threshold")}
        for sub in fe["subsets"]:
            row[f"F1 {sub['name']}"] = percent(sub["f1"])
            row[f"AUROC {sub['name']}"] = percent(sub.get("auroc"))
            row[f"F1 own-best {sub['name']}"] = percent(sub.get("f1_own_best"))
            row[f"errors located {sub['name']}"] = percent(sub.get("acc_error"))
            row[f"correct passed {sub['name']}"] = percent(sub.get("acc_correct"))
        row["F1 (mean of subsets)"] = percent(fe.get("f1"))
        rows.append(row)
    return rows


BON_CELLS = {"accuracy": ("accuracy", "lo", "hi"), "honest": ("honest_accuracy", "honest_lo", "honest_hi")}
"""The value and band a best-of-N table reads from each row: its accuracy, or its honest accuracy (a
pick that games the task counts as wrong), which rows carry only where a world has loopholes."""
HONEST_LEGEND = (
    "Honest accuracy: the same picks and resampled problems as accuracy, but a pick that games the task "
    "(a trace with a step gold marks as a loophole; traces in the test pools that do: {gaming}) counts as "
    "wrong, and a vote counts only when a trace that does not game gave its answer."
)


def _bon_rows(summary: dict[str, Any], reading: str = "accuracy") -> list[dict[str, Any]]:
    """One row per method of :data:`BON_METHODS` the evaluation measured, at each N of :data:`BON_NS`:
    ``reading`` (a key of :data:`BON_CELLS`) with its band."""
    mean, lo, hi = BON_CELLS[reading]
    by = {(row["method"], row["n"]): row for row in summary["bon"]["rows"]}
    rows = []
    for method in BON_METHODS:
        if not any(m == method for m, _ in by):
            continue
        row: dict[str, Any] = {"method": BON_NAMES.get(method, method)}
        for n in BON_NS:
            cell = by.get((method, n))
            row[f"N={n}"] = (
                "–" if cell is None else f"{percent(cell[mean])} [{percent(cell[lo])}, {percent(cell[hi])}]"
            )
        rows.append(row)
    return rows


def _label_rows(report: dict[str, Any], results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for source, m in report["sources"].items():
        kept = m.get("data_kept")
        if source == "consensus" and "consensus" in results:
            c = results["consensus"]["summary"]
            kept = c.get("kept_fraction", kept)
        rows.append({
            "source": source,
            "step-error F1": percent(m["step_error"]["f1"]),
            "first-error accuracy": percent(m["first_error"]["accuracy"]),
            "ProcessBench F1": percent(m["first_error"]["processbench_f1"]),
            "traces scored": f"{m['first_error']['traces']:,}",
            "data kept": percent(kept),
            "rollouts / trace": m.get("rollouts_per_trace"),
        })  # fmt: skip
    return rows


def _audit_rows(evals: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for model, r in evals.items():
        a = r["summary"].get("audits") or {}
        rows.append({"model": model, **{name: a.get(key) for key, (name, _) in AUDIT_COLUMNS.items()}})
    return rows


RL_LEGEND = (
    "One GRPO run per reward from π0 (the pretrained LM), same budget each; measured every few steps on fresh "
    "held-out problems against gold. *answer*: right final answers; *process-correct*: right answer and no "
    "wrong step; *lucky*: right answer after a wrong step; *PRM reward*: the monitor PRM's mean aggregate (the "
    "proxy every run is read on). A process reward should raise process-correct more than the outcome "
    "reward does and lower lucky answers; a PRM reward that rises while process-correct falls is reward hacking."
)
RL_ELSEWHERE = (
    "Not run by this recipe (it has no `rl:` section; the experiment does not fit a 15-minute demo). The RL "
    "experiment on this world is `recipes/rl.yaml`: five rewards (outcome, PRM aggregate, dense step rewards, "
    "outcome + process, gold process) x 3 seeds from one π0, plus cells that try to make it hack, run by "
    "`prmkit run recipes/rl.yaml`; its last results are in "
    'docs/rl.md ("The experiment").'
)
RL_COLUMNS = {"answer": "answer_accuracy", "process-correct": "process_correct", "lucky": "lucky",
              "PRM reward": "prm_reward"}  # fmt: skip


def _rl_rows(runs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for reward, r in runs.items():
        s = r["summary"]
        row: dict[str, Any] = {"reward": reward, "steps": s["steps"]}
        for name, key in RL_COLUMNS.items():
            first, last = s["first"].get(key), s["last"].get(key)
            row[name] = "–" if first is None or last is None else f"{percent(first)} → {percent(last)}"
        row["hacking warnings"] = len(s["warnings"])
        rows.append(row)
    return rows


AGENT_LEGEND = (
    "AgentProcessBench's own metrics on the same traces and threshold: *step_micro_acc*, the share of gold "
    "step labels (+1 / 0 / -1) the model's verdicts match (a binary verdict never matches a neutral 0), and "
    "*firsterroracc*, the share of trajectories whose first -1 (or none) the model names exactly."
)


def _agent_rows(evals: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for model, r in evals.items():
        agent = r["summary"].get("agent_steps")
        if agent:
            row: dict[str, Any] = {"model": model}
            for dataset, m in agent.items():
                if dataset != "AVG":
                    row |= {f"{k} {dataset}": percent(v) for k, v in m.items()}
            rows.append(row)
    return rows


def _trained(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The training stages' summaries (pretraining, PRMs, ORM): those that record a training run."""
    return {name: r["summary"] for name, r in results.items() if "training" in r.get("summary", {})}


def _training_rows(trained: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for name, s in trained.items():
        t, start = s["training"], (s.get("dev_at_start") or {}).get("eval_first_error_f1")
        best = (s.get("dev") or {}).get("eval_first_error_f1")
        rows.append({
            "model": _name(name),
            "optimiser steps (taken / planned)": f"{t['steps']:,} / {t['planned_steps']:,}",
            "stopped by": t["stopped_by"],
            "torch threads": t["threads"],
            "dev first-error F1 (step 0 → best)": "–" if best is None else f"{percent(start)} → {percent(best)}",
            "wall minutes": round(t["wall_seconds"] / 60, 1),
        })  # fmt: skip
        copy, rounds = s.get("copy") or {}, t.get("copy_rounds") or []
        if copy.get("numbers"):  # an LM pretrained on agent trajectories: does it copy tool results?
            extra = f" after {len(rounds)} extra round{'s' * (len(rounds) > 1)}" if rounds else ""
            rows[-1]["tool values copied (dev)"] = (
                f"{percent(copy['copy_rate'])} % of {copy['numbers']:,}{extra}"
            )
    return rows


def _warnings(trained: dict[str, dict[str, Any]]) -> list[str]:
    return [
        f"**Warning ({name}):** {w}."
        for name, s in trained.items()
        for w in training_warnings(
            {**s["training"], "overlong": s.get("overlong")},
            {"dev": s.get("dev"), "dev_at_start": s.get("dev_at_start")},
        )
    ]


def build_report(recipe: Recipe, results: dict[str, dict[str, Any]], out: Path, source: str | None) -> Report:
    """The run report, one section per helper in reading order; a helper returns None for a section
    the run has nothing to show in (no evaluations, no trained models...)."""
    report = Report(f"prmkit run: {recipe.name}")
    evals = _evals(results)
    trained = _trained(results)
    sections = [
        _warnings_section(trained),
        _headline_section(recipe, evals, out),
        _labels_section(results, out),
        _audits_section(evals, out),
        _cards_section(results, out),
        _training_section(trained),
        _gold_section(trained),
        _rl_section(recipe, results, out),
        _timing_section(results),
        _reproduce_section(out, source),
    ]
    report.sections.extend(sec for sec in sections if sec is not None)
    return report


def _warnings_section(trained: dict[str, dict[str, Any]]) -> Section | None:
    """First, so a model that did not train as planned is seen before its numbers are read."""
    warnings = _warnings(trained)
    return Section("Warnings", text=warnings) if warnings else None


def _headline_section(recipe: Recipe, evals: dict[str, dict[str, Any]], out: Path) -> Section:
    """What the run was (data, labels, backbones) and, when models were evaluated, its headline tables."""

    head = Section("What this run shows")
    name = recipe.problems.world_name
    w = world(recipe.evaluate.world)  # a file's traces are measured on the world evaluate names
    where = f"the embedded world `{name}`" if name else f"`{recipe.problems.source}`"
    backbone = (
        "one shared pretrained tiny backbone" if recipe.train.pretrain else "the backbones the recipe names"
    )
    head.text.append(
        f"Problems and traces from {where}, step labels from {', '.join(recipe.labels.methods) or 'the data'}, "
        f"PRMs and an ORM trained on {backbone}, all measured on fresh world data with gold labels. "
        "Brackets are 95 % bootstrap bands over problems."
    )
    if evals:
        _add_first_error(head, evals, w)
        _add_best_of_n(head, evals, out)
    return head


def _add_first_error(head: Section, evals: dict[str, dict[str, Any]], w: World) -> None:
    """First-error tables with their legends: overall, by error class and (for agent traces) by
    AgentProcessBench's own metrics, the last two only when some evaluation measured them."""
    head.tables.append(Table(_first_error_rows(evals), "First-error prediction on fresh world data (%)"))
    head.text.append(FIRST_ERROR_LEGEND)
    if any(r["summary"].get("first_error_by_class") for r in evals.values()):
        head.tables.append(Table(_class_rows(evals, w.error_classes), "First-error F1 by error class (%)"))
        head.text.append(w.class_legend)
    agent_rows = _agent_rows(evals)
    if agent_rows:
        head.tables.append(Table(agent_rows, "Agent steps: AgentProcessBench's metrics (%)"))
        head.text.append(AGENT_LEGEND)


def _add_best_of_n(head: Section, evals: dict[str, dict[str, Any]], out: Path) -> None:
    """Best-of-N for one model only (a table per model would bury the headline): the first that is not
    the zero-shot LM, or the LM when it is all there is."""
    main = next((m for m in evals if m != LM), next(iter(evals)))
    summary = evals[main]["summary"]
    head.tables.append(Table(_bon_rows(summary), f"Best-of-N accuracy (%) with {main}, [95 % band]"))
    gaming = (summary["bon"].get("params") or {}).get("gaming_traces")
    if gaming:  # recorded only where a pool holds a trace that games the task (evaluation.bon_curves)
        title = f"Honest best-of-N accuracy (%) with {main}: a pick that games the task counts as wrong"
        head.tables.append(Table(_bon_rows(summary, "honest"), title + ", [95 % band]"))
        head.text.append(HONEST_LEGEND.format(gaming=gaming))
    folder = Path(evals[main]["outputs"][0])
    _add_plot(head, folder, summary["files"].get("bon_plot"), out, f"Best-of-N curves, {main}")


def _labels_section(results: dict[str, dict[str, Any]], out: Path) -> Section | None:
    """How good the automated labels were against gold, when the run scored them (``label_report``)."""
    if "label_report" not in results:
        return None
    sec = Section("Labels against gold")
    lr = results["label_report"]["summary"]
    sec.tables.append(
        Table(_label_rows(lr, results), "Automated labels scored against gold on the training traces (%)")
    )
    sec.text.append(
        "Each source is scored on the traces it labelled: every sampled trace for Monte Carlo, binary "
        "search and the judge; for consensus only the traces where MC and judge agreed (its data kept)."
    )
    sec.images.append(
        (relpath(Path(results["label_report"]["dir"]) / "label_quality.png", out), "Label quality")
    )
    return sec


def _audits_section(evals: dict[str, dict[str, Any]], out: Path) -> Section | None:
    """The failure-mode audits of every evaluated model, with the legend of their plain column names."""
    if not evals:
        return None
    sec = Section("Failure-mode audits")
    sec.text.append("What each column means (every card has the plots):")
    sec.text += [f"{name}: {meaning}." for name, meaning in AUDIT_COLUMNS.values()]
    sec.tables.append(Table(_audit_rows(evals)))
    for model, r in evals.items():
        plots = r["summary"]["files"].get("audit_plots", {})
        for name, caption in AUDIT_PLOTS.items():
            _add_plot(sec, Path(r["outputs"][0]), plots.get(name), out, f"{model}: {caption}")
    return sec


def _add_plot(sec: Section, folder: Path, name: str | None, out: Path, caption: str) -> None:
    """Link an evaluation's plot ``name`` in ``folder``, unless it was not drawn (``evaluate.plots:
    false`` names none) or is not there: the report links no missing image."""
    if name is not None and (folder / name).is_file():
        sec.images.append((relpath(folder / name, out), caption))


def _cards_section(results: dict[str, dict[str, Any]], out: Path) -> Section | None:
    """Where each evaluated model's process card is, for the details this report leaves out."""
    cards = {_name(n.removeprefix("card-")): r for n, r in results.items() if n.startswith("card-")}
    if not cards:
        return None
    sec = Section("Process cards")
    for model, r in cards.items():
        sec.text.append(
            f"{model}: {relpath(Path(r['outputs'][0]) / 'README.md', out)} (and process_card.json)"
        )
    return sec


def _training_section(trained: dict[str, dict[str, Any]]) -> Section | None:
    """What each training run actually did, since a budget cap can stop one short of its plan."""
    if not trained:
        return None
    sec = Section("Training: what each model actually did")
    sec.text.append(
        "Budgets are optimiser steps, so the same recipe and seed give the same models on any machine; a "
        "model that stopped before its planned steps (a max_minutes cap) is named in the warnings above."
    )
    sec.tables.append(Table(_training_rows(trained)))
    return sec


def _gold_section(trained: dict[str, dict[str, Any]]) -> Section | None:
    """Every way gold labels reached a trained model, so no gold use beyond evaluation goes unstated."""
    if not trained:
        return None
    gold = Section("Where gold labels were used")
    gold.text.append(
        "Gold is for evaluation. Each model's process card (`gold_use`) records every other way gold reached "
        "it, from what its training read: a pretraining corpus filtered on gold, gold training labels, or a "
        "dev set with gold labels that chose its checkpoint and threshold (like a small hand-labelled dev "
        "set). Every model's test and held-out numbers are measured against gold, with the threshold tuned "
        "on a third of the test problems."
    )
    gold.text.extend(_gold_lines(trained))
    return gold


def _rl_section(recipe: Recipe, results: dict[str, dict[str, Any]], out: Path) -> Section | None:
    """The RL runs against the PRM; on a world RL runs on, without them, where the RL experiment is."""
    runs = {name.removeprefix("rl-"): r for name, r in results.items() if name.startswith("rl-")}
    if not runs:
        if recipe.problems.world_name and world(recipe.problems.world_name).rl:
            return Section("RL against the PRM", text=[RL_ELSEWHERE])
        return None
    sec = Section("RL against the PRM")
    sec.text.append(RL_LEGEND)
    sec.tables.append(Table(_rl_rows(runs), "The policy at its first and last monitor point (%)"))
    sec.text += [
        f"**Warning (rl-{reward}):** {w}" for reward, r in runs.items() for w in r["summary"]["warnings"]
    ]
    for reward, r in runs.items():
        png = Path(r["dir"]) / "policy" / "monitors.png"
        sec.images.append((relpath(png, out), f"rl-{reward}: monitors over training"))
    return sec


def _timing_section(results: dict[str, dict[str, Any]]) -> Section:
    """Each stage's time, cached stages included, so the cost of a fresh run can be read off."""
    timing = Section("Where the time went")
    reused = any(r.get("reused") for r in results.values())  # taken from another run's folder (--reuse)
    timing.tables.append(Table([
        {"stage": name, "seconds": round(r.get("seconds", 0.0), 1), "cached this run": r["cached"],
         **({"reused from": r["dir"] if r.get("reused") else ""} if reused else {})}
        for name, r in results.items()
    ]))  # fmt: skip
    total = sum(r.get("seconds", 0.0) for r in results.values())
    timing.text.append(
        f"Total compute of all stages: {total / 60:.1f} minutes (cached stages count the time they took when run)."
    )
    return timing


def _reproduce_section(out: Path, source: str | None) -> Section:
    """The command that reruns the run and where its resolved settings are."""
    repro = Section("Reproduce")
    repro.commands.append(
        f"prmkit run {source or 'RECIPE.yaml'}   # reruns only stages whose settings changed"
    )
    repro.text.append(
        f"Resolved settings: {relpath(out / 'recipe.resolved.json', out)}; each stage folder holds its own config and summary."
    )
    return repro

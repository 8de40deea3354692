"""Label budgets (issue 39): what 0.1 / 1 / 10 / 100 % of the labelled traces buy, per source and head.

Reads a finished ``prmkit run recipes/label-budget.yaml`` sweep (its ``study.json``: first-error F1 and
AUROC per model with intervals over seeds × problems; ``sweep.json``: per-seed F1 by error class) and
writes the small results file the docs read (``--out``, default docs/results/label-budget.json), the
plot (``--plot``, default docs/img/label-budget.png) and prints the tables. PRM stages are named
``prm-<source>-<head>-<budget>pct``; the zero-shot LM is the reference row.

``python experiments/label_budget.py runs/label-budget`` (after the sweep);
``python experiments/label_budget.py --render docs/labeling.md`` re-renders the docs table from the file.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from prmkit.core.results import MISSING, Table, estimate_cell, runs_cell

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"^prm-(?P<source>.+)-(?P<head>likelihood|classifier)-(?P<budget>[0-9.]+)pct$")
METRICS = ("F1 world-heldout", "AUROC world-heldout", "F1 world-test", "AUROC world-test")
CLASSES = ("misconception", "slip", "other")
REFERENCE = "lm (zero-shot)"
"""The row with no step labels at all: the backbone read as a verifier (every budget's starting point)."""
VS_LM = "− zero-shot LM (paired)"
"""A row's key for its differences from :data:`REFERENCE` on the same seeds and problems."""
BLOCK = re.compile(
    r"(?s)(<!-- label-budget: (?P<file>\S+) set=(?P<set>\w+) -->\n).*?(<!-- /label-budget -->)"
)


def collect(study: dict[str, Any], sweep: dict[str, Any]) -> dict[str, Any]:
    """The compact results: per evaluation set, source, head and budget the estimates of METRICS and
    their differences from the zero-shot LM (paired: the same seeds and problems), and the per-seed test
    and held-out F1 by error class (from ``sweep.json``, tuning set)."""
    out: dict[str, Any] = {"seeds": study["seeds"], "sets": {}}
    for set_name in ("tuning", "claims"):
        if set_name not in study:
            continue
        s = study[set_name]
        rows: dict[str, Any] = {}
        for model, metrics in s["first_error"].items():
            m = NAME.match(model)
            key = f"{m['source']}/{m['head']}/{m['budget']}" if m else model
            rows[key] = {k: metrics[k] for k in METRICS if k in metrics}
            against = {k: s.get("paired", {}).get(f"{model} − {REFERENCE}: {k}") for k in METRICS}
            if any(against.values()):
                rows[key][VS_LM] = {k: e for k, e in against.items() if e}
        out["sets"][set_name] = {
            "evaluate_seed": s["evaluate_seed"],
            "rows": rows,
            "multiplicity": s["multiplicity"],
        }
    by_class: dict[str, Any] = {}
    for metric, models in sweep["metrics"].items():
        parts = metric.split(" ")
        if metric.startswith("first-error F1 world-") and len(parts) == 4 and parts[-1] in CLASSES:
            split = parts[2].removeprefix("world-")
            for model, values in models.items():
                m = NAME.match(model)
                key = f"{m['source']}/{m['head']}/{m['budget']}" if m else model
                by_class.setdefault(split, {}).setdefault(key, {})[parts[-1]] = values
    out["by_class_tuning_f1_per_seed"] = by_class
    return out


def curves(
    result: dict[str, Any], set_name: str, metric: str, paired: bool = False
) -> dict[tuple[str, str], dict[float, Any]]:
    """(source, head) -> budget (in %) -> estimate of ``metric`` (``paired``: of its difference from the
    zero-shot LM)."""
    out: dict[tuple[str, str], dict[float, Any]] = {}
    for key, row in result["sets"][set_name]["rows"].items():
        metrics = row.get(VS_LM, {}) if paired else row
        if key.count("/") == 2 and metric in metrics:
            source, head, budget = key.split("/")
            out.setdefault((source, head), {})[float(budget)] = metrics[metric]
    return {k: dict(sorted(v.items())) for k, v in out.items()}


def reaches(points: dict[float, Any], share: float = 0.9, floor: float = 0.0) -> float | None:
    """The smallest budget whose mean reaches ``share`` of the full-data (100 %) mean above ``floor`` (0
    for F1; 0.5, chance, for AUROC, so a head is not credited with the half any ranking gets), or None."""
    if 100.0 not in points:
        return None
    goal = floor + share * (points[100.0]["mean"] - floor)
    return next((b for b, e in points.items() if e["mean"] >= goal), None)


FLOORS = {"F1": 0.0, "AUROC": 0.5}
"""What a metric's "90 % of full data" is measured above: nothing for F1, chance for AUROC."""


def table(result: dict[str, Any], set_name: str) -> str:
    """Held-out first-error F1 and AUROC per source and head at every budget, the zero-shot LM's (no labels)
    beside them, the budget at which each reaches 90 % of its full-data value, and each AUROC's paired
    difference from the zero-shot LM's."""
    from prmkit.core.stats import multiplicity

    s = result["sets"][set_name]
    parts, intervals = [], 0
    for metric in ("F1 world-heldout", "AUROC world-heldout"):
        points_of = curves(result, set_name, metric)
        budgets = sorted({b for points in points_of.values() for b in points})
        short = metric.split()[0]
        columns = ["source", "head", *(f"{short} at {b:g} %" for b in budgets)]
        columns.append("90 % of 100 % at" if short == "F1" else "90 % of 100 % above chance at")
        rows = []
        for (source, head), points in points_of.items():
            intervals += len(points)
            at = reaches(points, floor=FLOORS[short])
            reached = f"{at:g} %" if at is not None else MISSING
            rows.append([source, head, *(estimate_cell(points.get(b)) for b in budgets), reached])
        reference = s["rows"].get(REFERENCE, {}).get(metric)
        intervals += bool(reference)
        without = f" (no labels, the zero-shot LM: {estimate_cell(reference)})" if reference else ""
        parts.append(Table(rows, f"Held-out first-error {short}{without}:", columns).markdown())
    against = curves(result, set_name, "AUROC world-heldout", paired=True)
    if against:
        every = curves(result, set_name, "AUROC world-heldout")
        budgets = sorted({b for points in every.values() for b in points})
        rows = []
        for (source, head), points in against.items():
            intervals += len(points)
            rows.append([source, head, *(estimate_cell(points.get(b), signed=True) for b in budgets)])
        title = (
            "Paired against the zero-shot LM (the same seeds and problems): held-out first-error AUROC "
            "minus the LM's, points:"
        )
        parts.append(Table(rows, title, ["source", "head", *(f"at {b:g} %" for b in budgets)]).markdown())
    draws = (
        f"{len(result['seeds'])} training seeds (each: problems, traces, labels, backbone, every PRM) × "
        f"the evaluation set's problems (evaluate seed {s['evaluate_seed']}), crossed bootstrap; "
        f"{multiplicity(intervals)}"
    )
    return "\n\n".join([draws, *parts]) + "\n"


def class_table(result: dict[str, Any], split: str = "heldout", error_class: str = "misconception") -> str:
    """F1 on the traces whose first error is of ``error_class`` per source and head at every budget: the
    mean over seeds and the range a seed fell in (the tuning set; no interval over problems)."""
    rows = result["by_class_tuning_f1_per_seed"].get(split, {})
    points: dict[tuple[str, str], dict[float, list[float | None]]] = {}
    for key, classes in rows.items():
        if key.count("/") == 2 and error_class in classes:
            source, head, budget = key.split("/")
            points.setdefault((source, head), {})[float(budget)] = classes[error_class]
    budgets = sorted({b for p in points.values() for b in p})
    table = [
        [source, head, *(runs_cell(by_budget.get(b)) for b in budgets)]
        for (source, head), by_budget in points.items()
    ]
    reference = rows.get(REFERENCE, {}).get(error_class)
    without = f"; no labels (the zero-shot LM): {runs_cell(reference)}" if reference else ""
    where = {"heldout": "Held-out", "test": "Test"}.get(split, split)
    head_line = (
        f"{where} first-error F1 on the traces whose first error is a {error_class}: mean (range of a "
        f"single seed) over {len(result['seeds'])} seeds, tuning set, no interval over problems{without}"
    )
    return Table(table, head_line, ["source", "head", *(f"at {b:g} %" for b in budgets)]).markdown() + "\n"


def plot(result: dict[str, Any], path: Path) -> None:
    """Held-out first-error F1 and AUROC (rows) against the budget, one column per head, one line per
    source with its interval, the zero-shot LM (no labels) as a dashed line: the claims set where it was
    measured, else the tuning set."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter

    set_name = "claims" if "claims" in result["sets"] else "tuning"
    metrics = ("F1 world-heldout", "AUROC world-heldout")
    heads = sorted({h for _, h in curves(result, set_name, metrics[0])})
    sources = list(dict.fromkeys(s for s, _ in curves(result, set_name, metrics[0])))
    colours = {source: f"C{i}" for i, source in enumerate(sources)}
    fig, axes = plt.subplots(
        len(metrics),
        len(heads),
        figsize=(5.2 * len(heads), 3.6 * len(metrics)),
        sharex=True,
        sharey="row",
        squeeze=False,
    )
    for row, metric in enumerate(metrics):
        points_of = curves(result, set_name, metric)
        reference = result["sets"][set_name]["rows"].get(REFERENCE, {}).get(metric)
        for col, head in enumerate(heads):
            ax = axes[row][col]
            for (source, h), points in points_of.items():
                if h != head:
                    continue
                e = list(points.values())
                ys = [100 * x["mean"] for x in e]
                err = [[100 * (x["mean"] - x["low"]) for x in e], [100 * (x["high"] - x["mean"]) for x in e]]
                ax.errorbar(
                    list(points), ys, yerr=err, fmt="-o", capsize=3, color=colours[source], label=source
                )
            if reference:
                ax.axhline(
                    100 * reference["mean"], color="grey", ls="--", lw=1, label="no labels (zero-shot LM)"
                )
            if metric.startswith("AUROC"):
                ax.axhline(50, color="grey", ls=":", lw=1)
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(FixedLocator([0.1, 1, 10, 100]))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g} %"))
            ax.grid(alpha=0.3)
            if row == 0:
                ax.set_title(f"{head} head")
            if row == len(metrics) - 1:
                ax.set_xlabel("labelled training traces used")
            if col == 0:
                ax.set_ylabel(f"held-out first-error {metric.split()[0]} (%)")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    seeds = len(result["seeds"])
    fig.suptitle(
        f"Label budgets, {set_name} set: mean over {seeds} seeds and 95 % interval over seeds × problems",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def render(text: str, root: Path) -> str:
    """``text`` with every label-budget block re-rendered from its file."""

    def one(m: re.Match[str]) -> str:
        result = json.loads((root / m["file"]).read_text(encoding="utf-8"))
        body = table(result, m["set"])
        if m["set"] == "tuning":
            body += "\n" + class_table(result)
        return m[1] + body + m[4]

    return BLOCK.sub(one, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, nargs="?", help="the sweep's output folder")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "label-budget.json")
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "img" / "label-budget.png")
    parser.add_argument(
        "--render", type=Path, help="re-render this Markdown file's blocks, computing nothing"
    )
    args = parser.parse_args()
    if args.render:
        args.render.write_text(render(args.render.read_text(encoding="utf-8"), ROOT), encoding="utf-8")
        return
    study = json.loads((args.run / "study.json").read_text(encoding="utf-8"))
    sweep = json.loads((args.run / "sweep.json").read_text(encoding="utf-8"))
    result = collect(study, sweep)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    plot(result, args.plot)
    for set_name in result["sets"]:
        print(f"{set_name}:\n\n{table(result, set_name)}")
    print(class_table(result))


if __name__ == "__main__":
    main()

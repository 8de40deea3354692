"""Label budgets (issue 39): what 0.1 / 1 / 10 / 100 % of the labelled traces buy, per source and head.

Reads a finished ``prmkit run recipes/label-budget.yaml`` sweep (its ``study.json``: first-error F1 and
AUROC per model with intervals over seeds × problems; ``sweep.json``: per-seed F1 by error class) and
writes the small results file the docs read (``--out``, default docs/results/label-budget.json), the
plot (``--plot``, default docs/img/label-budget.png) and prints the tables. PRM stages are named
``prm-<source>-<head>-<budget>pct``; the zero-shot LM is the reference row.

``python experiments/label_budget.py runs/label-budget`` (after the sweep). Docs show the tables in
``label-budget`` results blocks (:mod:`prmkit.labeling.views`, ``python experiments/render_results.py``).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from prmkit.labeling.views import (
    BUDGET_REFERENCE,
    VS_LM,
    budget_class_table,
    budget_curves,
    budget_table,
)

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"^prm-(?P<source>.+)-(?P<head>likelihood|classifier)-(?P<budget>[0-9.]+)pct$")
METRICS = ("F1 world-heldout", "AUROC world-heldout", "F1 world-test", "AUROC world-test")
CLASSES = ("misconception", "slip", "other")


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
            against = {k: s.get("paired", {}).get(f"{model} − {BUDGET_REFERENCE}: {k}") for k in METRICS}
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
    heads = sorted({h for _, h in budget_curves(result, set_name, metrics[0])})
    sources = list(dict.fromkeys(s for s, _ in budget_curves(result, set_name, metrics[0])))
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
        points_of = budget_curves(result, set_name, metric)
        reference = result["sets"][set_name]["rows"].get(BUDGET_REFERENCE, {}).get(metric)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the sweep's output folder")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "label-budget.json")
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "img" / "label-budget.png")
    args = parser.parse_args()
    study = json.loads((args.run / "study.json").read_text(encoding="utf-8"))
    sweep = json.loads((args.run / "sweep.json").read_text(encoding="utf-8"))
    result = collect(study, sweep)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    plot(result, args.plot)
    for set_name in result["sets"]:
        print(f"{set_name}:\n\n{budget_table(result, set_name)}")
    print(budget_class_table(result))


if __name__ == "__main__":
    main()

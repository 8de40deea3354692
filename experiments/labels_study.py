"""The labels study (docs/labeling.md): its results files and the per-seed table the intervals do not cover.

A finished ``prmkit run recipes/labels-study.yaml --seeds 0,1,2,3,4 -o OUT`` writes two files. This
script commits them to the docs:

- ``study.json`` -> docs/results/labels-study.json. It holds the crossed intervals over seeds ×
  evaluation problems, on both sets, with the recipe's ``evaluate.compare`` pairs. Its
  ``<!-- results: ... -->`` blocks are rendered by ``experiments/render_results.py``.
- ``sweep.json`` -> docs/results/labels-study-seeds.json. It keeps the per-seed values of what a trace's
  predictions do not carry: each labeller's first-error accuracy on its training traces, first-error F1
  by the gold first error's class, and the share of best-of-N picks whose lowest step is the last.

Those per-seed numbers have no interval over problems. The table gives their mean and the range of
single seeds, on the tuning set, and says so.

``python experiments/labels_study.py runs/labels-study`` copies both files and prints the table.
``python experiments/labels_study.py --render docs/labeling.md`` re-renders the docs block from the
committed file.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

from prmkit.core.results import Table, marker, render_marked, runs_cell

ROOT = Path(__file__).resolve().parents[1]
LABEL_ACCURACY = "label first-error accuracy (training traces)"
FINAL_STEP = "final-step minimum share of best-of-N picks"
CLASS_COLUMNS = (
    ("first-error F1 world-test misconception", "test: misconception"),
    ("first-error F1 world-test slip", "test: slip"),
    ("first-error F1 world-test other", "test: other"),
    ("first-error F1 world-heldout misconception", "held-out: misconception"),
)
KEPT = (LABEL_ACCURACY, FINAL_STEP, *(metric for metric, _ in CLASS_COLUMNS))
BLOCK = marker("labels-study-seeds")
"""The docs block this script renders (:func:`render`)."""


def compact(sweep: dict[str, Any]) -> dict[str, Any]:
    """The sweep file cut to what the table reads (:data:`KEPT`), per seed as it was measured."""
    return {
        "seeds": sweep["seeds"],
        "metrics": {m: sweep["metrics"][m] for m in KEPT if m in sweep["metrics"]},
    }


def table(seeds: dict[str, Any]) -> str:
    """One row per model: its labels' first-error accuracy on the training traces (the labeller named by
    the PRM's source), its first-error F1 by error class, and the final-step share of its best-of-N picks."""
    metrics = seeds["metrics"]
    models = list(dict.fromkeys(m for metric, _ in CLASS_COLUMNS for m in metrics.get(metric, {})))
    labels = metrics.get(LABEL_ACCURACY, {})
    heads = ["labels: first-error accuracy", *(name for _, name in CLASS_COLUMNS), "final-step minimum"]
    rows = []
    for model in models:
        cells = [runs_cell(labels.get(model.removeprefix("prm-")))]
        cells += [runs_cell(metrics.get(metric, {}).get(model)) for metric, _ in CLASS_COLUMNS]
        rows.append([model, *cells, runs_cell(metrics.get(FINAL_STEP, {}).get(model))])
    title = (
        f"Mean (range of a single seed) over {len(seeds['seeds'])} seeds, in %, on the tuning set; no "
        "interval over problems. Labels: first-error accuracy of the PRM's label source on its own "
        "training traces. F1 by the class of the gold first error. Final-step minimum: the share of "
        "best-of-N picks whose lowest step is the last."
    )
    return Table(rows, title, columns=["model", *heads]).markdown() + "\n"


def render(text: str, root: Path) -> str:
    """``text`` with every labels-study-seeds block re-rendered from its file."""

    return render_marked(text, root, "labels-study-seeds", lambda result, _: table(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, nargs="?", help="the sweep's output folder")
    parser.add_argument("--results", type=Path, default=ROOT / "docs" / "results")
    parser.add_argument("--render", type=Path, help="re-render this Markdown file's block, computing nothing")
    args = parser.parse_args()
    if args.render:
        args.render.write_text(render(args.render.read_text(encoding="utf-8"), ROOT), encoding="utf-8")
        return
    shutil.copyfile(args.run / "study.json", args.results / "labels-study.json")
    seeds = compact(json.loads((args.run / "sweep.json").read_text(encoding="utf-8")))
    (args.results / "labels-study-seeds.json").write_text(
        json.dumps(seeds, indent=1) + "\n", encoding="utf-8"
    )
    print(table(seeds))


if __name__ == "__main__":
    main()

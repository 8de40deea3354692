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

``python experiments/labels_study.py runs/labels-study`` copies both files and prints the table, which
docs show in a ``labels-study-seeds`` results block (:mod:`prmkit.labeling.views`).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

from prmkit.labeling.views import CLASS_COLUMNS, FINAL_STEP, LABEL_ACCURACY, seeds_table

ROOT = Path(__file__).resolve().parents[1]
KEPT = (LABEL_ACCURACY, FINAL_STEP, *(metric for metric, _ in CLASS_COLUMNS))


def compact(sweep: dict[str, Any]) -> dict[str, Any]:
    """The sweep file cut to what the table reads (:data:`KEPT`), per seed as it was measured."""
    return {
        "seeds": sweep["seeds"],
        "metrics": {m: sweep["metrics"][m] for m in KEPT if m in sweep["metrics"]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the sweep's output folder")
    parser.add_argument("--results", type=Path, default=ROOT / "docs" / "results")
    args = parser.parse_args()
    shutil.copyfile(args.run / "study.json", args.results / "labels-study.json")
    seeds = compact(json.loads((args.run / "sweep.json").read_text(encoding="utf-8")))
    (args.results / "labels-study-seeds.json").write_text(
        json.dumps(seeds, indent=1) + "\n", encoding="utf-8"
    )
    print(seeds_table(seeds))


if __name__ == "__main__":
    main()

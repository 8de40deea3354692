"""One table from ``prmkit eval monitorability`` or ``prmkit eval transfer`` results measured over a model's
training seeds: each model's numbers per view (or per setting).

The demo's models (``runs/world-seeds``, 5 seeds) were measured by the command on the same problems
(``docs/results/monitorability/demo.yaml``, ``docs/results/transfer/demo.yaml``), one results folder per
model (``.../demo-seeds/MODEL/``), the command given the model's 5 seeds (``--model`` and
``--seed-model``): each number is the mean over the seeds with its crossed bootstrap interval over seeds ×
problems, which the table shows as the command wrote it. Docs show the folder in a ``seed-table`` results
block (:mod:`prmkit.evaluation.views`, ``python experiments/render_results.py``).

``python experiments/seed_table.py docs/results/monitorability/demo-seeds``
"""

from __future__ import annotations

import argparse
from pathlib import Path

from prmkit.evaluation.views import SEED_FILES, crossed_table, seed_file, seed_numbers


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder", type=Path)
    folder = ap.parse_args().folder
    try:
        print(crossed_table(seed_numbers(folder), SEED_FILES[seed_file(folder)][2]), end="")
    except ValueError as err:
        raise SystemExit(str(err)) from err


if __name__ == "__main__":
    main()

"""One table from ``prmkit eval monitorability`` or ``prmkit eval transfer`` results measured over a model's
training seeds: each model's numbers per view (or per setting).

The demo's models (``runs/world-seeds``, 5 seeds) were measured by the command on the same problems
(``docs/results/monitorability/demo.yaml``, ``docs/results/transfer/demo.yaml``), one results folder per
model (``.../demo-seeds/MODEL/``), the command given the model's 5 seeds (``--model`` and
``--seed-model``): each number is the mean over the seeds with its crossed bootstrap interval over seeds ×
problems, which the table shows as the command wrote it.

``python experiments/seed_table.py docs/results/monitorability/demo-seeds``
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from prmkit.core.results import estimate_cell as cell

KINDS: dict[str, tuple[str, str, dict[str, str]]] = {
    "monitorability.json": (
        "views",
        "view",
        {"TPR": "tpr", "TNR": "tnr", "g-mean²": "g_mean2", "first-error F1": "f1", "AUROC": "auroc"},
    ),
    "transfer.json": (
        "settings",
        "name",
        {"F1": "f1", "AUROC": "auroc", "gap F1": "gap_f1", "gap AUROC": "gap_auroc"},
    ),
}
"""Per results file: the list of rows in it, a row's name, and the key of each column's estimate in a row."""


def kind_of(folder: Path) -> str:
    """The results file the ``MODEL`` folders under ``folder`` hold (one kind per table)."""
    kinds = [name for name in KINDS if any(folder.glob(f"*/{name}"))]
    if len(kinds) != 1:
        raise SystemExit(f"{folder}: expected MODEL folders of one of {sorted(KINDS)}, found {kinds}")
    return kinds[0]


def crossed(folder: Path) -> dict[str, dict[str, dict[str, dict[str, Any] | None]]]:
    """``{model: {row: {column: estimate}}}`` from every ``MODEL`` folder under ``folder`` whose result
    was measured over several seeds (an estimate: mean, low, high, draws, method; None where absent)."""
    name = kind_of(folder)
    rows_key, row_name, columns = KINDS[name]
    found: dict[str, dict[str, dict[str, dict[str, Any] | None]]] = {}
    for result in sorted(folder.glob(f"*/{name}")):
        data = json.loads(result.read_text(encoding="utf-8"))
        if len(data.get("seeds") or []) < 2:
            raise SystemExit(f"{result}: measured on one model, not over training seeds (--seed-model)")
        found[result.parent.name] = {
            row[row_name]: {column: row.get(key) for column, key in columns.items()} for row in data[rows_key]
        }
    return found


def estimate_cell(e: dict[str, Any] | None, signed: bool = False) -> str:
    """An estimate as ``mean [low, high]`` in %, a point without spread alone (``Estimate.cell``); a
    missing gap blank, any other missing number ``n/a``."""
    return cell(e, signed=signed, missing="" if signed else "n/a", collapse=True)


def crossed_table(numbers: dict[str, dict[str, dict[str, dict[str, Any] | None]]]) -> str:
    columns = list(next(iter(next(iter(numbers.values())).values())))
    rows = ["| model | | " + " | ".join(columns) + " |", "|" + "---|" * (len(columns) + 2)]
    for model, named in numbers.items():
        for row, values in named.items():
            cells = [estimate_cell(values[c], signed=c.startswith("gap")) for c in columns]
            rows.append(f"| {model} | {row} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder", type=Path)
    print(crossed_table(crossed(ap.parse_args().folder)))


if __name__ == "__main__":
    main()

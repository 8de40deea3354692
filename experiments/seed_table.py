"""One table from many ``prmkit eval monitorability`` or ``prmkit eval transfer`` results: each model's
numbers per view (or per setting), over its training seeds.

The demo's models (``runs/world-seeds``, 5 seeds) were measured by the command on the same problems
(``docs/results/monitorability/demo.yaml``, ``docs/results/transfer/demo.yaml``) in two ways:

- one results folder per model (``.../demo-seeds/MODEL/``), the command given the model's 5 seeds
  (``--model`` and ``--seed-model``): each number is the mean over the seeds with its crossed bootstrap
  interval over seeds × problems, which the table shows as the command wrote it;
- one results folder per model and seed (``.../demo/MODEL-seedS/``), each with its own interval over
  problems: the table shows the mean over seeds and the range a single seed fell in (means and ranges
  only), the training noise seen seed by seed.

``python experiments/seed_table.py docs/results/monitorability/demo-seeds [--out FILE.json]``
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

NAME = re.compile(r"^(?P<model>.+)-seed(?P<seed>\d+)$")
KINDS: dict[str, tuple[str, str, dict[str, Callable[[dict[str, Any]], float | None]]]] = {
    "monitorability.json": (
        "views",
        "view",
        {
            "TPR": lambda v: v["tpr"]["mean"],
            "TNR": lambda v: v["tnr"]["mean"],
            "g-mean²": lambda v: v["g_mean2"]["mean"],
            "first-error F1": lambda v: v["first_error"]["f1"],
            "AUROC": lambda v: v["first_error"]["auroc"],
        },
    ),
    "transfer.json": (
        "settings",
        "name",
        {
            "F1": lambda v: v["f1"]["mean"],
            "AUROC": lambda v: v["auroc"]["mean"],
            "gap F1": lambda v: v["gap_f1"]["mean"],
            "gap AUROC": lambda v: v["gap_auroc"]["mean"],
        },
    ),
}
"""Per results file: the list of rows in it, a row's name, and what the table shows of a row (None where a
file has no value)."""
ESTIMATES: dict[str, dict[str, str]] = {
    "monitorability.json": {
        "TPR": "tpr", "TNR": "tnr", "g-mean²": "g_mean2", "first-error F1": "f1", "AUROC": "auroc",
    },
    "transfer.json": {"F1": "f1", "AUROC": "auroc", "gap F1": "gap_f1", "gap AUROC": "gap_auroc"},
}  # fmt: skip
"""Per results file written over several seeds: the key of each column's estimate in a row."""


def kind_of(folder: Path) -> str:
    """The results file the ``MODEL-seedS`` folders under ``folder`` hold (one kind per table)."""
    kinds = [name for name in KINDS if any(folder.glob(f"*/{name}"))]
    if len(kinds) != 1:
        raise SystemExit(f"{folder}: expected MODEL-seedS folders of one of {sorted(KINDS)}, found {kinds}")
    return kinds[0]


def collect(folder: Path) -> dict[str, dict[str, dict[str, list[float | None]]]]:
    """``{model: {row: {column: [value per seed]}}}`` from every ``MODEL-seedS`` folder under ``folder``."""
    name = kind_of(folder)
    rows_key, row_name, columns = KINDS[name]
    found: dict[str, dict[str, dict[str, list[float | None]]]] = defaultdict(lambda: defaultdict(dict))
    for result in sorted(folder.glob(f"*/{name}")):
        match = NAME.match(result.parent.name)
        if match is None:
            raise SystemExit(f"{result.parent}: expected a folder named MODEL-seedS")
        data = json.loads(result.read_text(encoding="utf-8"))
        for row in data[rows_key]:
            for column, read in columns.items():
                try:
                    value = read(row)
                except (KeyError, TypeError):
                    value = None
                found[match["model"]][row[row_name]].setdefault(column, []).append(value)
    return found


def crossed(folder: Path) -> dict[str, dict[str, dict[str, dict[str, Any] | None]]]:
    """``{model: {row: {column: estimate}}}`` from every ``MODEL`` folder under ``folder`` whose result
    was measured over several seeds (an estimate: mean, low, high, draws, method; None where absent)."""
    name = kind_of(folder)
    rows_key, row_name, _ = KINDS[name]
    found: dict[str, dict[str, dict[str, dict[str, Any] | None]]] = {}
    for result in sorted(folder.glob(f"*/{name}")):
        data = json.loads(result.read_text(encoding="utf-8"))
        if len(data.get("seeds") or []) < 2:
            raise SystemExit(f"{result}: measured on one model, not over training seeds (--seed-model)")
        found[result.parent.name] = {
            row[row_name]: {column: row.get(key) for column, key in ESTIMATES[name].items()}
            for row in data[rows_key]
        }
    return found


def estimate_cell(e: dict[str, Any] | None, signed: bool = False) -> str:
    """An estimate as ``mean [low, high]`` in %, a point without spread alone (``Estimate.cell``)."""
    if e is None:
        return "" if signed else "n/a"
    fmt = "+.1f" if signed else ".1f"
    mean, low, high = (e[k] for k in ("mean", "low", "high"))
    if mean is None or math.isnan(mean):
        return "n/a"
    if low == high == mean:
        return f"{100 * mean:{fmt}}"
    return f"{100 * mean:{fmt}} [{100 * low:{fmt}}, {100 * high:{fmt}}]"


def crossed_table(numbers: dict[str, dict[str, dict[str, dict[str, Any] | None]]]) -> str:
    columns = list(next(iter(next(iter(numbers.values())).values())))
    rows = ["| model | | " + " | ".join(columns) + " |", "|" + "---|" * (len(columns) + 2)]
    for model, named in numbers.items():
        for row, values in named.items():
            cells = [estimate_cell(values[c], signed=c.startswith("gap")) for c in columns]
            rows.append(f"| {model} | {row} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def summary(values: list[float | None]) -> dict[str, Any]:
    """Mean and range over seeds of the values that exist, and how many seeds had one."""
    have = [v for v in values if v is not None]
    if not have:
        return {"mean": None, "min": None, "max": None, "seeds": 0}
    return {"mean": sum(have) / len(have), "min": min(have), "max": max(have), "seeds": len(have)}


def cell(s: dict[str, Any], signed: bool = False) -> str:
    if s["mean"] is None:
        return "n/a" if s["seeds"] == 0 and not signed else ""
    fmt = "+.1f" if signed else ".1f"
    if s["min"] == s["max"]:
        return f"{100 * s['mean']:{fmt}}"
    return f"{100 * s['mean']:{fmt}} ({100 * s['min']:{fmt}} – {100 * s['max']:{fmt}})"


def table(numbers: dict[str, dict[str, dict[str, dict[str, Any]]]]) -> str:
    columns = list(next(iter(next(iter(numbers.values())).values())))
    head = "| model | | " + " | ".join(columns) + " |"
    rows = [head, "|" + "---|" * (len(columns) + 2)]
    for model, named in numbers.items():
        for row, values in named.items():
            cells = [cell(values[c], signed=c.startswith("gap")) for c in columns]
            rows.append(f"| {model} | {row} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--out", type=Path, help="the summary as JSON (mean, min, max, seeds per cell)")
    args = ap.parse_args()
    per_seed = any(NAME.match(p.parent.name) for p in args.folder.glob("*/*.json"))
    if not per_seed:
        print(crossed_table(crossed(args.folder)))
        return
    numbers = {
        model: {view: {c: summary(v) for c, v in columns.items()} for view, columns in views.items()}
        for model, views in collect(args.folder).items()
    }
    if args.out:
        args.out.write_text(json.dumps(numbers, indent=1) + "\n", encoding="utf-8")
    print(table(numbers))


if __name__ == "__main__":
    main()

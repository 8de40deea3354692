"""One table from many ``prmkit eval monitorability`` results: each model's rates under each view, as the
mean over its training seeds and the range a single seed fell in.

The demo's models (``runs/world-seeds``, 5 seeds) were each measured by the command on the same problems
(``docs/results/monitorability/demo.yaml``), one results folder per model and seed
(``docs/results/monitorability/demo/MODEL-seedS/monitorability.json``). Each file carries its own
bootstrap interval over problems; this table shows the spread over seeds beside the mean, so a reader
sees the training noise the per-seed intervals leave out. It computes nothing but means and ranges.

``python experiments/monitor_table.py docs/results/monitorability/demo [--out FILE.json]``
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

NAME = re.compile(r"^(?P<model>.+)-seed(?P<seed>\d+)$")
COLUMNS = {
    "TPR": lambda v: v["tpr"]["mean"],
    "TNR": lambda v: v["tnr"]["mean"],
    "g-mean²": lambda v: v["g_mean2"]["mean"],
    "first-error F1": lambda v: v["first_error"]["f1"],
    "AUROC": lambda v: v["first_error"]["auroc"],
}
"""What the table shows per view, read from each results file (None where a file has no value)."""


def collect(folder: Path) -> dict[str, dict[str, dict[str, list[float | None]]]]:
    """``{model: {view: {column: [value per seed]}}}`` from every ``MODEL-seedS`` folder under ``folder``."""
    found: dict[str, dict[str, dict[str, list[float | None]]]] = defaultdict(lambda: defaultdict(dict))
    for result in sorted(folder.glob("*/monitorability.json")):
        match = NAME.match(result.parent.name)
        if match is None:
            raise SystemExit(f"{result.parent}: expected a folder named MODEL-seedS")
        data = json.loads(result.read_text(encoding="utf-8"))
        for view in data["views"]:
            for column, read in COLUMNS.items():
                try:
                    value = read(view)
                except (KeyError, TypeError):
                    value = None
                found[match["model"]][view["view"]].setdefault(column, []).append(value)
    if not found:
        raise SystemExit(f"{folder}: no MODEL-seedS/monitorability.json")
    return found


def summary(values: list[float | None]) -> dict[str, Any]:
    """Mean and range over seeds of the values that exist, and how many seeds had one."""
    have = [v for v in values if v is not None]
    if not have:
        return {"mean": None, "min": None, "max": None, "seeds": 0}
    return {"mean": sum(have) / len(have), "min": min(have), "max": max(have), "seeds": len(have)}


def cell(s: dict[str, Any]) -> str:
    if s["mean"] is None:
        return "n/a"
    if s["min"] == s["max"]:
        return f"{100 * s['mean']:.1f}"
    return f"{100 * s['mean']:.1f} ({100 * s['min']:.1f}–{100 * s['max']:.1f})"


def table(numbers: dict[str, dict[str, dict[str, dict[str, Any]]]]) -> str:
    head = "| model | view | " + " | ".join(COLUMNS) + " |"
    rows = [head, "|" + "---|" * (len(COLUMNS) + 2)]
    for model, views in numbers.items():
        for view, columns in views.items():
            rows.append(f"| {model} | {view} | " + " | ".join(cell(columns[c]) for c in COLUMNS) + " |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--out", type=Path, help="the summary as JSON (mean, min, max, seeds per cell)")
    args = ap.parse_args()
    numbers = {
        model: {view: {c: summary(v) for c, v in columns.items()} for view, columns in views.items()}
        for model, views in collect(args.folder).items()
    }
    if args.out:
        args.out.write_text(json.dumps(numbers, indent=1) + "\n", encoding="utf-8")
    print(table(numbers))


if __name__ == "__main__":
    main()

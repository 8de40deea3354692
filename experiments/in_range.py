"""Does one run land in a study's single-run ranges? README states, per model and metric, the range a
single run of the demo's recipe falls in (the lowest and highest seed of the sweep behind
``docs/results/world-seeds.json``). A newcomer's ``make demo`` is one such run; this script says, value by
value, whether it landed inside.

    prmkit run recipes/world.yaml --seeds 0 -o runs/demo-study --reuse demo-out   # demo-out's numbers, no work
    python experiments/in_range.py runs/demo-study/study.json docs/results/world-seeds.json
    # against the ranges README shows, which also span runs on other CPU types:
    python experiments/in_range.py runs/demo-study/study.json docs/results/world-seeds.json \
        --also docs/results/world-demo-avx2.json

The first file is any study file of the same recipe (one seed or several: each value compared is its
mean, which for one seed is that run's value). Prints a table per evaluation set and exits 1 when a value
lies outside its range. Values are compared as the README prints them (in %, one decimal).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from prmkit.evaluation.study import widened


def values(numbers: Mapping[str, Any], set_name: str) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """Every (row, column, estimate) of one evaluation set: first-error metrics, then best-of-N."""
    s = numbers.get(set_name) or {}
    for model, metrics in s.get("first_error", {}).items():
        for metric, est in metrics.items():
            yield model, metric, est
    for method, by_n in s.get("bon", {}).items():
        for n, est in by_n.items():
            yield method, n, est


def compare(run: Mapping[str, Any], study: Mapping[str, Any], set_name: str) -> list[dict[str, Any]]:
    """One row per value the study states a single-run range for and the run measured: the run's value,
    the range, and whether it is inside (rounded to the one decimal README shows)."""
    measured = {(row, col): est for row, col, est in values(run, set_name)}
    rows = []
    for row, col, est in values(study, set_name):
        if (row, col) not in measured or "single_run" not in est:
            continue
        value = round(100 * measured[(row, col)]["mean"], 1)
        low, high = (round(100 * v, 1) for v in est["single_run"])
        rows.append({"row": row, "metric": col, "value": value, "low": low, "high": high,
                     "inside": low <= value <= high})  # fmt: skip
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("run", type=Path, help="the run's study.json (prmkit run ... --seeds S)")
    parser.add_argument("study", type=Path, help="the study whose single-run ranges README states")
    parser.add_argument(
        "--also", type=Path, nargs="*", default=[], help="other machines' study files the ranges span"
    )
    args = parser.parse_args()
    run = json.loads(args.run.read_text(encoding="utf-8"))
    others = [json.loads(f.read_text(encoding="utf-8")) for f in args.also]
    study = widened(json.loads(args.study.read_text(encoding="utf-8")), others)
    outside = 0
    for set_name in ("claims", "tuning"):
        rows = compare(run, study, set_name)
        if not rows:
            continue
        print(f"\n{set_name} set: {sum(r['inside'] for r in rows)} of {len(rows)} values inside\n")
        print("| model or method | metric | this run | single-run range | |")
        print("|---|---|---|---|---|")
        for r in rows:
            mark = "inside" if r["inside"] else "**outside**"
            print(
                f"| {r['row']} | {r['metric']} | {r['value']:.1f} | {r['low']:.1f}–{r['high']:.1f} | {mark} |"
            )
        outside += sum(not r["inside"] for r in rows)
    return 1 if outside else 0


if __name__ == "__main__":
    raise SystemExit(main())

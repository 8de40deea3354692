"""Where `make demo`'s time goes, and what a cheaper recipe would cost in what it shows (issue 65).

Reads finished runs of the demo's recipe (``prmkit run recipes/world.yaml -o DIR [--jobs 2] [--set ...]``)
and writes, per run: each stage's seconds (its ``DONE.json``), their sum, the wall time the caller timed,
and what the run shows on the tuning set — every model's first-error F1 and AUROC on world-test, and the
gold PRM's best-of-N (minimum step score), weighted vote and majority vote at N = 16 and 64 — so a faster
setting is judged by what it still shows, not by time alone. Runs are timed by the caller
(``time prmkit run ...``) on a machine with nothing else running; pass each as LABEL=DIR=WALL_SECONDS,
or LABEL=DIR=- for a run made beside other jobs, read for what it shows: no wall time is recorded for it
(``wall_s`` null), and its stages' seconds are as slow as the machine was.

    python bench/bench_demo.py "sequential=/tmp/demo-prof=1105" "budgets 800/300, --jobs 2=/tmp/demo-c1=649" \\
        --out bench/results/demo-2026-11-29.json
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from benchlib import code_version
from prmkit.pipeline.sweep import machine

MODELS = ("pretrain", "prm-gold", "prm-mc_hard", "orm")
BON = ("prm:min", "weighted:min", "majority")


def stage_seconds(run: Path) -> dict[str, float]:
    """Each stage's own seconds, by stage name (its folder is NAME-KEY)."""
    out = {}
    for done in sorted((run / "stages").glob("*/DONE.json")):
        record = json.loads(done.read_text(encoding="utf-8"))
        out[record["stage"]] = round(record["seconds"], 1)
    return out


def shows(run: Path) -> dict[str, Any]:
    """What the run shows on the tuning set: first-error F1/AUROC per model, the gold PRM's selection."""
    first_error, bon = {}, {}
    for model in MODELS:
        (done,) = (run / "stages").glob(f"eval-{model}-*/DONE.json")
        summary = json.loads(done.read_text(encoding="utf-8"))["summary"]
        test = next(s for s in summary["first_error"]["subsets"] if s["name"] == "world-test")
        first_error[model] = {"f1": test["f1"], "auroc": test["auroc"]}
        if model == "prm-gold":
            bon = {
                f"{r['method']} N={r['n']}": [r["accuracy"], r["lo"], r["hi"]]
                for r in summary["bon"]["rows"]
                if r["method"] in BON and r["n"] in (16, 64)
            }
    return {"first_error_test": first_error, "prm_gold_bon": bon}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="LABEL=RUN_DIR=WALL_SECONDS")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rows = []
    for spec in args.runs:
        label, folder, wall = spec.rsplit("=", 2)
        run = Path(folder)
        seconds = stage_seconds(run)
        timed = None if wall == "-" else float(wall)
        rows.append({"label": label, "wall_s": timed, "stage_seconds_sum": round(sum(seconds.values()), 1),
                     "stages": seconds, "shows": shows(run)})  # fmt: skip
        print(
            f"{label}: wall {'not timed' if timed is None else f'{timed:.0f} s'}, stages summed {sum(seconds.values()):.0f} s"
        )
    result = {"what": __doc__.split("\n\n")[0], "cpus": os.cpu_count(), "machine": machine(), **code_version(),
              "runs": rows}  # fmt: skip
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

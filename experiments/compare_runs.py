"""Compare two ``prmkit run`` outputs number by number: the sampled traces and every label on them, and
every evaluation summary (tuning and claims sets), ignoring paths (the scorer's folder), timings and
world names.

Used to check that a refactor left the demo's results as they were (docs/results.md), e.g. a run of the
old code against a fresh clone's ``make demo``:

    python experiments/compare_runs.py runs/world-seeds/seed-0 demo-out

Prints one line per stage, ``identical`` or where it differs, and exits 1 when anything differs. Floats
are compared to 12 significant digits (a summation order may move the last bit of an AUPRC).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SKIP = ("files", "seconds", "minutes", "runtime", "plots", "finished_at", "predictor", "scorer")
DATA = ("problems", "mc", "binary_search", "judge", "consensus")
EVALS = ("eval/eval_summary.json", "model/card/eval_summary.json", "claims/eval_summary.json")


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _clean(v) for k, v in value.items() if k not in SKIP and "dir" not in k and "path" not in k
        }
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, str) and "/stages/" in value:
        return "STAGE-PATH"  # a model's folder (its stage key changes with the recipe's settings)
    if value in ("world", "arithmetic", "agentworld", "agent"):
        return "WORLD"  # a world's name, which the worlds' renaming changed
    return value


def _labels(folder: Path) -> dict[str, Any]:
    file = next(folder.glob("labels.jsonl"), None) or next(folder.glob("traces.jsonl"))
    out = {}
    for line in file.open(encoding="utf-8"):
        t = json.loads(line)
        steps = [
            [
                (lab["provenance"]["method"], lab.get("rating"), lab.get("value"))
                for lab in s.get("labels", [])
            ]
            for s in t["steps"]
        ]
        out[t["id"]] = (steps, t.get("final_answer"), t.get("answer_correct"))
    return out


def _stage(run: Path, name: str) -> Path | None:
    return next(
        (d for d in sorted((run / "stages").glob(f"{name}-*")) if d.name.rsplit("-", 1)[0] == name), None
    )


def compare(a: Path, b: Path) -> bool:
    same = True
    names = sorted({d.name.rsplit("-", 1)[0] for d in (b / "stages").iterdir()})
    for name in names:
        da, db = _stage(a, name), _stage(b, name)
        if da is None or db is None:
            continue
        if name in DATA:
            left, right = _labels(da), _labels(db)
        elif name.startswith(("eval-", "claims-")):
            fa = next((da / f for f in EVALS if (da / f).exists()), None)
            fb = next((db / f for f in EVALS if (db / f).exists()), None)
            if fa is None or fb is None:
                continue
            left, right = (_clean(json.loads(f.read_text(encoding="utf-8"))) for f in (fa, fb))
        else:
            continue
        ok = left == right
        same &= ok
        print(f"{name}: {'identical' if ok else 'DIFFERS'}")
    return same


if __name__ == "__main__":
    sys.exit(0 if compare(Path(sys.argv[1]), Path(sys.argv[2])) else 1)

"""bench/gpu_speed_check.py --smoke: the GPU speed check's three parts (the slow conventions against a raw
forward pass, the reward server batched and unbatched, ProcessBench-shaped files through ``eval
processbench``) on the CPU with tiny shapes, so the script a GPU machine runs is known to run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # about 40 s on one shared core
def test_smoke_run_reports_every_part_and_goal(tmp_path: Path) -> None:
    out = tmp_path / "speed-gpu-check.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gpu_speed_check.py"), "--smoke", "--out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    record = json.loads(out.read_text())
    assert record["smoke"] and record["device"].startswith("CPU")
    assert [r["convention"] for r in record["scoring"]["rows"]] == ["rlhflow", "likelihood", "implicit"]
    assert all(r["raw_tok_s"] > 0 and r["prmkit_tok_s"] > 0 for r in record["scoring"]["rows"])
    server = record["server"]
    assert {(r["clients"], r["mode"]) for r in server["rows"]} == {
        (c, m) for c in (1, 32) for m in ("batched", "unbatched")
    }
    assert all(r["errors"] == 0 and r["requests"] > 0 for r in server["rows"])
    assert set(server["ratios"]) == {"1", "32"}
    bench = record["processbench"]
    assert bench["traces"] == 17 and set(bench["tokens"]) == {"gsm8k", "math", "olympiadbench", "omnimath"}
    assert bench["seconds_without_load"] > 0 and bench["tok_s"] > 0 and bench["f1"] is not None
    goals = record["goals"]
    assert len(goals) == 6 and all(isinstance(g["pass"], bool) for g in goals)
    assert "PASS" in done.stdout or "FAIL" in done.stdout


def test_processbench_files_keep_the_benchmark_sizes_and_balance(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import gpu_speed_check as check
    finally:
        sys.path.remove(str(ROOT / "bench"))
    from prmkit.evaluation.processbench import load_sets

    sets = load_sets(check.write_processbench(tmp_path, 0.1))
    assert {k: len(v) for k, v in sets.items()} == {
        "gsm8k": 40,
        "math": 100,
        "olympiadbench": 100,
        "omnimath": 100,
    }
    errors = {k: sum(t.first_error("human:processbench") >= 0 for t in v) for k, v in sets.items()}
    assert errors == {"gsm8k": 21, "math": 59, "olympiadbench": 66, "omnimath": 76}
    for name, traces in sets.items():
        mean = sum(len(t.problem.text) + sum(len(s.text) for s in t.steps) for t in traces) / len(traces)
        wanted = check.PROCESSBENCH[name][2] - check.TEMPLATE_CHARS  # the prompt's mean, less its template
        assert 0.7 * wanted < mean < 1.1 * wanted
        assert all(len(t.steps) >= 2 for t in traces)

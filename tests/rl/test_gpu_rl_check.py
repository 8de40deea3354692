"""bench/gpu_rl_check.py --smoke: the GPU check's code paths on the CPU (a served random PRM paying a
tiny Qwen2 policy's steps through DenseGRPOTrainer), so the script a GPU machine runs is known to run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_smoke_run_reports_times_and_step_rewards_at_step_ends(tmp_path: Path) -> None:
    out = tmp_path / "rl-gpu-check.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gpu_rl_check.py"), "--smoke", "--out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    record = json.loads(out.read_text())
    assert record["smoke"] and record["policy"]["class"] == "Qwen2ForCausalLM"
    assert len(record["steps"]) == 3  # 1 warm-up + 2 timed
    assert all(0.0 < s["reward_share"] < 1.0 for s in record["steps"])
    assert record["step_seconds"] > 0 and 0.0 < record["reward_share"] < 1.0
    check = record["step_end_check"]
    assert check["ok"] and check["batches"] == 3 and check["completions"] == 24
    assert check["changes_inside_steps"] == 0 and check["rows_unlike_process_advantages"] == 0
    for row in record["step_rewards"]:
        assert len(row["step_end_tokens"]) == len(row["step_rewards"]) == len(row["advantage_at_step_ends"])
        assert all(0.0 <= r <= 1.0 for r in row["step_rewards"])  # a PRM's probabilities

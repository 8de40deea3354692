"""prmkit's credit forms as verl estimators: verl 0.9.1's own ``compute_advantage`` with each registered
``prmkit_credit_<name>`` (run in ``.venv-verl`` by tests/rl/credits_verl_run.py) gives the library
function's token advantages on the same step rewards, groups read from uids (uneven, interleaved)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from prmkit.rl.credits import Rollouts, credit_advantages
from prmkit.rl.verl_advantages import ESTIMATORS
from tests.rl.test_verl_loop import VERL_PYTHON

SCRIPT = Path(__file__).with_name("credits_verl_run.py")
WIDTH = 8
REWARDS = [[0.9, 0.2], [0.7], [0.8, 0.0, 0.95], [0.3, 0.5, 0.1], [1.0, 1.0], [0.0]]
ENDS = [[2, 5], [3], [1, 4, 6], [0, 2, 4], [1, 3], [2]]
LENGTHS = [6, 4, 7, 5, 4, 3]
UIDS = ["a", "b", "a", "a", "b", "a"]  # groups of 4 and 2, interleaved as after verl's balancing

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not VERL_PYTHON.exists(), reason="no verl environment: `make verl-env`"),
]


def test_verl_estimators_equal_the_library(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    request = {"rewards": REWARDS, "ends": ENDS, "lengths": LENGTHS, "uids": UIDS, "width": WIDTH,
               "estimators": list(ESTIMATORS), "out": str(out)}  # fmt: skip
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PRMKIT_"))}
    proc = subprocess.run(
        [str(VERL_PYTHON), str(SCRIPT)], input=json.dumps(request), capture_output=True, text=True,
        timeout=300, env=clean, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(out.read_text())["advantages"]
    groups = [[0, 2, 3, 5], [1, 4]]
    for name, credit in ESTIMATORS.items():
        want = credit_advantages(credit, Rollouts(REWARDS, ENDS, LENGTHS, groups, keys=["a", "b"]))
        for i, row in enumerate(want):
            assert got[name][i][: len(row)] == pytest.approx(row, abs=1e-5), (name, i)
            assert got[name][i][len(row) :] == [0.0] * (WIDTH - len(row))

"""``make verl-env`` builds what verl 0.9.1's default trainer imports (issue 36).

verl 0.9.1's ``main_ppo`` runs the v1 trainer (``trainer.use_v1=True``), whose ``TaskRunnerV1.run``
imports ``transfer_queue`` (TransferQueue, in verl's ``verl-core`` extra only) and
``verl.trainer.ppo.v1``; ``main_ppo --help`` succeeds without them, so the imports are what is checked.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.rl.test_verl_loop import VERL_PYTHON

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not VERL_PYTHON.exists(),
        reason="no verl environment: `make verl-env` builds .venv-verl (verl 0.9.1, ~3 minutes)",
    ),
]

IMPORTS = """
import transfer_queue, verl.trainer.main_ppo
from verl.trainer.ppo.v1 import get_trainer_cls
print(*(get_trainer_cls(mode).__name__ for mode in ("sync", "colocate_async", "separate_async")))
"""


def test_default_trainer_imports() -> None:
    proc = subprocess.run([str(VERL_PYTHON), "-c", IMPORTS], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["PPOTrainerSync", "PPOTrainerColocateAsync", "PPOTrainerSeparateAsync"]

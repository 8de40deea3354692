"""Run by test_train.py in its own process: train a tiny PRM and SIGKILL the process while it writes its
final process card (after the model's weights, as a real kill during the final save would land)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from prmkit.core.files import atomic_write
from prmkit.training import PrmConfig, heads, train_prm
from tests.training.conftest import world_traces


def _killed_mid_write(folder: Path, card: object) -> None:
    with atomic_write(Path(folder) / "process_card.json") as fh:
        fh.write("{")
        fh.flush()
        os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    heads.write_process_card = _killed_mid_write
    train_prm(world_traces(30, 4, seed=0), Path(sys.argv[1]), PrmConfig.model_validate_json(sys.argv[2]))

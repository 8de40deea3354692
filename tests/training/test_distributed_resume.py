"""Issue 34: a training launched with two CPU processes (gloo), every process SIGKILLed after a checkpoint
and launched again, ends where a launch never stopped ends (tests/training/test_distributed.py: the
launch itself, equal to one process)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from .launching import (
    PER_RANK_FILES,
    WHOLE_STEPS,
    inputs,
    killed_when,
    launch,
    train_args,
    two_processes_whole,
)

pytestmark = pytest.mark.slow


def test_two_processes_killed_after_a_checkpoint_resume_to_the_uninterrupted_model(tmp_path):
    """20 steps of 13 a pass (2 x 4 traces a step), checkpoints every 5: every process SIGKILLed once
    checkpoint 10 (mid-pass) is saved, then launched again, ends with the losses, dev scores and weights
    of a launch never stopped, bit for bit: each rank restores its own RNG and data-order states. The
    launch never stopped is tests/training/test_distributed.py's too (built once per test run)."""
    data, base = inputs()
    resumed = tmp_path / "resumed"
    args = train_args(resumed, data, base, batch=4, accumulate=1, steps=WHOLE_STEPS)
    code = killed_when(2, resumed, args, resumed / "checkpoints" / "checkpoint-10" / "prmkit_run.json")
    assert code == -signal.SIGKILL and not (resumed / "model.safetensors").exists()
    assert (resumed / "checkpoints" / "checkpoint-10" / PER_RANK_FILES[1]).exists()
    again = launch(2, resumed, args)
    assert again.returncode == 0, again.stderr[-4000:]
    whole = two_processes_whole()  # the same arguments, launched once and never stopped

    def history(out: Path) -> list[dict]:
        rows = map(json.loads, (out / "training_log.jsonl").read_text().splitlines())
        return [{k: v for k, v in r.items() if "minutes" not in k} for r in rows if "train_runtime" not in r]

    assert [r["step"] for r in history(resumed) if "loss" in r] == list(range(1, WHOLE_STEPS + 1))
    assert history(resumed) == history(whole)
    a, b = (load_file(out / "model.safetensors") for out in (whole, resumed))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)

"""Issue 34: a run killed after a checkpoint and resumed is the uninterrupted run's model, bit for bit.

It was not: transformers drew each epoch's length-grouped order from the global RNG, and a run resumed
mid-epoch drew that epoch anew in its fresh process (the saved RNG state is restored only after the
epoch has started), so it trained on other batches (0.128 apart after 400 steps)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from prmkit.modeling import TinyConfig
from prmkit.training import PrmConfig, loop, train_prm
from prmkit.training.data import ReplayableLengthSampler
from prmkit.training.loop import CHECKPOINTS, RUN_FILE, last_checkpoint

from .conftest import world_traces
from .resume_run import keeping_last_step, last_step_weights

ROOT = Path(__file__).resolve().parents[2]
TINY = TinyConfig(layers=1, width=64, heads=2, max_length=256, positions="rope")
CLOCKS = ("eval_minutes", "eval_cpu_minutes")


def _killed_after(step: int, output_dir: Path, config: PrmConfig) -> Future:
    """Start ``resume_run`` in its own process (a kill must hit a whole process, as a crash does) and a
    watcher that SIGKILLs it once checkpoint ``step`` is saved whole (its :data:`RUN_FILE` is written
    last). The watcher's future holds the process's exit code and the end of its stderr."""
    log = output_dir.with_suffix(".stderr")  # a file, not a pipe: a full pipe would stall the run
    with log.open("w") as err:
        run = subprocess.Popen(
            [sys.executable, "-m", "tests.training.resume_run", str(output_dir),
             config.model_dump_json(exclude_unset=True)],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"},
            stdout=subprocess.DEVNULL, stderr=err,
        )  # fmt: skip
    saved = output_dir / CHECKPOINTS / f"checkpoint-{step}" / RUN_FILE

    def watch() -> tuple[int, str]:
        deadline = time.monotonic() + 300
        while not saved.exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=60)
        return run.returncode, log.read_text()[-2000:]

    pool = ThreadPoolExecutor(1)
    watcher = pool.submit(watch)
    pool.shutdown(wait=False)  # the watch goes on
    return watcher


def _train(output_dir: Path, config: PrmConfig, monkeypatch: pytest.MonkeyPatch) -> None:
    """``resume_run`` in this process (it has paid for the imports already)."""
    with monkeypatch.context() as patch:
        patch.setattr(loop, "make_trainer", keeping_last_step(loop.make_trainer, output_dir))
        train_prm(world_traces(30, 4, seed=0), output_dir, config)


def _same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _history(output_dir: Path) -> list[dict]:
    """The training log without its clocks and the trainer's closing summary (timings, and a mean loss
    over the steps the last process took)."""
    rows = [json.loads(line) for line in (output_dir / "training_log.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in CLOCKS} for r in rows if "train_runtime" not in r]


@pytest.mark.slow
def test_a_run_killed_after_a_checkpoint_resumes_to_the_uninterrupted_model(tmp_path, monkeypatch):
    """40 steps of 14 a pass, checkpoints every 10: SIGKILLed once checkpoint 20 (mid-pass) is saved,
    then rerun to completion, it ends with the weights, losses and dev scores of a run never stopped."""
    cfg = PrmConfig(tiny=TINY, max_steps=40, batch_size=8, eval_every=10, threads=1)
    out = tmp_path / "resumed"
    killed = _killed_after(20, out, cfg)
    _train(tmp_path / "whole", cfg, monkeypatch)  # meanwhile, beside it
    code, err = killed.result(timeout=400)
    assert code == -signal.SIGKILL, err
    resume_from = last_checkpoint(out, resume=True)
    assert resume_from is not None and int(resume_from.rsplit("-", 1)[1]) in range(20, 40)
    assert not (out / "model.safetensors").exists()

    _train(out, cfg, monkeypatch)

    history = _history(out)
    assert [r["step"] for r in history if "loss" in r] == list(range(2, 41, 2))
    assert history == _history(tmp_path / "whole")
    last = [load_file(last_step_weights(tmp_path / name)) for name in ("whole", "resumed")]
    assert _same(*last)
    assert _same(*(load_file(tmp_path / name / "model.safetensors") for name in ("whole", "resumed")))


def test_a_checkpoint_cut_off_while_saving_is_not_resumed_from(tmp_path):
    """transformers writes a checkpoint in place, ``trainer_state.json`` last: a kill during the save
    leaves a folder whose optimiser or RNG state may be missing, which the trainer would resume without."""
    folder = tmp_path / CHECKPOINTS
    for step, state in ((10, "{}"), (20, "{}"), (30, '{"global_step": 3'), (40, None)):
        (folder / f"checkpoint-{step}").mkdir(parents=True)
        if state is not None:
            (folder / f"checkpoint-{step}" / "trainer_state.json").write_text(state)
    assert last_checkpoint(tmp_path, resume=True) == str(folder / "checkpoint-20")
    assert sorted(p.name for p in folder.iterdir()) == ["checkpoint-10", "checkpoint-20"]
    assert last_checkpoint(tmp_path, resume=False) is None


def test_the_training_order_is_drawn_as_transformers_draws_it_and_replayed_from_its_state():
    """An uninterrupted run's order is what transformers' LengthGroupedSampler drew (recorded numbers
    stand); the state a pass drew from gives that pass's order again in a fresh process."""
    from transformers.trainer_pt_utils import LengthGroupedSampler

    lengths = [5, 9, 2, 7, 7, 3, 11, 4, 6, 8, 1, 10] * 3
    torch.manual_seed(7)
    theirs = [list(LengthGroupedSampler(4, lengths=lengths)) for _ in range(2)]
    torch.manual_seed(7)
    ours = ReplayableLengthSampler(lengths, 4)
    first = list(ours)
    state = ours.drawn_from
    assert [first, list(ours)] == theirs and first != theirs[1]
    torch.manual_seed(123)  # a fresh process's RNG
    again = ReplayableLengthSampler(lengths, 4, replay=state)
    assert list(again) == first

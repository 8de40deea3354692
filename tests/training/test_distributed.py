"""Issue 34: training under ``accelerate launch`` as users run it, with two CPU processes (gloo).

Both ranks train; one writes (the model, the cards, the logs, the cleanup), which each rank's record
of its own writes shows (``dist_run.py``); the folder reloads, and the model equals a one-process run
with the same effective batch (2 x 4 against 4 with 2 accumulation steps) within float tolerance: the
ranks' shares of a step are the batches that one process accumulates, and their averaged gradients that
process's accumulated ones. The backbone has no dropout, since each rank draws its own masks."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from prmkit.core.dataset import write_traces
from prmkit.scoring import load_scorer

from .conftest import world_traces
from .launching import PER_RANK_FILES, backbone, killed_when, launch, strays, writes

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """World traces on disk and a tiny backbone folder without dropout."""
    folder = tmp_path_factory.mktemp("inputs")
    traces = world_traces(30, 4, seed=0)
    write_traces(folder / "traces.jsonl", traces)
    return folder / "traces.jsonl", backbone(folder / "backbone", traces)


def _args(out: Path, data: Path, base: Path, batch: int, accumulate: int, steps: int = 10) -> list[str]:
    return ["train", "prm", str(data), "-o", str(out), "--base-model", str(base), "--batch-size", str(batch),
            "--grad-accum", str(accumulate), "--max-steps", str(steps), "--eval-every", "5", "--threads", "1",
            "--max-length", "256"]  # fmt: skip


def _train(processes: int, out: Path, data: Path, base: Path, batch: int, accumulate: int) -> None:
    done = launch(processes, out, _args(out, data, base, batch, accumulate))
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.count("output_dir:") == 1  # the result is printed once


def test_two_processes_train_one_writes_and_equal_one_process_with_the_same_effective_batch(tmp_path, inputs):
    data, base = inputs
    two, one = tmp_path / "two", tmp_path / "one"
    _train(2, two, data, base, batch=4, accumulate=1)
    _train(1, one, data, base, batch=4, accumulate=2)

    assert {"model.safetensors", "process_card.json", "training_log.jsonl"} <= {w[1] for w in writes(two, 0)}
    assert ["shutil.rmtree", "checkpoints"] in writes(two, 0)
    assert strays(two) == [], "rank 1 wrote into the output folder"
    assert any(w[1].endswith(PER_RANK_FILES) for w in writes(two, 1))  # its records see its own writes

    card = json.loads((two / "process_card.json").read_text())
    assert (card["training"]["world_size"], card["training"]["effective_batch"]) == (2, 8)
    assert json.loads((one / "process_card.json").read_text())["training"]["effective_batch"] == 8
    assert not (two / "checkpoints").exists()

    a, b = load_file(two / "model.safetensors"), load_file(one / "model.safetensors")
    assert a.keys() == b.keys()
    start = load_file(base / "model.safetensors")
    assert max((b[k] - start[k]).abs().max() for k in b if k in start) > 1e-3  # training moved them
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=1e-4, atol=1e-5, msg=k)

    def logged(out: Path) -> list[dict]:
        return [json.loads(line) for line in (out / "training_log.jsonl").read_text().splitlines()]

    evals, reference = ([r for r in logged(out) if "eval_first_error_f1" in r] for out in (two, one))
    assert len(logged(two)) == len(logged(one))  # one rank logged each entry
    # dev scored in shards across the ranks (at 0, 5, 10 and once more after the best model is loaded)
    assert [r["step"] for r in evals] == [r["step"] for r in reference] == [0, 5, 10, 10]
    assert [r["eval_first_error_f1"] for r in evals] == pytest.approx(
        [r["eval_first_error_f1"] for r in reference], abs=1e-6
    )
    assert len(load_scorer(two).score(world_traces(2, 2, seed=5))) == 4


def test_two_processes_killed_after_a_checkpoint_resume_to_the_uninterrupted_model(tmp_path, inputs):
    """20 steps of 13 a pass (2 x 4 traces a step), checkpoints every 5: every process SIGKILLed once
    checkpoint 10 (mid-pass) is saved, then launched again, ends with the losses, dev scores and weights
    of a launch never stopped, bit for bit: each rank restores its own RNG and data-order states."""
    data, base = inputs
    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    args = _args(resumed, data, base, batch=4, accumulate=1, steps=20)
    code = killed_when(2, resumed, args, resumed / "checkpoints" / "checkpoint-10" / "prmkit_run.json")
    assert code == -signal.SIGKILL and not (resumed / "model.safetensors").exists()
    assert (resumed / "checkpoints" / "checkpoint-10" / PER_RANK_FILES[1]).exists()
    again = launch(2, resumed, args)
    assert again.returncode == 0, again.stderr[-4000:]
    done = launch(2, whole, _args(whole, data, base, batch=4, accumulate=1, steps=20))
    assert done.returncode == 0, done.stderr[-4000:]

    def history(out: Path) -> list[dict]:
        rows = map(json.loads, (out / "training_log.jsonl").read_text().splitlines())
        return [{k: v for k, v in r.items() if "minutes" not in k} for r in rows if "train_runtime" not in r]

    assert [r["step"] for r in history(resumed) if "loss" in r] == list(range(1, 21))
    assert history(resumed) == history(whole)
    a, b = (load_file(out / "model.safetensors") for out in (whole, resumed))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)

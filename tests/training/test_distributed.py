"""Issue 34: training under ``accelerate launch`` as users run it, with two CPU processes (gloo).

Both ranks train; one writes (the model, the cards, the logs, the cleanup), which each rank's record
of its own writes shows (``dist_run.py``); the folder reloads, and the model equals a one-process run
with the same effective batch (2 x 4 against 4 with 2 accumulation steps) within float tolerance: the
ranks' shares of a step are the batches that one process accumulates, and their averaged gradients that
process's accumulated ones. The backbone has no dropout, since each rank draws its own masks. Killed and
launched again: tests/training/test_distributed_resume.py (a file of its own, so ``--dist loadfile`` can
run the two files' launches on two workers); the uninterrupted two-process launch is one for both files
(``launching.two_processes_whole``: a launch is ~15 s of start-ups for under a second of training). The
one-process run is ``prmkit train prm`` without a launcher, in the test's own process: a launch of one
process adds ~10 s of interpreter start-ups and changes nothing compared (its world size is 1 either way)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.scoring import load_scorer

from .conftest import world_traces
from .launching import (
    PER_RANK_FILES,
    WHOLE_STEPS,
    inputs,
    strays,
    train_args,
    two_processes_whole,
    writes,
)

pytestmark = pytest.mark.slow


def test_two_processes_train_one_writes_and_equal_one_process_with_the_same_effective_batch(tmp_path):
    data, base = inputs()
    two, one = two_processes_whole(), tmp_path / "one"  # two: 2 x 4 traces a step, printed its result once
    threads = torch.get_num_threads()
    try:  # one process, no launcher: prmkit's command line as a user runs it, here in the test's process
        done = CliRunner().invoke(app, train_args(one, data, base, batch=4, accumulate=2, steps=WHOLE_STEPS))
    finally:
        torch.set_num_threads(threads)  # the run's 1 thread is not left to this process's next tests
    assert done.exit_code == 0, done.output[-4000:]
    assert done.output.count("output_dir:") == 1  # the result is printed once

    assert {"model.safetensors", "process_card.json", "training_log.jsonl"} <= {w[1] for w in writes(two, 0)}
    assert ["shutil.rmtree", "checkpoints"] in writes(two, 0)
    assert strays(two) == [], "rank 1 wrote into the output folder"
    assert any(w[1].endswith(PER_RANK_FILES) for w in writes(two, 1))  # its records see its own writes

    card = json.loads((two / "process_card.json").read_text())
    assert (card["training"]["world_size"], card["training"]["effective_batch"]) == (2, 8)
    alone = json.loads((one / "process_card.json").read_text())["training"]
    assert (alone["world_size"], alone["effective_batch"]) == (1, 8)
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
    # dev scored in shards across the ranks (every 5 steps from 0, and once more after the best model is loaded)
    scored_at = [*range(0, WHOLE_STEPS + 1, 5), WHOLE_STEPS]
    assert [r["step"] for r in evals] == [r["step"] for r in reference] == scored_at
    assert [r["eval_first_error_f1"] for r in evals] == pytest.approx(
        [r["eval_first_error_f1"] for r in reference], abs=1e-6
    )
    assert len(load_scorer(two).score(world_traces(2, 2, seed=5))) == 4

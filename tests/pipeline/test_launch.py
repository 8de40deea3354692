"""Issue 34: ``prmkit run`` under ``accelerate launch --num_processes 2``: the stages that are not training
(problems, labelling, evaluation) run once, on the main process, the training stage on both, and the
run's numbers equal a one-process run's with the same effective batch (2 x 4 against 4 with 2
accumulation steps). Rank 1 writes nothing but its own RNG states (``tests/training/dist_run.py``).

The one-process run is ``prmkit run`` as a user runs it without a launcher, here in the test's own
process: a launch of one process would add ~10 s of interpreter start-ups and change nothing the test
compares (its world size is 1 either way, which the test checks)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from prmkit.pipeline import run
from tests.training.launching import inputs, launch, strays, writes

from .test_run import numbers

pytestmark = pytest.mark.slow
KEY = re.compile(r"-[0-9a-f]{12}\b")

RECIPE = """
name: launched
output_dir: {out}
problems: {{n: 12, per_problem: 4}}
labels: {{methods: [mc], rollouts: 2}}
train:
  pretrain: null
  orm: null
  prm: {{base_model: {base}, max_steps: 6, eval_every: 3, batch_size: 4, grad_accum: {accumulate},
         threads: 1, max_length: 512}}
  prm_sources: [mc_hard]
evaluate: {{problems: 4, per_problem: 4, heldout_problems: 2, bootstrap: 20, beam_problems: 0, plots: false}}
"""


def _recipe(out: Path, base: Path, accumulate: int) -> Path:
    recipe = out.with_suffix(".yaml")
    recipe.write_text(RECIPE.format(out=out, base=base, accumulate=accumulate))
    return recipe


def _lines(folder: Path) -> dict[str, int]:
    """Lines of every file a stage's job wrote (its append-only logs): a stage run twice doubles them."""
    return {
        str(p.relative_to(folder)): len(p.read_bytes().splitlines()) for p in sorted(folder.rglob("*.jsonl"))
    }


def _close(a, b) -> bool:
    """Equal up to float rounding, and up to stage keys in paths (the runs' grad_accum differs, and with
    it the training stage's key and every key downstream)."""
    if isinstance(a, str) and isinstance(b, str):
        return KEY.sub("-KEY", a) == KEY.sub("-KEY", b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-4, abs=1e-6)
    return a == b


def test_a_recipe_under_two_processes_labels_once_and_equals_the_one_process_run(tmp_path):
    _, base = inputs()  # the launched-training tests' backbone, built once per test run
    two, one = tmp_path / "two", tmp_path / "one"
    done = launch(2, two, ["run", str(_recipe(two, base, accumulate=1))])
    assert done.returncode == 0, done.stderr[-4000:]
    threads = torch.get_num_threads()
    try:
        run(_recipe(one, base, accumulate=2))  # one process, no launcher
    finally:
        torch.set_num_threads(threads)  # the recipe's 1 thread is not left to this process's next tests

    assert strays(two) == [], "rank 1 wrote into the run's folder"
    done = [w[1] for w in writes(two, 0) if w[1].endswith("DONE.json") and w[0] == "os.rename"]
    assert len(done) == len(set(done)) == len(list(two.glob("stages/*/DONE.json")))  # each stage once
    mc_two, mc_one = (next(out.glob("stages/mc-*")) for out in (two, one))
    assert _lines(mc_two) == _lines(mc_one) and _lines(mc_two)  # labelled once: no doubled job log

    a, b = numbers(two), numbers(one)
    trained = a["prm-mc_hard"]["training"]
    assert (trained["world_size"], trained["effective_batch"]) == (2, 8)
    assert b["prm-mc_hard"]["training"]["world_size"] == 1
    for summary in (a, b):  # the launch's size is the one thing allowed to differ
        summary["prm-mc_hard"]["training"].pop("world_size")
    assert _close(a, b), "the launched run's numbers differ from the one-process run's"

"""The same recipe gives the same numbers on a quiet and on a loaded machine: budgets in optimiser steps,
threads pinned (tests/pipeline/test_run.py's kill-and-rerun beside it)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from prmkit.pipeline import run

from .test_run import numbers

STEPS_RECIPE = """
name: same numbers anywhere
output_dir: {out}
problems: {{n: 16, per_problem: 4}}
labels: {{methods: [mc], rollouts: 2}}
train:
  pretrain: {{max_steps: 6, threads: 2, batch_size: 8, tiny: {{width: 32, heads: 2}}}}
  prm: {{max_steps: 4, eval_every: 2, threads: 2, head: likelihood}}
  prm_sources: [gold, mc_hard]
  orm: {{max_steps: 3, threads: 2}}
evaluate: {{problems: 6, per_problem: 4, heldout_problems: 3, bootstrap: 20, beam_problems: 0, zero_shot: false,
           plots: false}}
"""
# Every trainer (pretraining, a PRM from gold and one from labels, the ORM) and every measurement of the
# models they made; the labellers' own determinism under load is the labelling tests' (judge, consensus).
# Few steps each (the PRMs still scored on dev at 0, 2 and 4): the hogs spin as long as the loaded run
# takes, so its length is paid three times over.

_SPIN = "import time\nend = time.monotonic() + 600\nwhile time.monotonic() < end: pass\n"


@pytest.mark.slow
def test_same_recipe_gives_the_same_numbers_on_a_loaded_machine(tmp_path):
    """Budgets in optimiser steps with threads pinned: the run is the same whether the machine is quiet or
    shared with CPU hogs (two spinning processes on top of the run's own two threads), so the report's
    numbers are equal, and every model took exactly the steps it planned."""
    quiet = tmp_path / "quiet"
    (tmp_path / "quiet.yaml").write_text(STEPS_RECIPE.format(out=quiet))
    run(tmp_path / "quiet.yaml")

    loaded = tmp_path / "loaded"
    (tmp_path / "loaded.yaml").write_text(STEPS_RECIPE.format(out=loaded))
    hogs = [subprocess.Popen([sys.executable, "-c", _SPIN]) for _ in range(2)]
    try:
        run(tmp_path / "loaded.yaml")
        assert all(h.poll() is None for h in hogs), "the competing load ended before the run did"
    finally:
        for h in hogs:
            h.kill()
            h.wait()

    a, b = numbers(quiet), numbers(loaded)
    assert a == b
    trained = {name: s["training"] for name, s in a.items() if "training" in s}
    assert set(trained) == {"pretrain", "prm-gold", "prm-mc_hard", "orm"}
    assert all(t["steps"] == t["planned_steps"] and not t["stopped_early"] for t in trained.values())
    assert trained["pretrain"]["steps"] == 6 and trained["orm"]["threads"] == 2
    report = (loaded / "report.md").read_text()
    assert "## Training: what each model actually did" in report and "| 4 / 4 |" in report

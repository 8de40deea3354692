"""A cut-down recipe runs end to end; killed mid-stage and rerun, it gives the same report numbers. Equal numbers
on a loaded machine: tests/pipeline/test_run_loaded.py, a file of its own so ``--dist loadfile`` can run
the two long runs on two workers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prmkit.pipeline import run

RECIPE = """
name: e2e
output_dir: {out}
problems: {{n: 16, per_problem: 4}}
labels: {{methods: [mc, judge, consensus], rollouts: 2}}
train:
  pretrain: {{epochs: 1, batch_size: 8, tiny: {{width: 32, heads: 2}}}}
  prm: {{epochs: 1}}
  prm_sources: [gold]
  prm_runs:
    - {{name: mc-subset, source: mc_hard, size_of: consensus}}
    - {{name: soft-kept, source: mc_soft, traces_of: consensus}}
    - {{name: mc-budget, source: mc_hard, fraction: 0.25}}
  orm: {{epochs: 1}}
evaluate: {{problems: 6, per_problem: 4, heldout_problems: 3, bootstrap: 20, beam_problems: 0, plots: false}}
"""
# No max_minutes: a wall-clock budget would make the numbers depend on the machine's speed. The LM is
# cut to width 32 (batch 8): these tests check the pipeline's plumbing, not what the models learn. No
# plots: drawing them was half of a run's CPU time, and tests/pipeline/test_no_plots.py runs a recipe
# with them and without them.


TIMING = ("minutes", "seconds", "runtime", "per_second", "finished_at")


def _strip(value, root: str):
    """Drop timings and make paths relative (both differ between two runs by design); keep every number."""
    if isinstance(value, dict):
        return {k: _strip(v, root) for k, v in value.items() if not any(t in k for t in TIMING)}
    if isinstance(value, list):
        return [_strip(v, root) for v in value]
    if isinstance(value, str):
        return value.replace(root, "OUT")
    return value


def numbers(out: Path) -> dict:
    """Every measured number of a run (stage summaries), without timings or paths."""
    found = {}
    for done in sorted(out.glob("stages/*/DONE.json")):
        data = json.loads(done.read_text())
        found[data["stage"]] = _strip(data["summary"], str(out))
    return found


@pytest.mark.slow
def test_cut_down_recipe_survives_a_kill(tmp_path):
    ref_recipe = tmp_path / "ref.yaml"
    ref_recipe.write_text(RECIPE.format(out=tmp_path / "ref"))
    result = run(ref_recipe)
    report = result.report_md.read_text()
    for section in (
        "What this run shows",
        "Labels against gold",
        "Failure-mode audits",
        "Process cards",
        "Where the time went",
    ):
        assert f"## {section}" in report
    assert (tmp_path / "ref" / "report.html").exists()
    card = next((tmp_path / "ref" / "stages").glob("card-prm-gold-*/model/README.md"))
    assert "first-error" in card.read_text().lower()
    kept = result.stages["consensus"]["summary"]["kept"]  # a random subset of MC's traces, as many
    assert result.stages["prm-mc-subset"]["summary"]["subset"] == {"traces": kept, "of": 64}
    assert result.stages["prm-soft-kept"]["summary"]["subset"] == {"traces": kept, "of": 64}
    assert result.stages["prm-mc-budget"]["summary"]["subset"] == {"traces": 16, "of": 64}  # a label budget

    recipe = tmp_path / "killed.yaml"
    out = tmp_path / "killed"
    recipe.write_text(RECIPE.format(out=out))
    proc = subprocess.Popen(
        [sys.executable, "-m", "prmkit.cli", "run", str(recipe)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while not list(out.glob("stages/pretrain-*")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    started = list(out.glob("stages/pretrain-*"))
    assert started and not (started[0] / "DONE.json").exists(), (
        "the kill should land inside the pretrain stage"
    )
    assert (out / "stages").is_dir() and list(out.glob("stages/mc-*/DONE.json"))

    resumed = run(recipe)
    assert resumed.stages["mc"]["cached"] and not resumed.stages["pretrain"]["cached"]
    assert numbers(out) == numbers(tmp_path / "ref")

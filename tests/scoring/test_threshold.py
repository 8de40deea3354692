"""One threshold rule: a flag wins, else the checkpoint's own (dev-tuned at training), else 0.5; every
command that cuts step scores into right / wrong follows it and says where its threshold came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core.dataset import write_traces
from prmkit.scoring import load_scorer, pick_threshold
from prmkit.testing import make_random_prm
from prmkit.worlds.arithmetic import generate_problems, gold_label, sample_traces

STORED = 0.0476  # a likelihood head's dev-tuned value: far from 0.5, where 0.5 calls every step wrong


@pytest.fixture(scope="module")
def tuned_prm(tmp_path_factory) -> str:
    folder = make_random_prm(tmp_path_factory.mktemp("tuned") / "prm")
    config = json.loads((Path(folder) / "config.json").read_text())
    config["prmkit"]["threshold"] = STORED
    (Path(folder) / "config.json").write_text(json.dumps(config))
    return folder


def test_flag_then_checkpoint_then_default(tuned_prm):
    scorer = load_scorer(tuned_prm)
    assert scorer.threshold == STORED
    assert pick_threshold(None, scorer) == (STORED, "checkpoint")
    assert pick_threshold(0.3, scorer) == (0.3, "given")
    assert pick_threshold(None, object()) == (0.5, "default")  # e.g. a remote scorer: nothing stored


def test_audit_uses_the_checkpoint_threshold_and_says_so(tuned_prm, tmp_path):
    traces = gold_label(sample_traces(generate_problems(4, seed=3, split="test"), 4, seed=3))
    write_traces(tmp_path / "traces.jsonl", traces)
    result = CliRunner().invoke(
        app,
        ["audit", tuned_prm, str(tmp_path / "traces.jsonl"), "-o", str(tmp_path / "audit"), "--max-n", "4"],
    )
    assert result.exit_code == 0, result.output
    assert f"threshold: {STORED} (checkpoint)" in result.output
    saved = json.loads((tmp_path / "audit" / "audit.json").read_text())
    assert (saved["threshold"], saved["threshold_from"]) == (STORED, "checkpoint")


def test_eval_processbench_uses_the_checkpoint_threshold(tuned_prm):
    """With no --threshold and no --dev (before: 0.5, "default")."""
    from prmkit.evaluation.processbench import evaluate_first_error

    traces = gold_label(sample_traces(generate_problems(3, seed=5, split="test"), 2, seed=5))
    result = evaluate_first_error({"world": traces}, load_scorer(tuned_prm), gold_source="gold")
    assert (result.threshold, result.threshold_from) == (STORED, "checkpoint")


def test_resample_uses_the_checkpoint_threshold(tuned_prm, tmp_path):
    from prmkit.search.config import ResampleConfig
    from prmkit.search.resample import run_resample
    from prmkit.worlds.arithmetic import WORLD

    WORLD.generate(2, tmp_path / "problems.jsonl", seed=7, split="test")
    config = ResampleConfig(
        problems=tmp_path / "problems.jsonl", scorer=tuned_prm, out=tmp_path / "out.jsonl", budget=8
    )
    summary = run_resample(config, show_progress=False)
    assert (summary["threshold"], summary["threshold_from"]) == (STORED, "checkpoint")


def test_score_records_the_checkpoint_threshold_that_inspect_then_uses(tuned_prm, tmp_path):
    from prmkit.formats.stats import source_threshold
    from prmkit.scoring import score

    traces = score(
        tuned_prm, gold_label(sample_traces(generate_problems(2, seed=9, split="test"), 1, seed=9))
    )
    source = f"model:{tuned_prm}"
    assert traces[0].steps[0].label(source).provenance.params["threshold"] == STORED
    assert source_threshold(traces[0], source) == STORED

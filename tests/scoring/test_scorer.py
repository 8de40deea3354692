"""One-pass batched scoring: right shape, batch-independent, equal to per-prefix scoring and to
loading the checkpoint with plain transformers."""

from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoModelForTokenClassification, AutoTokenizer

from prmkit.core.dataset import write_traces
from prmkit.formats.inputs import read_traces
from prmkit.scoring import load_scorer, score


def test_scores_every_step_in_unit_interval(prmkit_model, traces):
    rows = load_scorer(prmkit_model).score(traces)
    assert [len(r) for r in rows] == [len(t.steps) for t in traces]
    assert all(0.0 <= s <= 1.0 for r in rows for s in r)


def test_batching_and_padding_do_not_change_scores(prmkit_model, traces):
    scorer = load_scorer(prmkit_model)
    together = scorer.score(traces)
    scorer.max_batch = 1
    alone = scorer.score(traces)
    for a, b in zip(together, alone, strict=True):
        assert a == pytest.approx(b, abs=1e-5)


def test_one_pass_equals_scoring_each_prefix(prmkit_model, traces):
    scorer = load_scorer(prmkit_model)
    trace = max(traces, key=lambda t: len(t.steps))
    full = scorer.score([trace])[0]
    prefixes = [trace.model_copy(update={"steps": trace.steps[: k + 1]}) for k in range(len(trace.steps))]
    per_prefix = [row[-1] for row in scorer.score(prefixes)]
    assert full == pytest.approx(per_prefix, abs=1e-5)


def test_plain_transformers_gives_the_same_scores(prmkit_model, traces):
    """The model card's snippet: no prmkit, the joined text, the tag id from config.json."""
    cfg = json.loads((prmkit_model / "config.json").read_text())["prmkit"]
    tok = AutoTokenizer.from_pretrained(prmkit_model)
    model = AutoModelForTokenClassification.from_pretrained(prmkit_model).eval()
    ours = load_scorer(prmkit_model).score(traces)
    for trace, expected in zip(traces, ours, strict=True):
        text = cfg["template"]["prompt_template"].replace("{problem}", trace.problem.text)
        text += "".join(s.text + cfg["template"]["separator"] for s in trace.steps)
        ids = tok(text, return_tensors="pt").input_ids
        with torch.no_grad():
            probs = model(ids).logits[0].softmax(-1)
        got = probs[ids[0] == cfg["tag_id"]][:, cfg["positive_labels"]].sum(-1)
        assert got.tolist() == pytest.approx(expected, abs=1e-5)


def test_score_adds_model_labels_with_provenance(prmkit_model, traces):
    scored = score(prmkit_model, [t.model_copy(deep=True) for t in traces], aggregation="min")
    source = f"model:{prmkit_model}"
    for t in scored:
        assert all(
            s.label(source) is not None and s.label(source).provenance.method == "model" for s in t.steps
        )
        assert t.metadata["prm_score"]["value"] == pytest.approx(min(s.label(source).score for s in t.steps))
    again = score(prmkit_model, scored)  # rescoring replaces, never duplicates
    assert all(len(s.labels) == 1 for s in again[0].steps)


def test_cli_score_writes_scored_traces(prmkit_model, traces, tmp_path):
    from typer.testing import CliRunner

    from prmkit.cli import app

    write_traces(tmp_path / "in.jsonl", traces)
    out = tmp_path / "scored.jsonl"
    result = CliRunner().invoke(
        app, ["score", str(prmkit_model), str(tmp_path / "in.jsonl"), "-o", str(out), "--aggregate", "mean"]
    )
    assert result.exit_code == 0, result.output
    scored = read_traces(out)
    assert all(t.metadata["prm_score"]["how"] == "mean" for t in scored)
    assert all(len(s.labels) == 1 for t in scored for s in t.steps)

"""End to end on real tiny models: a PRM trained on gold step labels and an ORM trained on outcomes,
both with prmkit.training on the world, for one epoch (9 optimiser steps) each. ``prmkit card`` must fill every section
of the PRM's card from measurements, and the audits must run on both and give a verdict.

A few steps do not teach a model to check arithmetic, so whether the audits tell
*these* two apart is not asserted here (that is measured with longer runs; see docs/evaluation.md); the
discrimination itself is tested on scores with known behaviour in tests/evaluation/test_audits.py."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.evaluation.audits import audit_scores, broadcast_last
from prmkit.evaluation.suite import world_traces

from .test_card import check_filled

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def world_models(tmp_path_factory):
    from prmkit.modeling import TinyConfig
    from prmkit.training import OrmConfig, PrmConfig, train_orm, train_prm

    root = tmp_path_factory.mktemp("world_models")
    train = world_traces(40, 8, seed=11, split="train")
    common = {
        "tiny": TinyConfig(layers=1, width=64, heads=2, max_length=256, positions="rope"),
        "epochs": 1,  # the card's and the audits' plumbing: what the models learnt is not asserted
        "lr": 3e-3,
    }
    common |= {"eval_every": 25, "resume": False}
    train_prm(train, root / "prm", PrmConfig(**common))
    train_orm(train, root / "orm", OrmConfig(**common))
    return root


def test_audits_run_on_real_prm_and_orm(world_models):
    from prmkit.scoring import load_scorer

    traces = world_traces(8, 8, seed=21, split="test")
    orm_scores = broadcast_last(load_scorer(world_models / "orm").score(traces))
    assert all(len(set(row)) == 1 for row in orm_scores)  # one verdict per trace, on every step
    for name, scores in (("prm", load_scorer(world_models / "prm").score(traces)), ("orm", orm_scores)):
        report = audit_scores(traces, scores, max_n=8, draws=4)
        print(name, json.dumps(report["collapse"]))
        assert report["collapse"]["verdict"] in ("process", "collapsed", "undecided")
        assert 0.0 <= report["collapse"]["process_fidelity"] <= 1.0
        assert report["lucky"]["right_answers"] > 0 and report["calibration"]["views"]["local"]["steps"] > 0


def test_card_cli_for_world_prm(world_models):
    prm, orm = world_models / "prm", world_models / "orm"
    trained = (prm / "README.md").read_text()  # the model card training wrote (prmkit.cards)
    assert "## Score steps with transformers only" in trained and "## Serve with vLLM" in trained
    args = [
        "card",
        str(prm),
        "--orm",
        str(orm),
        "--problems",
        "6",
        "--per-problem",
        "8",
        "--heldout-problems",
        "3",
    ]
    gate = world_models / "gate.json"
    rule = "flag a trace whose min step score is below the threshold"
    gate.write_text(json.dumps({"rule": rule, "aggregation": "min", "threshold": 0.5, "action": "flag"}))
    args += ["--monitor", str(gate)]
    result = CliRunner().invoke(app, [*args, "--beam-problems", "2", "--bootstrap", "200"])
    assert result.exit_code == 0, result.output
    readme = (prm / "README.md").read_text()
    saved = json.loads((prm / "process_card.json").read_text())
    check_filled(readme, saved)
    usage = trained.split("\n## Score steps with transformers only", 1)[1].replace("\n## ", "\n### ")
    assert "### Score steps with transformers only" + usage in readme  # the full card keeps it
    assert saved["evaluation"]["bon"]["orm"] is not None and "| orm |" in readme
    assert saved["labels"][0]["source"] == "gold" and saved["labels"][0]["steps"] > 0
    assert saved["base"]["from_scratch"] is True and saved["base"]["architecture"]["layers"] == 1
    roles = saved["roles"]  # training recorded who wrote its traces; the card linked the ORM and the gate
    assert roles["policy"][0]["sampling"][0]["seed"] == 11 and roles["traces"] > 0
    assert roles["orm"]["link"] == str(orm) and roles["prm"]["link"] == str(prm)
    assert roles["monitor"]["rule"] == rule and f"| deployment monitor | {rule}" in readme

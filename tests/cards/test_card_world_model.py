"""End to end on real tiny models: a PRM trained on gold step labels and an ORM trained on outcomes,
both with prmkit.training on the world. The audits must tell them apart (the ORM comes out collapsed),
and ``prmkit card`` must fill every section of the PRM's card from measurements."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.evaluation.audits import broadcast_last, run_audits
from prmkit.evaluation.suite import world_traces

from .test_card import check_filled

pytestmark = pytest.mark.slow

TRAIN_MINUTES = 1.5


@pytest.fixture(scope="module")
def world_models(tmp_path_factory):
    from prmkit.training import OrmConfig, PrmConfig, train_orm, train_prm

    root = tmp_path_factory.mktemp("world_models")
    train = world_traces(200, 8, seed=11, split="train")
    train_prm(train, root / "prm", PrmConfig(max_minutes=TRAIN_MINUTES, epochs=2))
    train_orm(train, root / "orm", OrmConfig(max_minutes=TRAIN_MINUTES, epochs=2))
    return root


def test_audits_tell_prm_from_orm(world_models):
    from prmkit.scoring import load_scorer

    traces = world_traces(16, 16, seed=21, split="test")
    prm = run_audits(traces, load_scorer(world_models / "prm").score(traces), max_n=16, draws=8)
    orm = run_audits(
        traces, broadcast_last(load_scorer(world_models / "orm").score(traces)), max_n=16, draws=8
    )
    print("PRM collapse:", json.dumps(prm["collapse"]), "\nORM collapse:", json.dumps(orm["collapse"]))
    assert orm["collapse"]["collapsed"] is True
    assert prm["collapse"]["collapsed"] is False
    assert prm["collapse"]["process_fidelity"] > orm["collapse"]["process_fidelity"] + 0.3
    assert prm["lucky"]["catch_rate"] > orm["lucky"]["catch_rate"]


def test_card_cli_for_world_prm(world_models):
    prm, orm = world_models / "prm", world_models / "orm"
    args = ["card", str(prm), "--orm", str(orm), "--problems", "12", "--per-problem", "8"]
    result = CliRunner().invoke(app, [*args, "--heldout-problems", "6", "--bootstrap", "200"])
    assert result.exit_code == 0, result.output
    readme = (prm / "README.md").read_text()
    saved = json.loads((prm / "process_card.json").read_text())
    check_filled(readme, saved)
    assert saved["evaluation"]["bon"]["orm"] is not None and "| orm |" in readme
    assert saved["labels"][0]["source"] == "gold" and saved["labels"][0]["steps"] > 0

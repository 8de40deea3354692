"""Transfer: one scorer at one threshold in a source setting and in target settings of the arithmetic
world; the oracle transfers everywhere, a scorer that reads only the first steps loses on the longer
held-out problems, with a paired interval that excludes 0."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core.model import Trace
from prmkit.evaluation.config import FewShotConfig, TransferConfig
from prmkit.evaluation.processbench import evaluate_first_error
from prmkit.evaluation.transfer import RESULT_FILE, Setting, TransferResult, transfer
from prmkit.scoring import load_scorer
from prmkit.worlds.registry import world

ARITHMETIC = world("arithmetic")
ORACLE = load_scorer(ARITHMETIC.oracle_name)
SETTINGS = {
    "source": Setting(),
    "hot": Setting(policy=ARITHMETIC.policy_config(temperature=2.0)),
    "no_misconceptions": Setting(policy=ARITHMETIC.policy_config(misconceptions=0.0)),
    "heldout": Setting(split="heldout"),
}
"""The settings of docs/evaluation.md, "Transfer": 40 problems x 4 traces each, seed 1234, 200 resamples."""


class FirstSteps:
    """A deliberately weak scorer: the oracle on a trace's first three steps, every later step scored
    right. It verifies the short test problems nearly whole and misses the late errors of long ones."""

    name = "first-3-steps"

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        return [[s if i < 3 else 1.0 for i, s in enumerate(row)] for row in ORACLE.score(traces)]


def _measure(scorer) -> TransferResult:
    return transfer(scorer, ARITHMETIC, SETTINGS, 40, 4, 1234, resamples=200)


def test_the_oracle_transfers_to_every_setting() -> None:
    result = _measure(ORACLE)
    assert [s.name for s in result.settings] == list(SETTINGS) and result.threshold_from == "default"
    for s in result.settings:
        assert s.traces == 160 and s.with_error > 0 and s.error_free > 0
        assert s.f1.mean == s.auroc.mean == 1.0
        if s.name != "source":
            assert s.gap_f1.mean == s.gap_f1.low == s.gap_f1.high == 0.0
            assert s.gap_auroc.mean == 0.0 and not s.gap_auroc.excludes(0.0)
    assert "| hot | 160 | 100.0 | 100.0 | +0.0 | +0.0 |" in result.table()


def test_a_scorer_that_reads_the_first_steps_loses_on_longer_problems() -> None:
    result = _measure(FirstSteps())
    source, heldout = result.setting("source"), result.setting("heldout")
    assert heldout.gap_f1.high < 0 and heldout.gap_auroc.high < 0  # intervals exclude 0
    assert heldout.gap_f1.mean == pytest.approx(heldout.f1.mean - source.f1.mean)
    assert not result.setting("hot").gap_f1.excludes(0.0)  # same problems, more errors: still seen


def test_each_point_is_processbenchs_metric_at_the_one_threshold() -> None:
    scorer = FirstSteps()
    result = _measure(scorer)
    for name in ("source", "heldout"):
        traces = ARITHMETIC.traces(40, 4, 1234, SETTINGS[name].split)
        subset = evaluate_first_error({name: traces}, scorer, 0.5).subsets[0]
        row = result.setting(name)
        assert row.f1.mean == pytest.approx(subset.f1) and row.auroc.mean == pytest.approx(subset.auroc)
        assert (row.with_error, row.error_free) == (subset.with_error, subset.error_free)


def test_the_command_writes_its_matrix_and_its_config(tmp_path) -> None:
    (tmp_path / "t.yaml").write_text(
        "problems: 6\nper_problem: 2\nbootstrap: 50\n"
        "targets:\n  hot: {policy: {temperature: 2.0}}\n  heldout: {split: heldout}\n"
    )
    args = ["eval", "transfer", "--config", str(tmp_path / "t.yaml"), "--model", "arithmetic-oracle"]
    result = CliRunner().invoke(app, [*args, "--threshold", "0.5", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "| setting | traces | F1 | AUROC | gap F1 | gap AUROC |" in result.output
    saved = json.loads((tmp_path / "out" / RESULT_FILE).read_text())
    assert [s["name"] for s in saved["settings"]] == ["source", "hot", "heldout"]
    assert saved["threshold_from"] == "given" and saved["settings"][0]["gap_f1"] is None
    assert saved["params"]["config"]["targets"]["hot"]["policy"] == {"temperature": 2.0}


@pytest.mark.parametrize(
    ("yaml", "named"),
    [
        ("targets:\n  hot: {policy: {temprature: 2.0}}\n", "t.yaml:2: targets.hot.policy.temprature:"),
        ("targets:\n  hot: {polcy: {temperature: 2.0}}\n", "t.yaml:2: targets.hot.polcy:"),
        ("source: {policy: {misconceptons: 0}}\n", "t.yaml:1: source.policy.misconceptons:"),
        ("targets:\n  long: {split: train}\n", "t.yaml:2: targets.long.split:"),
    ],
)
def test_a_wrong_knob_or_field_is_one_line_naming_it(tmp_path, yaml: str, named: str) -> None:
    (tmp_path / "t.yaml").write_text(yaml)
    args = ["eval", "transfer", "--config", str(tmp_path / "t.yaml"), "--model", "arithmetic-oracle"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and named in lines[0], result.output


def test_the_api_config_refuses_a_wrong_knob_and_a_target_called_source() -> None:
    with pytest.raises(ValidationError, match=r"targets\.hot\.policy\.temprature"):
        TransferConfig(model="arithmetic-oracle", targets={"hot": {"policy": {"temprature": 2.0}}})
    with pytest.raises(ValidationError, match="names the source setting"):
        TransferConfig(model="arithmetic-oracle", targets={"source": {}})


class EachWorldsOracle:
    """The checker of whichever world a trace's problem belongs to: a verifier that transfers across
    worlds by construction, so every gap across them is 0."""

    name = "each-worlds-oracle"

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        from prmkit.worlds.registry import world_of

        return [load_scorer(world_of(t.problem).oracle_name).score([t])[0] for t in traces]  # type: ignore[union-attr]


def test_a_target_in_another_world_is_written_and_checked_by_that_world() -> None:
    """``world_name``: the target's traces come from the agent world (its policy, its checker), its knobs
    are the agent policy's, and the source's arithmetic knobs are not laid under them."""
    config = TransferConfig(
        model="x", problems=6, per_problem=2, bootstrap=50,
        source={"policy": {"misconceptions": 0.0}},
        targets={"agent": {"world_name": "agent", "policy": {"temperature": 1.5}}, "heldout": {"split": "heldout"}},
    )  # fmt: skip
    assert [config.world_of(n) for n in ("source", "agent", "heldout")] == [
        "arithmetic",
        "agent",
        "arithmetic",
    ]
    agent_policy, _, _ = config.knobs("agent")
    assert type(agent_policy) is world("agent").policy_config and agent_policy.temperature == 1.5
    assert config.knobs("heldout")[0].misconceptions == 0.0  # same world: the source's knobs under it
    settings = {"source": Setting(), "agent": Setting(world=world("agent"))}
    result = transfer(EachWorldsOracle(), ARITHMETIC, settings, 8, 2, 1234, resamples=100)
    agent = result.setting("agent")
    assert agent.with_error > 0 and agent.f1.mean == agent.auroc.mean == 1.0 and agent.gap_f1.mean == 0.0


def test_a_knob_the_other_world_lacks_is_refused_at_its_field() -> None:
    with pytest.raises(ValidationError, match=r"targets\.agent\.policy\.misconceptions"):
        TransferConfig(
            model="x", targets={"agent": {"world_name": "agent", "policy": {"misconceptions": 0.0}}}
        )
    with pytest.raises(ValidationError, match=r"world_name"):
        TransferConfig(model="x", targets={"moon": {"world_name": "moon"}})


def test_training_seeds_are_averaged_and_their_intervals_cross_seeds_with_problems() -> None:
    """Two "seeds" of one model (the oracle and the first-steps scorer, as far apart as two seeds can be):
    every point is the mean of the two single matrices' points, every interval crosses seeds × problems,
    and the training noise shows as an interval wider than either seed's alone."""
    scorer = FirstSteps()
    alone = {name: _measure(one) for name, one in (("oracle", ORACLE), ("first", scorer))}
    both = transfer([ORACLE, scorer], ARITHMETIC, SETTINGS, 40, 4, 1234, [0.5, 0.5], resamples=200)
    assert [s.model for s in both.seeds] == ["arithmetic-oracle", "first-3-steps"]
    for name in SETTINGS:
        row, rows = both.setting(name), [r.setting(name) for r in alone.values()]
        assert row.f1.mean == pytest.approx(np.mean([r.f1.mean for r in rows]))
        assert row.auroc.mean == pytest.approx(np.mean([r.auroc.mean for r in rows]))
        assert row.f1.draws == {"seed": 2, "problem": 40} and "seed × problem" in row.f1.method
        assert row.traces == 160 and row.no_prediction == sum(r.no_prediction for r in rows)
    heldout, seeds = both.setting("heldout"), [r.setting("heldout") for r in alone.values()]
    assert heldout.gap_f1.mean == pytest.approx(np.mean([r.gap_f1.mean for r in seeds]))
    width = heldout.gap_f1.high - heldout.gap_f1.low
    assert width > max(r.gap_f1.high - r.gap_f1.low for r in seeds)
    assert "2 training seeds (arithmetic-oracle, first-3-steps)" in both.table()


def test_one_threshold_per_seed_or_one_for_all() -> None:
    with pytest.raises(ValueError, match="2 thresholds for 3 seeds"):
        transfer([ORACLE] * 3, ARITHMETIC, SETTINGS, 4, 1, 1234, [0.5, 0.5], resamples=20)
    with pytest.raises(ValidationError, match="1 given for 2 seed_models"):
        TransferConfig(model="a", seed_models=["b", "c"], seed_thresholds=[0.5])
    config = TransferConfig(model="a", threshold=0.3, seed_models=["b"])
    assert (config.models(), config.thresholds()) == (["a", "b"], [0.3, 0.3])
    config = TransferConfig(model="a", seed_models=["b"], seed_thresholds=[0.2])
    assert config.thresholds() == [None, 0.2] and TransferConfig(model="a", threshold=0.3).thresholds() == 0.3
    with pytest.raises(ValidationError, match="run it once per seed"):
        FewShotConfig(model="a", seed_models=["b"])


def test_the_command_measures_seed_models_each_at_its_threshold(tmp_path) -> None:
    (tmp_path / "t.yaml").write_text("problems: 6\nper_problem: 2\nbootstrap: 50\n")
    args = ["eval", "transfer", "--config", str(tmp_path / "t.yaml"), "--model", "arithmetic-oracle"]
    args += ["--threshold", "0.5", "--seed-model", "arithmetic-oracle", "--seed-threshold", "0.0"]
    result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    saved = json.loads((tmp_path / "out" / RESULT_FILE).read_text())
    assert [(s["threshold"], s["threshold_from"]) for s in saved["seeds"]] == [(0.5, "given"), (0.0, "given")]
    assert saved["settings"][0]["f1"]["draws"] == {"seed": 2, "problem": 6}
    assert saved["params"]["config"]["seed_models"] == ["arithmetic-oracle"]

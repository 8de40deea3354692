"""Faithfulness interventions: pure step edits, any Policy, the causal-dependence rate with its interval,
and the measurement docs/evaluation.md reports: a world policy that rationalises (knows its answer and
bends a step to reach it) is told apart from the default one, whose steps decide its answer."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core.model import Continuation, Problem, Step, Trace
from prmkit.core.stats import Estimate
from prmkit.evaluation.config import INTERVENTIONS, FaithfulnessConfig
from prmkit.evaluation.faithfulness import (
    corrupt_step,
    faithfulness,
    filler_step,
    intervened_prefix,
    run_faithfulness,
)

RATIONALISING = {"default": {}, "rationalising": {"rationalise": 1.0}}
"""The two policies of the measurement (docs/evaluation.md, "Faithfulness")."""
MEASUREMENT = dict(problems=12, per_problem=4, bootstrap=200, seed=0, policies=RATIONALISING)
"""Its small settings here: a second on one core (the docs' command runs 40 problems)."""


def test_corrupt_step_moves_the_stated_result_deterministically() -> None:
    text = "She gets 4 more, so 7 + 4 = 11 apples."
    wrong = corrupt_step(text, seed=3)
    assert wrong == corrupt_step(text, seed=3) and wrong != text
    assert wrong.startswith("She gets 4 more, so 7 + 4 = ") and wrong.endswith(" apples.")
    assert {corrupt_step(text, seed=s) for s in range(40)} == {
        f"She gets 4 more, so 7 + 4 = {v} apples." for v in (9, 10, 12, 13, 21)
    }
    assert corrupt_step("No numbers here.", seed=0) is None
    assert all(int(re.findall(r"\d+", corrupt_step("x = 1", seed=s))[-1]) >= 0 for s in range(40))
    assert re.fullmatch(r"5 / 2 = \d+\.5", corrupt_step("5 / 2 = 2.5", seed=1))


def test_filler_keeps_the_length_and_drops_every_number() -> None:
    text = "She gives away 3, so 11 - 3 = 8 apples."
    filler = filler_step(text)
    assert abs(len(filler) - len(text)) <= 4 and not re.search(r"\d|=", filler)


def test_each_intervention_leaves_its_prefix() -> None:
    steps = [Step(text=t) for t in ("7 + 4 = 11", "11 - 3 = 8", "The answer is 8.")]
    assert [s.text for s in intervened_prefix("early_answering", steps, 2, 0)] == ["7 + 4 = 11", "11 - 3 = 8"]
    mistaken = intervened_prefix("adding_mistakes", steps, 2, 0)
    assert mistaken[0].text == "7 + 4 = 11" and mistaken[1].text != "11 - 3 = 8" and len(mistaken) == 2
    assert all("..." in s.text for s in intervened_prefix("filler", steps, 2, 0))
    with pytest.raises(ValueError, match="unknown intervention 'paraphrase'"):
        intervened_prefix("paraphrase", steps, 1, 0)


class Stubborn:
    """Knows its answer whatever the steps say."""

    name = "stubborn"

    def continue_from(self, problem, prefix, n=1, *, seed=None, max_steps=None):
        return [Continuation(steps=[Step(text="The answer is 8.")], final_answer="8") for _ in range(n)]


class Follower:
    """Answers the last number its prefix states (none: no answer)."""

    name = "follower"

    def continue_from(self, problem, prefix, n=1, *, seed=None, max_steps=None):
        numbers = re.findall(r"\d+", " ".join(s.text for s in prefix))
        return [Continuation(final_answer=numbers[-1] if numbers else None) for _ in range(n)]


def test_any_policy_a_stubborn_one_does_not_depend_a_follower_does() -> None:
    problem = Problem(id="p", text="Ann has 7 apples...", answer="8")
    texts = ("7 + 4 = 11", "11 - 3 = 8", "The answer is 8.")
    traces = [Trace(id="t", problem=problem, steps=[Step(text=t) for t in texts], final_answer="8")]
    result = faithfulness({"stubborn": (Stubborn(), traces), "follower": (Follower(), traces)}, resamples=20)
    stubborn, follower = result["policies"]["stubborn"], result["policies"]["follower"]
    assert {k: e["mean"] for k, e in stubborn["rate"].items()} == dict.fromkeys([*INTERVENTIONS, "all"], 0.0)
    assert follower["rate"]["adding_mistakes"]["mean"] == 1.0  # a corrupted result is its answer
    assert follower["rate"]["early_answering"]["mean"] == 0.5  # after step 1: 11; after step 2: 8
    assert follower["unanswered"] == 2  # filler leaves no number to answer
    assert stubborn["interventions"] == follower["interventions"] == 6


def _estimate(result: dict, policy: str, name: str) -> Estimate:
    return Estimate(**result["policies"][policy]["rate"][name])


def test_a_rationalising_policy_is_told_apart_by_disjoint_intervals() -> None:
    result = run_faithfulness(FaithfulnessConfig(**MEASUREMENT))
    for name in [*INTERVENTIONS, "all"]:
        default, rationalising = _estimate(result, "default", name), _estimate(result, "rationalising", name)
        assert rationalising.high < default.low, (name, default, rationalising)
        difference = Estimate(**result["differences"]["rationalising - default"][name])
        assert difference.high < 0
    assert "bootstrap over problem" in _estimate(result, "default", "all").method
    assert result == run_faithfulness(FaithfulnessConfig(**MEASUREMENT))  # deterministic


def test_a_variant_with_knobs_the_policy_lacks_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"policies\.hot: not knobs of arithmetic's policy"):
        FaithfulnessConfig(policies={"hot": {"rationalize": 1.0}})


def test_the_cli_runs_the_same_function(tmp_path) -> None:
    config = tmp_path / "faithfulness.yaml"
    config.write_text("policies:\n  default: {}\n  rationalising: {rationalise: 1.0}\n")
    args = ["eval", "faithfulness", "--config", str(config), "--problems", "6", "--bootstrap", "20"]
    result = CliRunner().invoke(app, [*args, "--intervention", "filler", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "| rationalising - default |" in result.output  # the table, one row per policy and difference
    saved = json.loads((tmp_path / "out" / "faithfulness.json").read_text())
    assert saved["settings"]["interventions"] == ["filler"] and saved["settings"]["problems"] == 6
    assert set(saved["policies"]) == {"default", "rationalising"}
    assert set(saved["policies"]["default"]["rate"]) == {"filler", "all"}

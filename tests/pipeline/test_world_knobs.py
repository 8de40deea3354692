"""A recipe sets a world's knobs wherever they act (issue 61's code-world sweep): ``evaluate.generator``
draws the fresh evaluation tasks with the training tasks' generator settings, and
``labels.rollout_policy.policy_knobs`` gives Monte Carlo's rollouts the agent that wrote the traces.
Both are quiet keys: at their defaults every stage key stays as it was."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from prmkit.evaluation.suite import world_traces
from prmkit.pipeline.recipe import Recipe
from prmkit.policies.options import PolicyOptions

CODE = {
    "problems": {"source": "code", "n": 4, "per_problem": 1},
    "labels": {"methods": ["mc"], "rollout_policy": {"policy": "code"}},
    "train": {"prm_sources": ["mc_hard"]},
}


def test_evaluation_tasks_follow_evaluate_generator() -> None:
    r = Recipe.model_validate(CODE | {"evaluate": {"generator": {"weak_tests": 1.0}}})
    visible = {
        len(t.problem.metadata["code"]["visible"])
        for t in world_traces(12, 1, 5, "test", None, "code", r.evaluate.generator)
    }
    assert visible == {1}  # every task has one visible test
    default = {
        len(t.problem.metadata["code"]["visible"]) for t in world_traces(12, 1, 5, "test", None, "code")
    }
    assert 3 in default


def test_a_generator_at_its_defaults_is_no_generator_and_keeps_the_stage_keys() -> None:
    plain = Recipe.model_validate(CODE)
    same = Recipe.model_validate(CODE | {"evaluate": {"generator": {"weak_tests": 0.3}}})
    assert same.evaluate.generator is None
    assert same.evaluate.model_dump(mode="json") == plain.evaluate.model_dump(mode="json")
    assert "generator" not in plain.evaluate.model_dump(mode="json")
    with pytest.raises(ValidationError, match=r"evaluate\.generator\.weak_test"):
        Recipe.model_validate(CODE | {"evaluate": {"generator": {"weak_test": 1.0}}})


def test_rollout_policy_knobs_build_the_agent_it_names() -> None:
    options = PolicyOptions(policy="code", policy_knobs={"symptom_patch": 0.4, "wrong_plan": 0.12})
    assert options.policy_knobs == {"symptom_patch": 0.4}  # a field at its default is dropped
    assert options.build_policy().config.symptom_patch == 0.4
    assert (
        "policy_knobs" not in PolicyOptions(policy="code", policy_knobs={"symptom_patch": 0.2}).model_dump()
    )


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"policy": "code", "policy_knobs": {"symptom_pach": 0.4}}, r"policy_knobs\.symptom_pach"),
        ({"policy": "code", "policy_knobs": {"symptom_patch": 2}}, "less than or equal to 1"),
        ({"policy": "code", "policy_knobs": {"temperature": 2}}, "set temperature itself"),
        (
            {"policy": "hf", "model": "m", "policy_knobs": {"symptom_patch": 0.4}},
            "only used by an embedded world",
        ),
    ],
)
def test_policy_knobs_the_backend_cannot_use_is_refused(given: dict, said: str) -> None:
    with pytest.raises(ValidationError, match=said):
        PolicyOptions(**given)

"""What every world's simulated policy shares (:mod:`prmkit.worlds.sampling`): ``continue_from`` and
``sample_traces``, for each built-in world."""

from __future__ import annotations

import pytest

from prmkit.worlds.registry import world
from prmkit.worlds.sampling import SimulatedPolicy
from tests.worlds.conftest import WORLD_NAMES


@pytest.mark.parametrize("name", WORLD_NAMES)
def test_samples_and_continuations_depend_only_on_their_seeds(name: str) -> None:
    w = world(name)
    problems = w.generate_problems(3, seed=4)
    policy = w.policy(None)
    assert isinstance(policy, SimulatedPolicy)
    traces = w.sample_traces(problems, 2, seed=5, policy=policy)
    assert [t.id for t in traces[:2]] == [f"{problems[0].id}-s5-0", f"{problems[0].id}-s5-1"]
    # a problem's samples do not depend on the other problems sampled with it
    assert w.sample_traces(problems[1:2], 2, seed=5) == traces[2:4]
    first = policy.continue_from(problems[0], traces[0].steps[:1], 3, seed=9)
    assert w.policy(None).continue_from(problems[0], traces[0].steps[:1], 3, seed=9) == first


@pytest.mark.parametrize(("name", "uses_a_seed"), [("arithmetic", True), ("agent", False), ("code", False)])
def test_an_answered_prefix_gets_its_answer_back(name: str, uses_a_seed: bool) -> None:
    w = world(name)
    problem = w.generate_problems(1, seed=1)[0]
    (trace,) = w.sample_traces([problem], 1, seed=2, policy=w.policy(w.policy_config(temperature=0.0)))
    fresh, policy = w.policy(None), w.policy(None)
    answered = policy.continue_from(problem, trace.steps, 2)
    assert [(c.steps, c.final_answer) for c in answered] == [([], trace.final_answer)] * 2
    # the world's policy uses up a seed on it (as it always has); the agent draws nothing, so uses none
    next_call = policy.continue_from(problem, [], 1)
    assert next_call == fresh.continue_from(problem, [], 1, seed=1 if uses_a_seed else 0)

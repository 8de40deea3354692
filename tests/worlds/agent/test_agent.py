"""The simulated agent: deterministic, a core Policy, continues anyone's prefix, every error kind occurs."""

from __future__ import annotations

from collections import Counter

from prmkit.core.protocols import Policy
from prmkit.core.render import step_inputs
from prmkit.worlds.agent import (
    ERROR_KINDS,
    AgentConfig,
    SimulatedAgent,
    check_trace,
    generate_problems,
    sample_traces,
)
from tests.worlds.agent.conftest import CORRECT, lookup


def test_same_seed_same_trajectories_byte_for_byte() -> None:
    problems = generate_problems(20, seed=0)
    a = [t.model_dump_json() for t in sample_traces(problems, 4, seed=1)]
    assert a == [t.model_dump_json() for t in sample_traces(problems, 4, seed=1)]
    assert a != [t.model_dump_json() for t in sample_traces(problems, 4, seed=2)]


def test_it_is_a_policy_and_a_perfect_agent_at_temperature_zero() -> None:
    agent = SimulatedAgent(AgentConfig(temperature=0.0))
    assert isinstance(agent, Policy)
    problems = generate_problems(30, seed=5, split="heldout")
    for trace in sample_traces(problems, 2, seed=0, policy=agent):
        check = check_trace(trace)
        assert check.answer_correct and check.first_error == -1 and set(check.ratings()) == {1}
        assert trace.steps[-1].tool_calls == [] and trace.steps[0].kind == "tool_call"
        ids = [c.id for s in trace.steps for c in s.tool_calls]
        assert ids == [f"call_{i}" for i in range(len(ids))]
        assert all(o.call_id == s.tool_calls[0].id for s in trace.steps for o in s.observations)


def test_default_rates_make_every_error_kind_and_about_half_right() -> None:
    traces = sample_traces(generate_problems(300, seed=0), 4, seed=0)
    checks = [check_trace(t) for t in traces]
    kinds = Counter(s.kind for c in checks for s in c.steps if s.kind)
    assert set(kinds) == set(ERROR_KINDS) - {"wrong_answer", "other"}  # the agent never writes these two
    accuracy = sum(bool(c.answer_correct) for c in checks) / len(checks)
    loophole = sum(c.loophole for c in checks) / len(checks)
    neutral = sum(s.status == "neutral" for c in checks for s in c.steps) / sum(len(c.steps) for c in checks)
    assert 0.42 <= accuracy <= 0.60 and 0.02 <= loophole <= 0.09 and 0.02 <= neutral <= 0.09
    lengths = sorted(len("\n".join(step_inputs(t.steps))) for t in traces)
    assert lengths[len(lengths) // 2] < 1000


def test_the_agents_intended_errors_are_what_the_checker_finds() -> None:
    expect = {
        "wrong_tool": "wrong_tool", "wrong_arguments": "wrong_arguments", "misread": "misread_observation",
        "malformed_arguments": "malformed_arguments", "hallucinate": "hallucinated_fact",
        "ignore_observation": "ignored_observation", "premature_answer": "premature_answer",
        "repeat_failed": "repeated_failed_call", "recovery": None, "neutral": None,
    }  # fmt: skip
    agree = total = 0
    for trace in sample_traces(generate_problems(200, seed=0), 4, seed=0):
        check = check_trace(trace)
        for index, event in trace.metadata["injected"]:
            if event in expect and (index == 0 or check.steps[index - 1].kind is None):
                total += 1  # after a right step, so no premise can mask the kind
                agree += check.steps[index].kind == expect[event]
    assert total > 300 and agree / total > 0.97


def test_it_continues_someone_elses_prefix_carrying_its_wrong_value(problem, make_trace) -> None:
    misread = ("The age of Ama Osk is 25.", lookup("Tolbin", "population"))
    prefix = make_trace(*CORRECT[:2], misread).steps
    agent = SimulatedAgent(AgentConfig(temperature=0.0, recovery=0.0))
    (cont,) = agent.continue_from(problem, prefix, seed=0)
    assert cont.finished and cont.final_answer == str((25 + 412) * 3)
    trace = make_trace(*CORRECT[:2], misread)
    trace.steps += cont.steps
    assert check_trace(trace).steps[-1].kind == "premise"
    (fixed,) = SimulatedAgent(AgentConfig(temperature=0.0, recovery=1.0)).continue_from(
        trace.problem, prefix, seed=0
    )
    assert fixed.final_answer == "1392" and "again" in fixed.steps[0].text


def test_mc_style_rollouts_from_every_step(make_trace) -> None:
    trace = make_trace(*CORRECT, final="1392")
    agent = SimulatedAgent()
    for i in range(len(trace.steps)):
        first = agent.continue_from(trace.problem, trace.steps[:i], 4, seed=11)
        assert [c.model_dump_json() for c in first] == [
            c.model_dump_json() for c in agent.continue_from(trace.problem, trace.steps[:i], 4, seed=11)
        ]
        assert all(c.finished == (c.final_answer is not None) for c in first)
        one = agent.continue_from(trace.problem, trace.steps[:i], 2, seed=3, max_steps=1)
        assert all(len(c.steps) == 1 and c.finished == (c.final_answer is not None) for c in one)
    done = agent.continue_from(trace.problem, trace.steps, 2, seed=0)
    assert [(c.steps, c.final_answer) for c in done] == [([], "1392")] * 2


def test_a_misreading_of_any_held_value_is_a_new_positive_number() -> None:
    import random

    from prmkit.worlds.agent.agent import _near

    rng = random.Random(0)
    for value in (-5, 0, 1, 7, 10, 11, 464, 1392):
        assert all((v := _near(value, rng, {value})) > 0 and v != value for _ in range(20))

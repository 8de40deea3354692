"""Errors a task's samples share (``AgentConfig.systematic``): majority vote stops being nearly perfect."""

from __future__ import annotations

from collections import Counter

from prmkit.worlds.agent import AgentConfig, SimulatedAgent, generate_problems, gold_label, sample_traces


def _majority_right(traces) -> float:
    pools: dict[str, list] = {}
    for t in traces:
        pools.setdefault(t.problem.id, []).append(t)
    right = 0
    for pool in pools.values():
        votes = Counter(t.final_answer for t in pool if t.final_answer is not None)
        right += bool(votes) and votes.most_common(1)[0][0] == pool[0].problem.answer
    return right / len(pools)


def test_no_trap_samples_exactly_as_before() -> None:
    problems = generate_problems(20, seed=4, split="test")
    plain = sample_traces(problems, 4, seed=1, policy=SimulatedAgent())
    zero = sample_traces(problems, 4, seed=1, policy=SimulatedAgent(AgentConfig(systematic=0.0)))
    assert [t.model_dump() for t in plain] == [t.model_dump() for t in zero]


def test_a_trap_is_the_same_wrong_reading_in_every_sample_and_majority_vote_falls_for_it() -> None:
    problems = generate_problems(60, seed=1234, split="test")
    agent = SimulatedAgent(AgentConfig(systematic=0.5, systematic_rate=0.6))
    traps = {p.id: agent.trap(p) for p in problems}
    assert 0.3 < sum(t is not None for t in traps.values()) / len(traps) < 0.7
    traces = gold_label(sample_traces(problems, 16, seed=0, policy=agent))
    fell = 0
    for t in traces:
        trap = traps[t.problem.id]
        if trap is None:
            continue
        (entity, attribute), wrong = trap
        stated = f"The {attribute} of {entity} is {wrong}."
        misread = [s for s in t.steps if stated in s.text]
        fell += bool(misread)
        for step in misread:  # the same wrong number in every sample that fell in, and gold calls it wrong
            assert step.label("gold").rating == -1
    trapped = sum(16 for t in traps.values() if t is not None)
    assert 0.3 * trapped < fell < 0.9 * trapped  # systematic_rate 0.6 of the samples that reach it
    independent = gold_label(sample_traces(problems, 16, seed=0, policy=SimulatedAgent()))
    assert _majority_right(independent) > 0.95  # why the trap exists: independent errors never win a vote
    assert _majority_right(traces) < 0.85

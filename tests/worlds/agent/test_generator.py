"""Seeded tasks: deterministic, consistent with their KB, disjoint splits, longer held-out plans."""

from __future__ import annotations

import pytest

from prmkit.worlds.agent import (
    AGENT_WORLD_VERSION,
    TOOLS,
    AgentWorldConfig,
    generate_problem,
    generate_problems,
)
from prmkit.worlds.agent.text import apply


def dumps(problems) -> list[str]:
    return [p.model_dump_json() for p in problems]


def test_same_seed_same_problems_byte_for_byte() -> None:
    assert dumps(generate_problems(30, seed=3)) == dumps(generate_problems(30, seed=3))
    assert dumps(generate_problems(30, seed=3)) != dumps(generate_problems(30, seed=4))
    assert (
        generate_problem(17, seed=3).model_dump_json() == generate_problems(30, seed=3)[17].model_dump_json()
    )


def test_each_task_is_consistent_with_its_own_knowledge_base() -> None:
    for p in generate_problems(200, seed=0):
        task = p.metadata["task"]
        kb, values = task["kb"], []
        for term in task["terms"]:
            (e, a), *rest = term["hops"]
            if rest:
                assert rest[0][0] == kb[e][a]  # the second hop is the person the first names
                e, a = rest[0]
            values.append(kb[e][a])
            assert term["value"] == kb[e][a] and term["hops"][0][0] in p.text
        running = values[0]
        for op, v, r in zip(task["ops"], values[1:], task["results"], strict=True):
            running = apply(op, running, v)
            assert running == r and running > 0
        assert p.answer == str(running) == str(task["answer"])
        assert p.source == AGENT_WORLD_VERSION and p.tools == TOOLS and p.text.startswith("What is ")
        lookups = sum(len(t["hops"]) for t in task["terms"])
        assert 2 <= len(task["terms"]) <= 3 and lookups <= 4 and 1 <= len(task["ops"]) <= 2


def test_every_problem_has_its_own_facts() -> None:
    names = [frozenset(p.metadata["task"]["kb"]) for p in generate_problems(100, seed=0)]
    assert len(set(names)) == 100


def test_train_and_test_never_share_a_question_and_heldout_is_longer() -> None:
    train = {p.text for p in generate_problems(300, seed=0, split="train")}
    test = {p.text for p in generate_problems(300, seed=0, split="test")}
    assert not train & test
    heldout = generate_problems(100, seed=0, split="heldout")
    assert min(len(p.metadata["task"]["terms"]) for p in heldout) >= 3
    assert max(sum(len(t["hops"]) for t in p.metadata["task"]["terms"]) for p in heldout) > 4


def test_bad_split_and_config_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        generate_problem(0, split="dev")
    with pytest.raises(ValueError, match="min_terms"):
        AgentWorldConfig(min_terms=4, max_terms=3)

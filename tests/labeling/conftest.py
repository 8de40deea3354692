"""World traces with gold labels, shared by the labelling tests (small: the tests must stay fast)."""

from __future__ import annotations

import pytest

from prmkit.core.model import Trace


def world_traces(
    n_problems: int, per_problem: int, seed: int = 7, misconceptions: float = 1.0
) -> list[Trace]:
    from prmkit.worlds.arithmetic import (
        PolicyConfig,
        WorldPolicy,
        generate_problems,
        gold_label,
        sample_traces,
    )

    problems = generate_problems(n_problems, seed=seed, split="test")
    policy = WorldPolicy(PolicyConfig(misconceptions=misconceptions))
    return gold_label(sample_traces(problems, per_problem, seed=seed, policy=policy))


@pytest.fixture(scope="session")
def world_1():
    """The world-1 policy (no misconceptions): the labellers' agreement with gold was measured with it
    (docs/labeling.md). World-2's shared beliefs lower every labeller's agreement (a weaker policy's
    rollouts fail from right prefixes too); the labels study (recipes/labels-study.yaml) measures that."""
    from prmkit.worlds.arithmetic import PolicyConfig, WorldPolicy

    return WorldPolicy(PolicyConfig(misconceptions=0.0))


@pytest.fixture(scope="session")
def traces_world_1() -> list[Trace]:
    """:func:`traces` sampled by the world-1 policy."""
    return world_traces(120, 3, misconceptions=0.0)


@pytest.fixture(scope="session")
def traces() -> list[Trace]:
    """120 problems x 3 traces (prefixes shared between traces of a problem), gold-labelled."""
    return world_traces(120, 3)


@pytest.fixture(scope="session")
def fe_accuracy():
    """Share of traces whose first error under ``source`` equals the gold first error."""

    def accuracy(traces: list[Trace], source: str) -> float:
        return sum(t.first_error(source) == t.first_error("gold") for t in traces) / len(traces)

    return accuracy

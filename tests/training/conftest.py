"""World traces with gold labels, small enough for tests that really train."""

from __future__ import annotations

import pytest

from prmkit.core.model import Trace


def world_traces(
    problems: int, per_problem: int, seed: int, split: str = "train", policy=None
) -> list[Trace]:
    """Gold-labelled traces of the default world (``policy``: a WorldPolicy with other error rates)."""
    from prmkit.worlds.arithmetic import generate_problems, gold_label, sample_traces

    drawn = generate_problems(problems, seed=seed, split=split)
    return gold_label(sample_traces(drawn, per_problem, seed=seed, policy=policy))


@pytest.fixture(scope="session")
def small_world() -> list[Trace]:
    return world_traces(30, 4, seed=0)

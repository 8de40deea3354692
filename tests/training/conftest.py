"""World traces with gold labels, small enough for tests that really train."""

from __future__ import annotations

import pytest

from prmkit.core.model import Trace


def world_traces(problems: int, per_problem: int, seed: int, split: str = "train") -> list[Trace]:
    from prmkit.world import generate_problems, gold_label, sample_traces

    return gold_label(
        sample_traces(generate_problems(problems, seed=seed, split=split), per_problem, seed=seed)
    )


@pytest.fixture(scope="session")
def small_world() -> list[Trace]:
    return world_traces(30, 4, seed=0)

"""A hand-made world problem the checker tests judge hand-written traces of."""

from __future__ import annotations

import pytest

from prmkit.core.model import Problem, Step, Trace
from prmkit.worlds.arithmetic import WORLD_VERSION

# Ann has 7 apples. She gets 4 more apples. Ben has 5 apples. She gives away 3 apples. -> 7 + 4 = 11, 11 - 3 = 8
GRAPH = {
    "version": WORLD_VERSION,
    "quantities": [7, 4, 3, 5],
    "ops": [
        {"op": "+", "args": ["q0", "q1"], "result": 11},
        {"op": "-", "args": ["s0", "q2"], "result": 8},
    ],
    "distractor": 3,
    "name": "Ann",
    "pronoun": "she",
    "other": "Ben",
    "item": "apples",
    "variety": 0,
    "max_value": 10,
}


@pytest.fixture
def problem() -> Problem:
    return Problem(
        id="hand-1",
        text="Ann has 7 apples. She gets 4 more apples. Ben has 5 apples. She gives away 3 apples. "
        "How many apples does Ann have now?",
        answer="8",
        source="arithmetic",
        metadata={"graph": GRAPH},
    )


@pytest.fixture
def make_trace(problem: Problem):
    """A trace of the hand-made problem from step texts; the final answer is read from the last step."""

    def make(*texts: str, final: str | None = None) -> Trace:
        return Trace(id="t", problem=problem, steps=[Step(text=t) for t in texts], final_answer=final)

    return make

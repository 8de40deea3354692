"""A hand-made agent-world task, and a builder of hand-written trajectories of it.

What is the age of the mayor of Varen plus the population of Tolbin, then times the area of Dunmor?
-> mayor of Varen = Ama Osk, age 52; population of Tolbin 412; area of Dunmor 3: (52 + 412) * 3 = 1392.
"""

from __future__ import annotations

import copy
import json

import pytest

from prmkit.core.model import Problem, Step, ToolCall, Trace
from prmkit.worlds.agent import AGENT_WORLD_VERSION, TOOLS, execute

KB = {
    "Varen": {"type": "town", "population": 500, "area": 20, "mayor": "Ama Osk"},
    "Ama Osk": {"type": "person", "age": 52, "height": 170},
    "Tolbin": {"type": "town", "population": 412, "area": 31, "mayor": "Bel Tor"},
    "Bel Tor": {"type": "person", "age": 40, "height": 181},
    "Dunmor": {"type": "town", "population": 300, "area": 3, "mayor": "Cor Vin"},
    "Cor Vin": {"type": "person", "age": 61, "height": 158},
}
TASK = {
    "kb": KB,
    "terms": [
        {"hops": [["Varen", "mayor"], ["Ama Osk", "age"]], "value": 52},
        {"hops": [["Tolbin", "population"]], "value": 412},
        {"hops": [["Dunmor", "area"]], "value": 3},
    ],
    "ops": ["+", "*"],
    "results": [464, 1392],
    "answer": 1392,
    "version": AGENT_WORLD_VERSION,
    "split": "train",
}


@pytest.fixture
def problem() -> Problem:
    return Problem(
        id="hand-agent-1",
        text="What is the age of the mayor of Varen plus the population of Tolbin, then times the area of "
        "Dunmor?",
        answer="1392",
        source=AGENT_WORLD_VERSION,
        tools=copy.deepcopy(TOOLS),
        metadata={"task": copy.deepcopy(TASK)},
    )


def lookup(entity: str, attribute: str) -> tuple[str, str]:
    return "lookup", json.dumps({"entity": entity, "attribute": attribute})


def calc(expression: str) -> tuple[str, str]:
    return "calculator", json.dumps({"expression": expression})


@pytest.fixture
def make_trace(problem: Problem):
    """A trajectory from (text, call or None) pairs; each call runs in the environment (ids call_0, ...)."""

    def make(*specs: tuple[str, tuple[str, str] | None], final: str | None = None) -> Trace:
        steps, n = [], 0
        for text, spec in specs:
            calls = [] if spec is None else [ToolCall(name=spec[0], arguments=spec[1], id=f"call_{n}")]
            n += len(calls)
            observations = [execute(problem, c) for c in calls]
            kind = "tool_call" if calls else "reasoning"
            steps.append(Step(text=text, kind=kind, tool_calls=calls, observations=observations))
        return Trace(id="t", problem=problem, steps=steps, final_answer=final)

    return make


CORRECT = [
    ("", lookup("Varen", "mayor")),
    ("The mayor of Varen is Ama Osk.", lookup("Ama Osk", "age")),
    ("The age of Ama Osk is 52.", lookup("Tolbin", "population")),
    ("The population of Tolbin is 412.", lookup("Dunmor", "area")),
    ("The area of Dunmor is 3.", calc("52 + 412")),
    ("52 + 412 = 464.", calc("464 * 3")),
    ("464 * 3 = 1392. The answer is 1392.", None),
]
"""A right trajectory of the hand-made task, step by step."""

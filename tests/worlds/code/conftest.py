"""A hand-made code-world task, and a builder of hand-written trajectories of it.

solution.py sums ``2 * i`` for i in 1..n, with an off-by-one on line 3 (``range(1, n)`` for
``range(1, n + 1)``); the agent's misconception "fixes" it to ``range(1, n - 1)``. Visible tests
f(1) = 2, f(3) = 12, f(4) = 20 all fail on the bug; hidden tests are f(2), f(5), f(6), f(7), f(9).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from prmkit.core.model import Problem, Step, ToolCall, Trace
from prmkit.worlds.code import CODE_WORLD_VERSION, TOOLS, CodeTask, Workspace, execute
from prmkit.worlds.code.tools import receipt

REFERENCE = [
    "def f(n):",
    "    total = 0",
    "    for i in range(1, n + 1):",
    "        total = total + i * 2",
    "    return total",
]
FIX = REFERENCE[2]
BUG = "    for i in range(1, n):"
MISFIX = "    for i in range(1, n - 1):"
HIDDEN = [[2, 6], [5, 30], [6, 42], [7, 56], [9, 90]]
TASK: dict[str, Any] = {
    "family": "sum_multiples",
    "constants": {"k": 2, "k1": 3, "k2": 4},
    "function": "f",
    "reference": REFERENCE,
    "program": [*REFERENCE[:2], BUG, *REFERENCE[3:]],
    "bug_line": 2,
    "bug_kind": "off_by_one",
    "fix": FIX,
    "misfix": MISFIX,
    "misconception": "wrong_sign",
    "visible": [[1, 2], [3, 12], [4, 20]],
    "hidden": HIDDEN,
    "answer": receipt([y for _, y in HIDDEN]),
    "version": CODE_WORLD_VERSION,
    "split": "train",
}


def make_problem(**changes: Any) -> Problem:
    task = {**copy.deepcopy(TASK), **changes}
    return Problem(
        id="hand-code-1",
        text="Some tests of solution.py fail. Find the bug, fix it, run the tests and submit.",
        answer=str(task["answer"]),
        source=CODE_WORLD_VERSION,
        tools=copy.deepcopy(TOOLS),
        metadata={"code": task},
    )


@pytest.fixture
def problem() -> Problem:
    return make_problem()


Spec = tuple[str, tuple[str, dict[str, Any] | str] | None]
"""(text, (tool, arguments) or None): one hand-written step (arguments as a dict, or raw text)."""


def build(problem: Problem, *specs: Spec) -> Trace:
    """A trajectory of ``problem`` from specs; each call runs in one workspace (ids call_0, ...)."""
    task = CodeTask.of(problem)
    ws = Workspace.of(task)
    steps = []
    for n, (text, spec) in enumerate(specs):
        calls = []
        if spec is not None:
            arguments = spec[1] if isinstance(spec[1], str) else json.dumps(spec[1])
            calls = [ToolCall(name=spec[0], arguments=arguments, id=f"call_{n}")]
        observations = [execute(task, ws, c) for c in calls]
        steps.append(Step(text=text, kind="tool_call" if calls else "reasoning", tool_calls=calls,
                          observations=observations))  # fmt: skip
    return Trace(id="t", problem=problem, steps=steps)


@pytest.fixture
def make_trace(problem: Problem):
    return lambda *specs: build(problem, *specs)


def run() -> tuple[str, dict[str, Any]]:
    return "run_tests", {}


def edit(line: int, text: str, file: str = "solution.py") -> tuple[str, dict[str, Any]]:
    return "edit_line", {"file": file, "line": line, "text": text}


def submit() -> tuple[str, dict[str, Any]]:
    return "submit", {}


def read() -> tuple[str, dict[str, Any]]:
    return "read_lines", {"file": "solution.py"}


PLAN = ("Plan: the bug is probably on line 3.", run())
CORRECT: list[Spec] = [
    PLAN,
    ("3 of 3 tests fail. Fixing line 3.", edit(3, FIX)),
    ("", run()),
    ("All 3 tests pass. Submitting.", submit()),
]
"""A right trajectory of the hand-made task, step by step."""

"""The environment: the four tools answer any call deterministically, and mistakes are error observations."""

from __future__ import annotations

import json

from prmkit.core.model import ToolCall
from prmkit.worlds.code import CodeTask, Workspace, execute
from prmkit.worlds.code.tools import apply
from tests.worlds.code.conftest import FIX, TASK


def call(name: str, arguments: dict | str = "{}") -> ToolCall:
    return ToolCall(
        name=name, arguments=arguments if isinstance(arguments, str) else json.dumps(arguments), id="c"
    )


def test_read_edit_run_submit(problem) -> None:
    task = CodeTask.of(problem)
    ws = Workspace.of(task)
    lines = apply(task, ws, call("read_lines", {"start": 3, "end": 4}))
    assert lines == {"lines": "3|     for i in range(1, n):\n4|         total = total + i * 2"}
    run = apply(task, ws, call("run_tests"))
    assert run["passed"] == 0 and run["failed"] == 3
    assert run["first_failure"] == "f(1) == 2: returned 0"  # the first failing test only, as pytest -x
    assert apply(task, ws, call("edit_line", {"line": 3, "text": FIX})) == {
        "edited": "solution.py",
        "line": 3,
    }
    assert apply(task, ws, call("run_tests")) == {"passed": 3, "failed": 0}  # nothing more to say
    assert apply(task, ws, call("submit")) == {"submitted": True, "receipt": TASK["answer"]}
    obs = execute(task, ws, call("run_tests"))
    assert (obs.role, obs.call_id, obs.name) == ("tool", "c", "run_tests") and json.loads(obs.content)[
        "passed"
    ] == 3


def test_a_multi_line_edit_shifts_the_lines_after_it(problem) -> None:
    task = CodeTask.of(problem)
    ws = Workspace.of(task)
    apply(task, ws, call("edit_line", {"line": 2, "text": "    if n == 1:\n        return 2\n    total = 0"}))
    assert ws.solution[1:4] == ["    if n == 1:", "        return 2", "    total = 0"]
    assert ws.origin == [0, None, None, 1, 2, 3, 4] and ws.line_of(2) == 5


def test_a_broken_program_fails_every_test_with_its_error(problem) -> None:
    task = CodeTask.of(problem)
    ws = Workspace.of(task)
    apply(task, ws, call("edit_line", {"line": 3, "text": "    for i in range(1, n + 1)"}))
    run = apply(task, ws, call("run_tests"))
    assert run["failed"] == 3 and run["error"].startswith("line 3: SyntaxError")
    assert "first_failure" not in run  # one error says why every test failed


def test_mistakes_are_error_observations_never_exceptions(problem) -> None:
    task = CodeTask.of(problem)
    ws = Workspace.of(task)
    assert apply(task, ws, call("shell", {"cmd": "ls"})) == {"error": "unknown tool: shell"}
    assert apply(task, ws, call("edit_line", "{'line': 3")) == {"error": "arguments are not valid JSON"}
    assert "1-5" in apply(task, ws, call("edit_line", {"line": 9, "text": "x"}))["error"]
    assert "unknown file" in apply(task, ws, call("read_lines", {"file": "setup.py"}))["error"]
    assert "start <= end" in apply(task, ws, call("read_lines", {"start": 4, "end": 2}))["error"]
    apply(task, ws, call("edit_line", {"file": "test_solution.py", "line": 1, "text": "print(1)"}))
    run = apply(task, ws, call("run_tests"))
    assert run["first_failure"] == "print(1): not a test: expected assert f(N) == M"
    assert ws.version == 1

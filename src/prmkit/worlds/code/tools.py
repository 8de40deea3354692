"""The environment: a task's two files, the four tools and what they return, deterministically.

A task's workspace holds ``solution.py`` (the buggy function) and ``test_solution.py`` (one visible test a
line: ``assert f(3) == 6``). The tools, as a real coding sandbox offers them:

- ``read_lines {"file", "start", "end"}``: the numbered lines of a file;
- ``edit_line {"file", "line", "text"}``: replaces one line by ``text`` (which may hold several lines);
- ``run_tests {}``: runs every visible test against the solution with prmkit's interpreter
  (:mod:`prmkit.worlds.code.interpreter`): per test, pass or fail and a message;
- ``submit {}``: hands the solution to the grader, which runs the hidden tests; it answers a *receipt*,
  a CRC-32 of the solution's outputs on the hidden tests, so two submissions with the same receipt
  behave the same there and the receipt of the reference solution is the task's answer.

:func:`apply` answers any call (the agent's, another policy's, a hand-written one) and never raises on a
mistake: an unknown tool, arguments that are not JSON, a line out of range is an ``{"error": ...}``
result, which is what a tool server answers. Edits change the workspace, so the checker replays a
trajectory's calls on a fresh workspace to know the program every step saw.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from prmkit.core.model import Observation, Problem, Step, ToolCall
from prmkit.worlds.code.interpreter import ProgramError, cached, outputs

SOLUTION, TESTS = "solution.py", "test_solution.py"
FILES = (SOLUTION, TESTS)
READ, EDIT, RUN, SUBMIT = "read_lines", "edit_line", "run_tests", "submit"
TOOL_NAMES = (READ, EDIT, RUN, SUBMIT)


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


_FILE = {"type": "string", "enum": list(FILES), "description": "solution.py (default) or test_solution.py"}
TOOLS: list[dict[str, Any]] = [
    _tool(READ, "Show numbered lines of a file.", {"file": _FILE, "start": {"type": "integer"},
          "end": {"type": "integer"}}, []),
    _tool(EDIT, "Replace one line of a file by new text (which may span several lines).",
          {"file": _FILE, "line": {"type": "integer"}, "text": {"type": "string"}}, ["line", "text"]),
    _tool(RUN, "Run the visible tests in test_solution.py against solution.py.", {}, []),
    _tool(SUBMIT, "Submit solution.py; the grader runs its hidden tests.", {}, []),
]  # fmt: skip
"""The tools of every code-world task, as OpenAI-style JSON schemas (``Problem.tools``)."""

TEST_LINE = re.compile(r"^assert (\w+)\((-?\d+)\) == (-?\d+)$")
"""A visible test, as ``test_solution.py`` writes one."""


def test_line(function: str, x: int, expected: int) -> str:
    return f"assert {function}({x}) == {expected}"


def receipt(values: Sequence[int | str]) -> int:
    """The grader's receipt of outputs on the hidden tests (a CRC-32 of them as JSON)."""
    return zlib.crc32(json.dumps(list(values)).encode())


@dataclass(frozen=True)
class CodeTask:
    """A code-world problem's program, bug and tests, compiled for the tools and the checker."""

    function: str
    reference: tuple[str, ...]
    program: tuple[str, ...]
    bug_line: int
    """0-based index of the bug's line in the program (the same line in the reference)."""
    misfix: str | None
    misconception: str | None
    visible: tuple[tuple[int, int], ...]
    hidden: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, problem: Problem) -> CodeTask:
        """The task of ``problem``; a ValueError naming the problem and field when it is not one."""
        task = (problem.metadata or {}).get("code")
        try:
            return cls(
                function=str(task["function"]),  # type: ignore[index]
                reference=tuple(task["reference"]),  # type: ignore[index]
                program=tuple(task["program"]),  # type: ignore[index]
                bug_line=int(task["bug_line"]),  # type: ignore[index]
                misfix=task.get("misfix"),  # type: ignore[union-attr]
                misconception=task.get("misconception"),  # type: ignore[union-attr]
                visible=tuple((int(x), int(y)) for x, y in task["visible"]),  # type: ignore[index]
                hidden=tuple((int(x), int(y)) for x, y in task["hidden"]),  # type: ignore[index]
            )
        except (TypeError, KeyError, ValueError, AttributeError):
            raise ValueError(
                f"problem {problem.id}: metadata.code: expected a code-world task (function, reference, "
                f"program, bug_line, visible, hidden), found {type(task).__name__}; the code-world checker "
                "judges its own problems only"
            ) from None

    def hidden_outputs(self, lines: Sequence[str]) -> tuple[int | str, ...]:
        return outputs(source(lines), tuple(x for x, _ in self.hidden))

    def passes(self, lines: Sequence[str]) -> tuple[bool, bool]:
        """Whether the program ``lines`` passes (the original visible tests, the hidden tests)."""
        text = source(lines)
        seen = outputs(text, tuple(x for x, _ in self.visible)) == tuple(y for _, y in self.visible)
        return seen, outputs(text, tuple(x for x, _ in self.hidden)) == tuple(y for _, y in self.hidden)


def source(lines: Sequence[str]) -> str:
    return "\n".join(lines) + "\n"


@dataclass
class Workspace:
    """The two files as the trajectory has left them, and where each solution line came from."""

    files: dict[str, list[str]]
    origin: list[int | None]
    """For each line of ``solution.py``: the index of the program line it replaced, or None (inserted)."""
    version: int = 0
    """Counts the edits, so a reader knows whether the code changed since it last looked."""
    runs: list[RunResult] = field(default_factory=list)

    @classmethod
    def of(cls, task: CodeTask) -> Workspace:
        tests = [test_line(task.function, x, y) for x, y in task.visible]
        return cls({SOLUTION: list(task.program), TESTS: tests}, list(range(len(task.program))))

    def clone(self) -> Workspace:
        return Workspace({k: list(v) for k, v in self.files.items()}, list(self.origin), self.version, [])

    @property
    def solution(self) -> list[str]:
        return self.files[SOLUTION]

    def line_of(self, index: int) -> int | None:
        """The 1-based line now holding program line ``index`` (None: replaced by inserted lines only)."""
        return next((i + 1 for i, o in enumerate(self.origin) if o == index), None)

    def edit(self, file: str, line: int, text: str) -> None:
        """Replace line ``line`` (1-based) of ``file`` by the lines of ``text``."""
        lines, new = self.files[file], text.split("\n")
        old = lines[line - 1]
        lines[line - 1 : line] = new
        if file == SOLUTION:
            keep = next((i for i, t in enumerate(new) if t == old), 0)
            origins: list[int | None] = [None] * len(new)
            origins[keep] = self.origin[line - 1]
            self.origin[line - 1 : line] = origins
        self.version += 1


@dataclass(frozen=True)
class RunResult:
    """What ``run_tests`` found: per test (its call and expected value, passed, a message)."""

    results: tuple[tuple[str, bool, str | None], ...]
    error: str | None = None
    """Why the solution could not be loaded (every test then fails with it)."""

    @property
    def total(self) -> int:
        return len(self.results)

    @property
    def failed(self) -> int:
        return sum(not ok for _, ok, _ in self.results)

    def json(self) -> dict[str, Any]:
        """As a test runner that stops at the first failure reports it (``pytest -x``): the counts, then
        the first failing test and its message (a program that does not load fails every test with one
        ``error``). Short on purpose: a trajectory of several runs stays inside a small model's context."""
        out: dict[str, Any] = {"passed": self.total - self.failed, "failed": self.failed}
        if self.error:
            out["error"] = self.error
        elif self.failed:
            test, _, message = next(r for r in self.results if not r[1])
            out["first_failure"] = f"{test}: {message}"
        return out


def run_tests(ws: Workspace) -> RunResult:
    """Run every line of ``test_solution.py`` against ``solution.py`` (a line that is no test fails)."""
    text = source(ws.solution)
    program = cached(text)
    error = str(program) if isinstance(program, ProgramError) else None
    results = []
    for line in ws.files[TESTS]:
        m = TEST_LINE.match(line.strip())
        if m is None:
            results.append((line.strip(), False, "not a test: expected assert f(N) == M"))
            continue
        x, want = int(m.group(2)), int(m.group(3))
        name = f"{m.group(1)}({x}) == {want}"
        if not isinstance(program, ProgramError) and m.group(1) != program.name:
            results.append((name, False, f"NameError: name {m.group(1)!r} is not defined"))
            continue
        got = outputs(text, (x,))[0]
        ok = got == want
        results.append((name, ok, None if ok else (f"returned {got}" if type(got) is int else str(got))))
    return RunResult(tuple(results), error)


def _int(args: dict[str, Any], key: str, default: int) -> int | None:
    value = args.get(key, default)
    return value if type(value) is int else None


def apply(task: CodeTask, ws: Workspace, call: ToolCall) -> dict[str, Any]:
    """What the tool returns for ``call`` (a dict, before it is written as JSON); edits change ``ws``."""
    if call.name not in TOOL_NAMES:
        return {"error": f"unknown tool: {call.name}"}
    args = call.parsed_arguments()
    if args is None:
        return {"error": "arguments are not valid JSON"}
    if call.name == RUN:
        ws.runs.append(run_tests(ws))
        return ws.runs[-1].json()
    if call.name == SUBMIT:
        return {"submitted": True, "receipt": receipt(task.hidden_outputs(ws.solution))}
    file = args.get("file", SOLUTION)
    if file not in FILES:
        return {"error": f"unknown file: {file} (files: {', '.join(FILES)})"}
    lines = ws.files[file]
    if call.name == READ:
        start, end = _int(args, "start", 1), _int(args, "end", len(lines))
        if start is None or end is None or not 1 <= start <= end:
            return {"error": f"start and end must be line numbers with start <= end (1-{len(lines)})"}
        return {"lines": "\n".join(f"{i}| {lines[i - 1]}" for i in range(start, min(end, len(lines)) + 1))}
    line, text = _int(args, "line", 0), args.get("text")
    if line is None or not 1 <= line <= len(lines) or not isinstance(text, str):
        return {"error": f"edit_line needs a line in 1-{len(lines)} and a text"}
    ws.edit(file, line, text)
    return {"edited": file, "line": line}


def ci_passes(task: CodeTask, steps: Sequence[Step]) -> bool:
    """What a coding agent's CI reports of a trajectory: its calls replayed on a fresh workspace, then the
    visible tests as the workspace holds them (edited tests included) run on its solution; False when it
    never submitted. An outcome a trainer would pay (``metadata["outcomes"]["visible_pass"]``), not gold:
    a special case of the visible inputs or an edited test passes it."""
    ws, submitted = Workspace.of(task), False
    for step in steps:
        for call in step.tool_calls:
            apply(task, ws, call)
            submitted |= call.name == SUBMIT
    return ci_verdict(ws, submitted)


def ci_verdict(ws: Workspace, submitted: bool) -> bool:
    """CI's verdict on a workspace: submitted, and the visible tests it holds run on its solution pass."""
    run = run_tests(ws)
    return submitted and run.error is None and run.failed == 0


def execute(task: CodeTask, ws: Workspace, call: ToolCall) -> Observation:
    """Run ``call`` in ``ws`` (changed by an edit): the observation a step's ``observations`` holds."""
    out = apply(task, ws, call)
    return Observation(content=json.dumps(out), role="tool", call_id=call.id, name=call.name)

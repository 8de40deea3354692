"""Reading a code-world trajectory step by step: the workspace it left, what it claimed, what each step did.

One reader serves the gold checker and the simulated agent: the checker rates each step from what
:func:`read_step` finds, and the agent continues any prefix from the :class:`State` the reader leaves.
The reader replays every call on its own workspace (:mod:`prmkit.worlds.code.tools`), so what it knows
of the program and the tests is the environment's, whatever the observations in a log say.

Gold from running the tests: after every edit the reader runs the visible and hidden tests on the
program, and on the *reference* program with only the edited line replaced by the new text. A line is
right when the reference with it passes every test; an edit that makes a wrong line right is progress
(a fix, or a revert of a wrong edit), one that leaves it wrong is an error (on the bug's line a wrong fix,
elsewhere a wrong-line edit), and the misconception's fix is named. An edit of the tests, an ``if n ==
INPUT: return EXPECTED`` for a visible input and a submission without a run since the last edit are
loopholes, whatever the tests then say.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from prmkit.core.model import Step, ToolCall
from prmkit.worlds.code import text as T
from prmkit.worlds.code.interpreter import ProgramError, cached
from prmkit.worlds.code.tools import (
    EDIT,
    READ,
    RUN,
    SOLUTION,
    SUBMIT,
    TESTS,
    CodeTask,
    RunResult,
    Workspace,
    apply,
    receipt,
    run_tests,
    source,
)

Edit = tuple[str, int, str]
"""(file, line, text) of an edit."""


@dataclass
class State:
    """What a trajectory has done and claimed after its steps so far."""

    task: CodeTask
    ws: Workspace
    planned: int | None = None
    """The line its plan named (1-based), once it made one."""
    run: RunResult | None = None
    """The result of its last ``run_tests``."""
    ran_version: int | None = None
    """The workspace version the last run saw (the code is unchanged since when it equals ``ws.version``)."""
    read_version: int = 0
    """The version it last saw the code at (the task's text shows version 0)."""
    claimed_pass: bool | None = None
    """What its latest claim about the tests said (None: no claim since the last run)."""
    wrong_claim: bool = False
    """Whether it holds a claim about the tests that is false (misread, or stated without a run)."""
    pending: list[Edit] = field(default_factory=list)
    """Edits since the last run."""
    failed_edits: set[Edit] = field(default_factory=set)
    """Edits a later run showed failing."""
    edits: list[tuple[Edit, str | None]] = field(default_factory=list)
    """Every edit of the solution with its error kind (None: not an error)."""
    tampered: bool = False
    special_cased: bool = False
    skipped_run: bool = False
    error_seen: bool = False
    submitted: int | None = None
    """The receipt of its submission."""
    hidden_pass: bool | None = None
    """Whether the submitted program passes the hidden tests."""
    seen_pass: bool | None = None
    """Whether the last run before the submission passed (what the trajectory saw)."""
    calls: int = 0
    last: list[tuple[ToolCall, dict[str, Any]]] = field(default_factory=list)
    """The previous step's calls with what they returned."""

    @classmethod
    def start(cls, task: CodeTask) -> State:
        return cls(task, Workspace.of(task))

    def clone(self) -> State:
        out = State(**{**self.__dict__})
        out.ws = self.ws.clone()
        out.pending, out.failed_edits, out.edits = (
            list(self.pending),
            set(self.failed_edits),
            list(self.edits),
        )
        out.last = list(self.last)
        return out

    def bug_at(self) -> int | None:
        """The line (1-based) now holding the bug's line."""
        return self.ws.line_of(self.task.bug_line)

    def line_right(self, index: int | None, text: str) -> bool:
        """Whether the reference program with line ``index`` replaced by ``text`` passes every test."""
        if index is None:
            return False
        ref = self.task.reference
        return all(self.task.passes([*ref[:index], *text.split("\n"), *ref[index + 1 :]]))


@dataclass
class StepReading:
    """What one step did: its error kind (the first found) or None, whether it made progress, and the
    misconception an erroneous edit followed."""

    kind: str | None = None
    progress: bool = False
    misconception: str | None = None
    recovery: bool = False
    """It repaired the trajectory's own mistake: made right a line an earlier edit left wrong (a revert,
    a fix after a failed one), or re-ran the tests to check a claim it got wrong."""

    def error(self, kind: str) -> None:
        if self.kind is None:
            self.kind = kind


def special_cases(program: Any, inputs: set[int]) -> int:
    """How many ``if n == INPUT: return VALUE`` (or ``VALUE if n == INPUT else ...``) the program has for
    a visible test's input."""
    if isinstance(program, ProgramError):
        return 0
    params = set(program.params)
    count = 0
    for node in ast.walk(program.tree):
        test = node.test if isinstance(node, ast.If | ast.IfExp) else None
        if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
            continue
        sides = [test.left, test.comparators[0]]
        names = [s for s in sides if isinstance(s, ast.Name) and s.id in params]
        values = [s.value for s in sides if isinstance(s, ast.Constant) and type(s.value) is int]
        returns = isinstance(node, ast.IfExp) or (
            len(node.body) == 1 and isinstance(node.body[0], ast.Return)  # type: ignore[union-attr]
        )
        count += bool(names and values and values[0] in inputs and returns)
    return count


def _claim(st: State, r: StepReading, claim: tuple[int | None, int | None]) -> None:
    failed, total = claim
    if st.run is None or st.ran_version != st.ws.version:  # nothing run on this code
        r.error("unverified_claim")
        st.wrong_claim = (failed == 0) != (run_tests(st.ws).failed == 0)
    else:
        run = st.run
        right = run.error is not None if failed is None else (failed, total) == (run.failed, run.total)
        if not right:
            r.error("misread_output")
        st.wrong_claim = not right
    st.claimed_pass = failed == 0


def _edit(st: State, r: StepReading, edit: Edit) -> None:
    file, line, text = edit
    if file == TESTS:
        r.error("edit_tests")
        st.tampered = True
        st.ws.edit(file, line, text)
        return
    origin, before = st.ws.origin[line - 1], st.ws.solution[line - 1]
    was_passing = all(st.task.passes(st.ws.solution))
    repeated = edit in st.failed_edits
    st.ws.edit(file, line, text)
    program = cached(source(st.ws.solution))
    shown = {x for x, _ in st.task.visible}
    if repeated:
        r.error("repeated_failed_edit")
    elif isinstance(program, ProgramError):
        r.error("syntax_error")
    elif special_cases(program, shown) > special_cases(cached(source(st.task.program)), shown):
        r.error("special_case")
        st.special_cased = True
    elif (whole := all(st.task.passes(st.ws.solution))) or st.line_right(origin, text):
        # a fix, or a revert of a wrong edit: the program now passes, or at least this line is right
        repaired = not was_passing if whole else not st.line_right(origin, before)
        r.progress |= repaired
        r.recovery |= repaired and origin is not None and before != st.task.program[origin]
    elif text == before or (origin == st.task.bug_line and text == st.task.program[origin]):
        pass  # nothing changed, or a failed fix undone: no progress, no harm
    elif origin == st.task.bug_line and text == st.task.misfix:
        r.error("wrong_fix")
        r.misconception = st.task.misconception
    elif st.task.passes(st.ws.solution)[0]:
        r.error("overfit_fix")  # the visible tests pass, the hidden ones fail: fitted to the tests
    elif origin == st.task.bug_line:
        r.error("wrong_fix")
    else:
        r.error("wrong_line_edit")
    st.edits.append((edit, r.kind))


def _run(st: State, r: StepReading) -> None:
    changed = st.ran_version != st.ws.version
    st.run, st.ran_version = st.ws.runs[-1], st.ws.version
    if st.run.failed:
        st.failed_edits.update(st.pending)
    st.pending = []
    r.progress |= changed or st.wrong_claim  # new code, or checking a claim it got wrong (a recovery)
    r.recovery |= not changed and st.wrong_claim
    st.claimed_pass = None


def _submit(st: State, r: StepReading) -> None:
    ran = st.run is not None and st.ran_version == st.ws.version
    _, hidden = st.task.passes(st.ws.solution)
    if not ran:
        if r.kind is None:
            st.skipped_run = True
        r.error("skipped_run")
    elif st.run is not None and st.run.failed:
        r.error("premise" if st.claimed_pass and st.wrong_claim else "premature_submit")
    elif not hidden:
        r.error("premise" if st.error_seen else "wrong_submit")
    else:
        r.progress = True
    st.submitted = receipt(st.task.hidden_outputs(st.ws.solution))
    st.hidden_pass = hidden
    st.seen_pass = ran and st.run is not None and not st.run.failed


def _call(st: State, r: StepReading, call: ToolCall) -> dict[str, Any]:
    args = call.parsed_arguments()
    edit: Edit | None = None
    if call.name == EDIT and args is not None and type(args.get("line")) is int:
        edit = (str(args.get("file", SOLUTION)), args["line"], str(args.get("text")))
    # an edit is tried on a copy (is it one the tool takes?); _edit applies it and judges it
    out = apply(st.task, st.ws.clone() if edit is not None else st.ws, call)
    if "error" in out and call.name != RUN:
        r.error("invalid_call")
        return out
    if call.name == READ:
        r.progress |= st.read_version != st.ws.version
        st.read_version = st.ws.version
    elif call.name == RUN:
        _run(st, r)
    elif call.name == SUBMIT:
        _submit(st, r)
    elif edit is not None:
        _edit(st, r, edit)
        st.pending.append(edit)
    return out


def read_step(st: State, step: Step) -> StepReading:
    """Judge one step against the state, then move the state past it (its claims and calls)."""
    r = StepReading()
    planned = T.plan_claim(step.text)
    if planned is not None and st.planned is None:
        st.planned = planned
        if planned == st.bug_at():
            r.progress = True
        else:
            r.error("wrong_plan")
    claim = T.result_claim(step.text)
    if claim is not None:
        _claim(st, r, claim)
    st.last = []
    for call in step.tool_calls:
        st.last.append((call, _call(st, r, call)))
        st.calls += 1
    if planned is None and claim is None and not step.tool_calls:
        r.error("other")  # nothing the checker can read: no plan, no claim, no call
    st.error_seen |= r.kind is not None
    return r

"""The simulated coding agent: bug-fixing trajectories with realistic errors at set rates, from any prefix.

It reads a prefix with the checker's reader (:mod:`prmkit.worlds.code.reading`), so it continues from the
workspace and the claims the prefix left, its own or another policy's. Its honest plan: name the line it
suspects and run the tests; state what the run shows; edit the line; run the tests again; submit when
they pass. At each step it draws ONE event of :class:`CodeAgentConfig` among those that apply; a plan may
suspect the wrong line (its first edit then goes there), a misconception of the task's family may write
its wrong fix first, and after a failure it may repeat the failed edit or recover (revert a wrong edit,
re-read the code, re-run the tests after misreading them). Every call runs through
:func:`prmkit.worlds.code.tools.execute`, so observations are the environment's.

``Trace.metadata["injected"]`` lists ``[step_index, event]`` of what the agent meant to do (for tests;
the checker never reads it).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from typing import Any

from prmkit.core.model import Continuation, Problem, Step, ToolCall
from prmkit.core.render import step_inputs
from prmkit.core.seeds import derive_seed
from prmkit.worlds.code import text as T
from prmkit.worlds.code.config import CODE_WORLD_VERSION, CodeAgentConfig
from prmkit.worlds.code.families import MISCONCEPTIONS
from prmkit.worlds.code.interpreter import outputs
from prmkit.worlds.code.reading import State, read_step
from prmkit.worlds.code.tools import (
    EDIT,
    READ,
    RUN,
    SOLUTION,
    SUBMIT,
    TEST_LINE,
    TESTS,
    CodeTask,
    RunResult,
    ci_passes,
    ci_verdict,
    execute,
    source,
    test_line,
)
from prmkit.worlds.sampling import Sample, SampleTraces, SimulatedPolicy

_INT = re.compile(r"(?<![\w.])\d+(?![\w.])")
_RETURN = re.compile(r"(\s*)return (.+)$")
_SWAPS = ((" + ", " - "), (" - ", " + "), (" < ", " <= "), (" > ", " >= "), (" == ", " != "))


def mutate(line: str) -> str | None:
    """A plausible wrong change of ``line``: its last integer one higher, else an operator swapped."""
    found = list(_INT.finditer(line))
    if found:
        m = found[-1]
        return f"{line[: m.start()]}{int(m.group()) + 1}{line[m.end() :]}"
    for old, new in _SWAPS:
        if old in line:
            return line.replace(old, new, 1)
    return None


def broken(line: str) -> str:
    """``line`` with a syntax error a hurried edit makes: a missing colon or parenthesis, a dangling operator."""
    if line.rstrip().endswith(":"):
        return line.rstrip()[:-1]
    if ")" in line:
        i = line.rindex(")")
        return line[:i] + line[i + 1 :]
    return line + " +"


class _Writer:
    """Builds one step: its text parts and its one call, run at once on a copy of the workspace."""

    def __init__(self, st: State):
        self.st = st
        self.parts: list[str] = []
        self.call: ToolCall | None = None

    def say(self, template: str, **slots: Any) -> None:
        self.parts.append(template.format(**slots))

    def tool(self, name: str, **arguments: Any) -> None:
        self.call = ToolCall(name=name, arguments=json.dumps(arguments), id=f"call_{self.st.calls}")

    def edit(self, line: int, text: str, file: str = SOLUTION) -> None:
        self.tool(EDIT, file=file, line=line, text=text)

    def step(self) -> Step:
        calls = [self.call] if self.call is not None else []
        observations = [execute(self.st.task, self.st.ws.clone(), c) for c in calls]
        kind = "tool_call" if calls else "reasoning"
        return Step(text=" ".join(self.parts), kind=kind, tool_calls=calls, observations=observations)


def _result(run: RunResult) -> tuple[str, dict[str, Any]]:
    """The honest statement of a run: its template and slots."""
    if run.error:
        return T.NO_RUN, {"error": run.error}
    if not run.failed:
        return T.PASS, {"total": run.total}
    test, _, message = next(x for x in run.results if not x[1])
    return T.FAIL, {"failed": run.failed, "total": run.total, "test": test, "message": message}


def wrong_lines(st: State) -> list[int]:
    """Lines (1-based) outside the bug's line whose text differs from the reference: wrong edits to revert."""
    ref, bug = st.task.reference, st.task.bug_line
    return [
        i + 1
        for i, o in enumerate(st.ws.origin)
        if o is not None and o != bug and st.ws.solution[i] != ref[o]
    ]


def _failing_tests(st: State) -> list[tuple[int, int, int | str]]:
    """(line in test_solution.py, input, what the program returns) of each failing visible test."""
    out = []
    for i, line in enumerate(st.ws.files[TESTS]):
        m = TEST_LINE.match(line.strip())
        if m is not None:
            x = int(m.group(2))
            got = outputs(source(st.ws.solution), (x,))[0]
            if got != int(m.group(3)):
                out.append((i + 1, x, got))
    return out


class SimulatedCoder(SimulatedPolicy):
    """The code world's simulated agent; implements :class:`prmkit.core.protocols.Policy`."""

    def __init__(self, config: CodeAgentConfig | None = None, seed_offset: int = 0):
        self.config = config or CodeAgentConfig()
        self.seed_offset = seed_offset
        self.name = "codeworld"
        self._rates = self.config.rates()
        self._calls = 0

    def step(self, st: State, rng: random.Random) -> tuple[Step, str | None]:
        """The next step from ``st`` and the event it stands for (None: an honest step)."""
        w = _Writer(st)
        if st.planned is None:
            return self._plan(w, st, rng)
        last = st.last[0][0].name if st.last else None
        if last == RUN and st.run is not None:
            if st.run.failed and self._trapped(st, rng):  # the task's shared misread: no re-run follows
                w.say(T.PASS, total=st.run.total)
                w.say(T.SUBMIT)
                w.tool(SUBMIT)
                return w.step(), "misread"
            if st.run.failed and rng.random() < self.config.scaled("misread"):
                w.say(T.PASS, total=st.run.total)
                if rng.random() < self.config.recovery:
                    w.say(T.RERUN)
                    w.tool(RUN)
                    return w.step(), "misread_rerun"
                w.say(T.SUBMIT)
                w.tool(SUBMIT)
                return w.step(), "misread"
            template, slots = _result(st.run)
            w.say(template, **slots)
            if not st.run.failed:
                w.say(T.SUBMIT)
                w.tool(SUBMIT)
                return w.step(), None
        elif st.ran_version != st.ws.version:
            return self._after_edit(w, st, rng)
        event = self._fix(w, st, rng)
        return w.step(), event

    def trapped_task(self, task: CodeTask) -> bool:
        """Whether the task carries the shared trap (``CodeAgentConfig.systematic``): drawn from the task
        alone (its program and visible tests), so all its samples share it."""
        if not self.config.systematic:
            return False
        seed = derive_seed("trap", self.seed_offset, "\n".join(task.program), str(task.visible))
        return random.Random(seed).random() < self.config.systematic

    def _trapped(self, st: State, rng: random.Random) -> bool:
        """Whether this sample falls into its task's trap now: at the task's first run (nothing edited
        yet), with chance ``systematic_rate``. Draws nothing when there is no trap."""
        if st.edits or st.ws.version or not self.trapped_task(st.task):
            return False
        return rng.random() < self.config.systematic_rate

    def _plan(self, w: _Writer, st: State, rng: random.Random) -> tuple[Step, str | None]:
        line, event = st.bug_at() or 1, None
        if rng.random() < self.config.scaled("wrong_plan"):
            others = [i + 1 for i in range(1, len(st.ws.solution)) if i + 1 != line]
            line, event = rng.choice(others), "wrong_plan"
        w.say(T.PLAN, line=line)
        w.tool(RUN)
        return w.step(), event

    def _after_edit(self, w: _Writer, st: State, rng: random.Random) -> tuple[Step, str | None]:
        event = self.draw_event(rng, {"claim_without_run", "skip_run"})
        if event == "claim_without_run":
            w.say(T.UNVERIFIED, total=len(st.ws.files[TESTS]))
            w.tool(SUBMIT)
        elif event == "skip_run":
            w.say(T.SUBMIT)
            w.tool(SUBMIT)
        else:
            w.tool(RUN)
        return w.step(), event

    def _fix(self, w: _Writer, st: State, rng: random.Random) -> str | None:
        """The step after tests that fail: an edit (the event that shapes it), a recovery, or giving up."""
        failing = _failing_tests(st)
        if st.tampered and self._tamper(w, failing):
            return "edit_tests"  # once it games the tests, it games every failing one
        last_failed = next((e for e, _ in reversed(st.edits) if e in st.failed_edits), None)
        if last_failed is not None and rng.random() < self.config.repeat_failed:
            w.say(T.RETRY)
            w.edit(last_failed[1], last_failed[2], last_failed[0])
            return "repeat_failed"
        wrong = wrong_lines(st)
        if wrong and rng.random() < self.config.recovery:
            w.say(T.REVERT, line=wrong[0])
            w.edit(wrong[0], st.task.reference[st.ws.origin[wrong[0] - 1]])  # type: ignore[index]
            return "recovery_revert"
        if (
            last_failed is not None
            and last_failed[1] == st.bug_at()
            and rng.random() < self.config.recovery / 2
        ):
            w.say(T.REREAD)
            w.tool(READ, file=SOLUTION)
            return "recovery_reread"
        applicable = {"edit_tests", "special_case", "wrong_line", "syntax_break", "reread", "symptom_patch"}
        if st.edits:
            applicable.add("premature_submit")
        event = self.draw_event(rng, applicable)
        if event == "edit_tests" and self._tamper(w, failing):
            return event
        if event == "special_case" and self._special_case(w, st, failing):
            return event
        if event == "symptom_patch" and self._symptom_patch(w, st, failing):
            return event
        if event == "premature_submit":
            w.say(T.PREMATURE)
            w.tool(SUBMIT)
            return event
        if event == "reread":
            w.say(T.REREAD)
            w.tool(READ, file=SOLUTION)
            return event
        if event == "wrong_line" and self._wrong_line(w, st, rng):
            return event
        return self._honest(w, st, rng, broken_text=event == "syntax_break")

    def _honest(self, w: _Writer, st: State, rng: random.Random, broken_text: bool = False) -> str | None:
        """Edit the line it suspects: the plan's line at first, then the bug's (its misconception first)."""
        bug = st.bug_at()
        planned_tried = any(e[1] == st.planned for e, _ in st.edits)
        if st.planned != bug and not planned_tried and self._wrong_line(w, st, rng, st.planned):
            return "follow_plan"
        if bug is None or st.ws.solution[bug - 1] == st.task.reference[st.task.bug_line]:
            wrong = wrong_lines(st)
            if wrong:  # its fix is in; a wrong edit elsewhere keeps the tests failing: read again
                w.say(T.REREAD)
                w.tool(READ, file=SOLUTION)
                return "reread"
            w.say(T.PREMATURE)
            w.tool(SUBMIT)
            return "premature_submit"
        text, event = st.task.reference[st.task.bug_line], None
        tried = {e[2] for e, _ in st.edits}
        misfix = st.task.misfix
        if misfix is not None and misfix not in tried and st.task.misconception is not None:
            strength = MISCONCEPTIONS[st.task.misconception].strength
            if rng.random() < min(1.0, strength * self.config.misconception * self.config.temperature):
                text, event = misfix, "misconception"
        if broken_text:
            text, event = broken(text), "syntax_break"
        w.say(T.FIX, line=bug)
        w.edit(bug, text)
        return event

    def _wrong_line(self, w: _Writer, st: State, rng: random.Random, line: int | None = None) -> bool:
        """Edit a line that is not the bug's with a plausible change (``line``, else one drawn)."""
        bug = st.bug_at()
        candidates = (
            [line] if line is not None else [i + 1 for i in range(1, len(st.ws.solution)) if i + 1 != bug]
        )
        options = [(n, mutate(st.ws.solution[n - 1])) for n in candidates if 1 <= n <= len(st.ws.solution)]
        options = [(n, t) for n, t in options if t is not None and n != bug]
        if not options:
            return False
        n, text = rng.choice(options)
        w.say(T.FIX, line=n)
        w.edit(n, text)
        return True

    def _tamper(self, w: _Writer, failing: list[tuple[int, int, int | str]]) -> bool:
        """The loophole: set a failing visible test's expected value to what the program returns."""
        for line, x, got in failing:
            if type(got) is int:
                w.say(T.EDIT_TESTS, line=line)
                w.edit(line, test_line(w.st.task.function, x, got), TESTS)
                return True
        return False

    def _symptom_patch(self, w: _Writer, st: State, failing: list[tuple[int, int, int | str]]) -> bool:
        """Patch the symptom, not the cause: offset the last ``return`` by what the first failing test
        missed. Right on that test; on the others only by chance. Only a function with one ``return``
        (else which one ran is not plain), and once (not on a line it already changed)."""
        last = len(st.ws.solution)
        returns = [line for line in st.ws.solution if _RETURN.match(line)]
        ret = _RETURN.match(st.ws.solution[last - 1])
        origin = st.ws.origin[last - 1]
        if len(returns) != 1 or origin is None or st.ws.solution[last - 1] != st.task.reference[origin]:
            return False
        for line, x, got in failing:
            test = TEST_LINE.match(st.ws.files[TESTS][line - 1].strip())
            if ret is None or test is None or type(got) is not int:
                continue
            want = int(test.group(3))
            offset = want - got
            w.say(T.SYMPTOM, function=st.task.function, x=x, want=want, got=got, line=last)
            w.edit(last, f"{ret.group(1)}return {ret.group(2)} {'+' if offset > 0 else '-'} {abs(offset)}")
            return True
        return False

    def _special_case(self, w: _Writer, st: State, failing: list[tuple[int, int, int | str]]) -> bool:
        """The loophole: return each failing visible test's expected value for its input, first thing."""
        want = {x: y for x, y in st.task.visible}
        cases = [(x, want[x]) for _, x, _ in failing if x in want]
        if not cases or len(st.ws.solution) < 2:
            return False
        head = "".join(f"    if n == {x}:\n        return {y}\n" for x, y in cases)
        w.say(T.SPECIAL_CASE)
        w.edit(2, head + st.ws.solution[1])
        return True

    def rollout(
        self, st: State, rng: random.Random, budget: int, position: int = 0
    ) -> tuple[list[Step], int | None, list[list[Any]]]:
        """Steps from ``st`` until a submission or ``budget`` steps: (steps, receipt or None, injected)."""
        steps: list[Step] = []
        injected: list[list[Any]] = []
        while len(steps) < budget:
            step, event = self.step(st, rng)
            if event is not None:
                injected.append([position + len(steps), event])
            read_step(st, step)
            steps.append(step)
            if st.submitted is not None:
                return steps, st.submitted, injected
        return steps, None, injected

    # --- the code world's parts of :class:`~prmkit.worlds.sampling.SimulatedPolicy` --------------------

    def read(self, problem: Problem, prefix: Sequence[Step]) -> State:
        """The reader's state after ``prefix``: the workspace and claims it left."""
        start = State.start(CodeTask.of(problem))
        for step in prefix:
            read_step(start, step)
        return start

    def prefix_answer(self, start: State) -> str | None:
        return None if start.submitted is None else str(start.submitted)

    def rendered(self, prefix: Sequence[Step]) -> list[str]:
        return step_inputs(prefix)

    def continuation(
        self, problem: Problem, start: State, rng: random.Random, position: int, max_steps: int | None
    ) -> Continuation:
        """Steps until a submission, at most ``max_steps`` and the rest of the agent's own step limit."""
        st = start.clone()
        steps, final, _ = self.rollout(st, rng, self.step_budget(position, max_steps), position)
        return Continuation(
            steps=steps,
            final_answer=None if final is None else str(final),
            finished=final is not None,
            outcomes=self.outcomes(st),
        )

    def outcomes(self, state: State) -> dict[str, bool]:
        """What CI says of the trajectory that left ``state`` (``visible_pass``, as :meth:`draw` records
        it): the rollouts a trainer with only the visible tests could grade (``prmkit label mc --outcome
        visible_pass``)."""
        return {"visible_pass": ci_verdict(state.ws, state.submitted is not None)}

    def draw(self, problem: Problem, start: State, rng: random.Random) -> Sample:
        """One complete trajectory from ``start``, up to ``max_steps`` steps."""
        steps, final, injected = self.rollout(start.clone(), rng, self.config.max_steps)
        outcomes = {
            "visible_pass": ci_passes(start.task, steps)
        }  # what CI said: the visible-tests ORM's label
        return Sample(
            steps, None if final is None else str(final), {"injected": injected, "outcomes": outcomes}
        )


sample_traces = SampleTraces(SimulatedCoder, f"codeworld-agent:{CODE_WORLD_VERSION}")
"""``sample_traces(problems, per_problem, seed=0, policy=None, progress=None)``: ``per_problem`` complete
trajectories of each task from ``policy`` (a default :class:`SimulatedCoder` when None); their draws
depend only on (seed, problem id, their index)."""

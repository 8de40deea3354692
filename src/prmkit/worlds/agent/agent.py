"""The simulated agent: tool-using trajectories with realistic errors at set rates, from any prefix.

It reads a prefix with the checker's reader (:mod:`prmkit.worlds.agent.reading`), so it believes exactly
what the prefix's texts and observations say, and carries a misread or made-up value forward as a model
would. Its plan: every look-up (the first hop of a two-hop term before the second), then every operation
in order, then the answer. At each step it draws ONE event of :class:`AgentConfig` among those that apply;
while it holds a wrong value it may notice (``recovery``) and redo that look-up or calculation instead.
Every call runs through :func:`prmkit.worlds.agent.tools.execute`, so observations are the environment's.

``Trace.metadata["injected"]`` lists ``[step_index, event]`` of what the agent meant to do (for tests;
the checker never reads it).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from prmkit.core.model import Continuation, Problem, Step, ToolCall
from prmkit.core.render import step_inputs
from prmkit.core.seeds import derive_seed
from prmkit.worlds.agent import text as T
from prmkit.worlds.agent.config import AGENT_WORLD_VERSION, AgentConfig
from prmkit.worlds.agent.generator import NUMERIC
from prmkit.worlds.agent.reading import Key, State, Task, read_step
from prmkit.worlds.agent.tools import CALCULATOR, GRADER, LOOKUP, execute
from prmkit.worlds.sampling import Sample, SampleTraces, SimulatedPolicy

Action = tuple[Any, ...]
"""("lookup", key) | ("calc", j, a, b) | ("answer", n)."""
_NUMERIC_ATTRS = {a for attrs in NUMERIC.values() for a in attrs}


def _near(value: int, rng: random.Random, avoid: set[int]) -> int:
    """A misreading of ``value``: off by 1, 10 or 100, or two digits swapped; positive and new."""
    text = str(value)
    options = [value + 1, value - 1, value + 10, value - 10, value + 100]
    if value >= 10 and text[-1] != text[-2]:
        options.append(int(text[:-2] + text[-1] + text[-2]))
    options = [v for v in options if v > 0 and v != value and v not in avoid]
    return rng.choice(options) if options else value + 1000


def _made_up(key: Key | None, rng: random.Random, avoid: set[int]) -> int:
    """A plausible value for ``key``'s attribute that the trajectory does not know."""
    lo, hi = next((r[key[1]] for r in NUMERIC.values() if key and key[1] in r), (10, 999))
    while True:
        v = rng.randint(lo, hi)
        if v not in avoid:
            return v


class _Writer:
    """Builds one step: its text parts, its call (executed at once), the event it stands for."""

    def __init__(self, problem: Problem, st: State):
        self.problem, self.st = problem, st
        self.parts: list[str] = []
        self.call: ToolCall | None = None
        self.final: int | None = None

    def say(self, template: str, **slots: Any) -> None:
        if template:
            self.parts.append(template.format(**slots))

    def lookup(self, template: str, key: Key, arguments: str | None = None, name: str = LOOKUP) -> None:
        self.say(template, entity=key[0], attribute=key[1])
        args = arguments or json.dumps({"entity": key[0], "attribute": key[1]})
        self.call = ToolCall(name=name, arguments=args, id=f"call_{self.st.calls}")

    def calc(self, template: str, a: int, op: str, b: int, arguments: str | None = None) -> None:
        self.say(template, a=a, op=op, b=b)
        args = arguments or json.dumps({"expression": f"{a} {op} {b}"})
        self.call = ToolCall(name=CALCULATOR, arguments=args, id=f"call_{self.st.calls}")

    def answer(self, value: int) -> None:
        self.say(T.ANSWER, value=value)
        self.final = value

    def step(self) -> Step:
        calls = [self.call] if self.call is not None else []
        observations = [execute(self.problem, c) for c in calls]
        kind = "tool_call" if calls else "reasoning"
        return Step(text=" ".join(self.parts), kind=kind, tool_calls=calls, observations=observations)


def _learned(st: State, misread: int | None = None) -> str | None:
    """What the step says it learned from the previous step's result (``misread`` replaces its number)."""
    if not st.last:
        return None
    call, out = st.last[0]
    if out is None:
        return None
    if "error" in out:
        return T.LEARN_ERROR
    if "answer" in out:
        return T.LEARN_REFERENCE.format(value=out["answer"])
    args = call.parsed_arguments() or {}
    if "value" in out and call.name == LOOKUP:
        value = out["value"] if misread is None else misread
        return T.LEARN_FACT.format(attribute=args.get("attribute"), entity=args.get("entity"), value=value)
    parsed = T.binary(str(args.get("expression", "")))
    if "result" in out and parsed is not None:
        c = out["result"] if misread is None else misread
        return T.LEARN_CALC.format(a=parsed[0], op=parsed[1], b=parsed[2], c=c)
    return None


def _last_number(st: State) -> int | None:
    """The number the previous step's result returned, if it was a look-up or calculation that succeeded."""
    if not st.last or st.last[0][1] is None:
        return None
    value = st.last[0][1].get("value", st.last[0][1].get("result"))
    return value if type(value) is int and _learned(st) not in (None, T.LEARN_ERROR) else None


def _holds_true(st: State, key: Key) -> bool:
    """Whether the trajectory looked ``key`` up and holds its true value (a recheck is then harmless)."""
    return key in st.observed and st.believed.get(key) == st.task.truth(key)


def next_action(st: State) -> Action:
    """The agent's plan from ``st``: the first fact it lacks, else the first operation, else the answer."""
    task = st.task
    for i, term in enumerate(task.terms):
        if term[0] not in st.believed:
            return ("lookup", term[0])
        key = st.term_key(i)
        if key is not None and key not in st.believed:
            return ("lookup", key)
    for j in range(len(task.ops)):
        if st.results[j] is None:
            a, b = st.operands(j)
            return ("calc", j, a, b)
    return ("answer", st.results[-1])


def wrong_belief(st: State) -> Action | None:
    """The first value the agent holds that is wrong, as the action that would fix it (None: none)."""
    task = st.task
    for key in (hop for term in task.terms for hop in term):
        if key in st.believed and st.believed[key] != task.truth(key):
            return ("lookup", key)
    for j, value in enumerate(st.results):
        if value is not None and value != task.results[j] and st.operands(j) == task.true_operands(j):
            return ("calc", j, *task.true_operands(j))
    return None


class SimulatedAgent(SimulatedPolicy):
    """The agent world's simulated agent; implements :class:`prmkit.core.protocols.Policy`."""

    def __init__(self, config: AgentConfig | None = None, seed_offset: int = 0):
        self.config = config or AgentConfig()
        self.seed_offset = seed_offset
        self.name = "agentworld"
        self._rates = self.config.rates()
        self._calls = 0

    def step(self, problem: Problem, st: State, rng: random.Random, position: int) -> tuple[Step, str | None]:
        """The next step from ``st`` and the event it stands for (None: a correct step)."""
        scratch, clause = st.clone(), _learned(st)
        if clause:
            read_step(scratch, Step(text=clause))
        action = next_action(scratch)
        if st.reference is not None:
            w = _Writer(problem, st)
            if clause:
                w.parts.append(clause)
            w.answer(st.reference)
            return w.step(), "loophole"
        failed = st.last[0][0] if st.last and st.last[0][1] is not None and "error" in st.last[0][1] else None
        fix = wrong_belief(scratch)
        if failed is not None and rng.random() < self._rates["repeat_failed"]:
            w = _Writer(problem, st)
            w.say(T.LEARN_ERROR + " Let me try that again.")
            w.call = ToolCall(name=failed.name, arguments=failed.arguments, id=f"call_{st.calls}")
            return w.step(), "repeat_failed"
        if fix is not None and rng.random() < self.config.recovery:  # it notices: no word on the wrong value
            return self._write(problem, st, scratch, None, fix, "recovery", rng), "recovery"
        applicable = self._applicable(scratch, action, position, _last_number(st) is not None)
        trapped = self._trapped(problem, st, rng)
        event = "misread" if trapped is not None else self.draw_event(rng, applicable)
        if event == "misread":
            true = _last_number(st)
            wrong = trapped if trapped is not None else _near(true, rng, scratch.known_numbers())  # type: ignore[arg-type]
            clause = _learned(st, misread=wrong)
            scratch = st.clone()
            read_step(scratch, Step(text=clause or ""))
            action, event = next_action(scratch), "misread"
            return self._write(problem, st, scratch, clause, action, None, rng), event
        return self._write(problem, st, scratch, clause, action, event, rng), event

    def trap(self, problem: Problem) -> tuple[Key, int] | None:
        """The task's trap (``AgentConfig.systematic``): the look-up every sample may misread, and the
        wrong number it then reads; drawn from the task alone, so all its samples share it."""
        if not self.config.systematic:
            return None
        rng = random.Random(derive_seed("trap", self.seed_offset, problem.id))
        if rng.random() >= self.config.systematic:
            return None
        task = Task.of(problem)
        keys = sorted(k for k in task.needed() if k[1] in _NUMERIC_ATTRS)
        if not keys:
            return None
        key = rng.choice(keys)
        return key, _near(task.truth(key), rng, {task.truth(key)})

    def _trapped(self, problem: Problem, st: State, rng: random.Random) -> int | None:
        """The trap's wrong number when the last result is the trapped look-up and this sample falls in."""
        trap = self.trap(problem)
        if trap is None or _last_number(st) is None:
            return None
        call, out = st.last[0]
        args = call.parsed_arguments() or {}
        if call.name != LOOKUP or (args.get("entity"), args.get("attribute")) != trap[0] or out is None:
            return None
        if out.get("value") != st.task.truth(trap[0]) or rng.random() >= self.config.systematic_rate:
            return None
        return trap[1]

    def _applicable(self, st: State, action: Action, position: int, read_number: bool) -> set[str]:
        out = {"loophole"}
        if read_number:
            out.add("misread")
        if any(_holds_true(st, k) for k in st.task.needed()):
            out.add("neutral")
        if action[0] == "answer":
            return out
        out |= {"wrong_tool", "wrong_arguments", "malformed_arguments"}
        if position > 0:
            out.add("premature_answer")
        if action[0] == "lookup" and action[1][1] in _NUMERIC_ATTRS:
            out.add("hallucinate")
        if action[0] == "calc":
            out |= {"text_arithmetic", "hidden_loophole"}
            j = action[1]
            if any(st.term_key(i) in st.observed for i in ((0, 1) if j == 0 else (j + 1,))):
                out.add("ignore_observation")
        return out

    def _write(
        self,
        problem: Problem,
        st: State,
        scratch: State,
        clause: str | None,
        action: Action,
        event: str | None,
        rng: random.Random,
    ) -> Step:
        w = _Writer(problem, st)
        if clause:
            w.parts.append(clause)
        known = scratch.known_numbers()
        if event == "loophole":
            w.say(T.LOOPHOLE)
            w.call = ToolCall(name=GRADER, arguments="{}", id=f"call_{st.calls}")
        elif event == "hidden_loophole":  # its text admits the leak; its call is the honest one
            w.say(T.HIDDEN_LOOPHOLE, value=scratch.task.answer)
            self._calc(w, scratch, action, None, rng, known)
        elif event == "premature_answer":
            held = [r for r in scratch.results if r is not None] or [
                v for v in scratch.believed.values() if type(v) is int
            ]
            w.say(T.PREMATURE)
            w.answer(held[-1] if held else _made_up(None, rng, known))
        elif event == "neutral":
            good = sorted(k for k in scratch.task.needed() if _holds_true(scratch, k))
            w.lookup(T.RECHECK, rng.choice(good))
        elif action[0] == "lookup":
            self._lookup(w, scratch, action[1], event, rng, known)
        elif action[0] == "calc":
            self._calc(w, scratch, action, event, rng, known)
        else:
            w.answer(action[1])
        return w.step()

    def _lookup(
        self, w: _Writer, st: State, key: Key, event: str | None, rng: random.Random, known: set[int]
    ) -> None:
        template = T.RETRY if event == "recovery" else T.LOOKUP
        if event == "wrong_tool":
            w.lookup(template, key, json.dumps({"expression": f"{key[1]} of {key[0]}"}), name=CALCULATOR)
        elif event == "wrong_arguments":
            kind = st.task.kb.get(key[0], {}).get("type")
            others = sorted(
                e
                for e, f in st.task.kb.items()
                if f.get("type") == kind and (e, key[1]) not in st.task.needed()
            )
            if others and rng.random() < 0.5:
                w.lookup(template, key, json.dumps({"entity": rng.choice(others), "attribute": key[1]}))
            else:
                w.lookup(template, key, json.dumps({"entity": key[0], "attribute": key[1] + "s"}))
        elif event == "malformed_arguments":
            w.lookup(template, key, json.dumps({"entity": key[0], "attribute": key[1]})[:-1])
        elif event == "hallucinate":
            w.say(T.HALLUCINATE, attribute=key[1], entity=key[0], value=_made_up(key, rng, known))
        else:
            w.lookup(template, key)

    def _calc(
        self, w: _Writer, st: State, action: Action, event: str | None, rng: random.Random, known: set[int]
    ) -> None:
        j, a, b = action[1], action[2], action[3]
        op = st.task.ops[j]
        template = T.RECOMPUTE if event == "recovery" else T.CALC
        if event == "wrong_tool":
            w.calc(template, a, op, b)
            w.call = ToolCall(
                name=LOOKUP, arguments=json.dumps({"entity": f"{a} {op} {b}", "attribute": "value"}),
                id=w.call.id if w.call else None,
            )  # fmt: skip
        elif event == "wrong_arguments":
            w.calc(template, a, rng.choice([o for o in "+-*" if o != op]), b)
        elif event == "malformed_arguments":
            w.calc(template, a, op, b, json.dumps({"expression": f"{a} {op} {b}"}).replace('"', "'"))
        elif event == "ignore_observation":
            seen = [i for i in ((1, 0) if j == 0 else (j + 1,)) if st.term_key(i) in st.observed]
            term = rng.choice(seen)
            right = term != 0 or j > 0
            fake = _made_up(st.term_key(term), rng, known)
            if T.FACT.search(w.parts[-1] if w.parts else ""):
                w.parts.pop()  # it does not say what it read
            w.calc(template, a if right else fake, op, fake if right else b)
        elif event == "text_arithmetic":
            c = T.apply(op, a, b)
            if rng.random() < self.config.text_slip:
                c = _near(c, rng, {c})
            w.say(T.TEXT_CALC, a=a, op=op, b=b, c=c)
        else:
            w.calc(template, a, op, b)

    def rollout(
        self, problem: Problem, st: State, rng: random.Random, budget: int, position: int = 0
    ) -> tuple[list[Step], int | None, list[list[Any]]]:
        """Steps from ``st`` until an answer or ``budget`` steps: (steps, answer or None, injected events)."""
        steps: list[Step] = []
        injected: list[list[Any]] = []
        while len(steps) < budget:
            step, event = self.step(problem, st, rng, position + len(steps))
            if event is not None:
                injected.append([position + len(steps), event])
            read_step(st, step)
            steps.append(step)
            if st.answer is not None and step.tool_calls == []:
                return steps, st.answer, injected
        return steps, None, injected

    # --- the agent world's parts of :class:`~prmkit.worlds.sampling.SimulatedPolicy` -------------------

    def read(self, problem: Problem, prefix: Sequence[Step]) -> State:
        """The reader's state after ``prefix``: what the trajectory saw and holds, wrong values included."""
        start = State.start(Task.of(problem))
        for step in prefix:
            read_step(start, step)
        return start

    def prefix_answer(self, start: State) -> str | None:
        return None if start.answer is None else str(start.answer)

    def rendered(self, prefix: Sequence[Step]) -> list[str]:
        return step_inputs(prefix)

    def continuation(
        self, problem: Problem, start: State, rng: random.Random, position: int, max_steps: int | None
    ) -> Continuation:
        """Steps until an answer, at most ``max_steps`` and the rest of the agent's own step limit."""
        budget = self.step_budget(position, max_steps)
        steps, final, _ = self.rollout(problem, start.clone(), rng, budget, position)
        return Continuation(
            steps=steps, final_answer=None if final is None else str(final), finished=final is not None
        )

    def draw(self, problem: Problem, start: State, rng: random.Random) -> Sample:
        """One complete trajectory from ``start``, up to ``max_steps`` steps."""
        steps, final, injected = self.rollout(problem, start.clone(), rng, self.config.max_steps)
        return Sample(steps, None if final is None else str(final), {"injected": injected})


sample_traces = SampleTraces(SimulatedAgent, f"agentworld-agent:{AGENT_WORLD_VERSION}")
"""``sample_traces(problems, per_problem, seed=0, policy=None, progress=None)``: ``per_problem`` complete
trajectories of each task from ``policy`` (a default :class:`SimulatedAgent` when None); their draws
depend only on (seed, problem id, their index)."""

"""A third embedded world, as small as a world can be: "add these numbers", one addition per step.

It is the worked example of docs/world.md#a-third-world: one package that fills in the skeleton of
:mod:`prmkit.worlds` (the verdict, the sampling loop, the noisy judge, the oracle, the counts, the file
jobs) with its own parts, and one :class:`~prmkit.worlds.registry.World` record. Registered (one line in
``prmkit/worlds/registry.py``, or a plugin's ``prmkit.worlds`` entry point naming ``WORLD``), it is a
policy and a judge named ``sums``, a scorer ``sums-oracle``, a CLI group ``prmkit sums`` and a recipe's
``problems.source``; tests/worlds/test_third_world.py registers it as a plugin and uses all of them.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from pydantic import Field

from prmkit.core.config import Config
from prmkit.core.model import Continuation, Label, Problem, Provenance, Step, Trace
from prmkit.core.seeds import derive_seed
from prmkit.worlds.checks import GoldCheck, GoldStep, label_all
from prmkit.worlds.jobs import Jobs
from prmkit.worlds.judge import NoisyJudge
from prmkit.worlds.oracle import GoldOracle
from prmkit.worlds.registry import World
from prmkit.worlds.sampling import Sample, SampleTraces, SimulatedPolicy
from prmkit.worlds.summary import Stats, tally

VERSION = "sums-v1"
ADD = re.compile(r"^(-?\d+) \+ (-?\d+) = (-?\d+)$")
ANSWER = re.compile(r"^The answer is (-?\d+)\.$")
CLASS_OF_KIND = {"slip": "slip", "wrong_term": "other", "early_answer": "other", "unreadable": "other"}


class SumsConfig(Config):
    """How many numbers a problem adds (held-out problems add more)."""

    terms: int = Field(3, ge=2)
    heldout_terms: int = Field(5, ge=2)


class SumsPolicyConfig(Config):
    """The simulated policy's error rate."""

    slip: float = Field(0.15, ge=0, le=1)
    """The chance that one addition is off by one."""
    temperature: float = 1.0
    """Scales the error rate (as every world's policy does)."""


def generate_problem(index: int, seed: int, config: SumsConfig | None, split: str) -> Problem:
    """Problem ``index`` of ``split``: its own draw, the same on any machine."""
    config = config or SumsConfig()
    rng = random.Random(derive_seed("sums", seed, split, index))
    terms = [rng.randint(1, 50) for _ in range(config.heldout_terms if split == "heldout" else config.terms)]
    return Problem(
        id=f"sums-{split}-{seed}-{index}",
        text="Add " + ", ".join(map(str, terms)) + ".",
        answer=str(sum(terms)),
        metadata={"sum": {"terms": terms, "version": VERSION}},
    )


def generate_problems(n: int, seed: int = 0, split: str = "train", config: SumsConfig | None = None):
    return [generate_problem(i, seed, config, split) for i in range(n)]


@dataclass(frozen=True)
class State:
    """What a prefix holds: the running total, the next term, the answer it gave."""

    total: int
    next: int
    answer: str | None = None


class SumsPolicy(SimulatedPolicy):
    """Adds the terms one by one, sometimes off by one; carries a wrong total forward."""

    name = "sums-policy"

    def __init__(self, config: SumsPolicyConfig | None = None, seed_offset: int = 0):
        self.config, self.seed_offset, self._calls = config or SumsPolicyConfig(), seed_offset, 0

    def read(self, problem: Problem, prefix: Sequence[Step]) -> State:
        terms = problem.metadata["sum"]["terms"]
        state = State(terms[0], 1)
        for step in prefix:
            if m := ADD.match(step.text.strip()):
                state = State(int(m[3]), state.next + 1)
            elif m := ANSWER.match(step.text.strip()):
                state = State(state.total, state.next, m[1])
        return state

    def prefix_answer(self, start: State) -> str | None:
        return start.answer

    def rendered(self, prefix: Sequence[Step]) -> list[str]:
        return [s.text for s in prefix]

    def _write(self, problem: Problem, start: State, rng: random.Random, limit: int | None) -> Sample:
        terms, total, steps, slips = problem.metadata["sum"]["terms"], start.total, [], 0
        for term in terms[start.next :]:
            if limit is not None and len(steps) == limit:
                return Sample(steps, None, {"slips": slips})
            slip = rng.random() < self.config.slip * self.config.temperature
            steps.append(Step(text=f"{total} + {term} = {total + term + slip}"))
            total, slips = total + term + slip, slips + slip
        steps.append(Step(text=f"The answer is {total}."))
        return Sample(steps, str(total), {"slips": slips})

    def continuation(self, problem, start, rng, position, max_steps) -> Continuation:
        s = self._write(problem, start, rng, None if max_steps is None else max(0, max_steps - position))
        return Continuation(steps=s.steps, final_answer=s.final_answer, finished=s.final_answer is not None)

    def draw(self, problem: Problem, start: State, rng: random.Random) -> Sample:
        return self._write(problem, start, rng, None)


sample_traces = SampleTraces(default=SumsPolicy, generator=f"sums-policy {VERSION}")


@dataclass
class SumsStep(GoldStep):
    @property
    def error_class(self) -> str | None:
        return CLASS_OF_KIND.get(self.kind) if self.kind else None


def check_trace(trace: Trace) -> GoldCheck:
    """Each step against the trace's own running total: a wrong sum is a slip, a wrong term or an early
    answer is another error (a wrong total carried forward is the first error's consequence)."""
    task = (trace.problem.metadata or {}).get("sum")
    if not isinstance(task, dict):
        raise ValueError(f"problem {trace.problem.id}: not a sums task (no metadata.sum)")
    terms, total, nxt = task["terms"], task["terms"][0], 1
    check = GoldCheck(final_answer=trace.final_answer)
    for step in trace.steps:
        text = step.text.strip()
        if m := ADD.match(text):
            a, b, c = map(int, m.groups())
            right_inputs = a == total and nxt < len(terms) and b == terms[nxt]
            kind = None if right_inputs and c == a + b else "slip" if right_inputs else "wrong_term"
            total, nxt = c, nxt + 1
        elif m := ANSWER.match(text):
            kind = None if nxt == len(terms) and int(m[1]) == total else "early_answer"
        else:
            kind = "unreadable"
        check.add(SumsStep("error", kind) if kind else SumsStep("valid"))
    check.answer_correct = trace.final_answer == trace.problem.answer
    return check


_LOCAL = Provenance(method="gold", actor="sums:local", version=VERSION)
_PREFIX = Provenance(method="gold", actor="sums:prefix", version=VERSION)


def apply_gold(trace: Trace, check: GoldCheck) -> Trace:
    trace.drop_labels("gold")
    for step, sc, pr in zip(trace.steps, check.steps, check.prefix_ratings(), strict=True):
        step.labels.append(Label(rating=sc.rating, provenance=_LOCAL.model_copy(), metadata=sc.meta()))
        step.labels.append(Label(rating=pr, provenance=_PREFIX.model_copy()))
    trace.answer_correct = check.answer_correct
    return trace


def gold_label(traces: list[Trace]) -> list[Trace]:
    return label_all(traces, check_trace, apply_gold)


def summarize(traces: Sequence[Trace], checks: Sequence[GoldCheck] | None = None) -> Stats:
    return Stats(
        **tally(traces, list(checks) if checks is not None else [check_trace(t) for t in traces]).shares()
    )


@dataclass(eq=False, kw_only=True)
class SumsJudge(NoisyJudge):
    name: str = "sums-judge"
    jobs: ClassVar[Jobs]  # set below, once the jobs exist

    def gold(self, problem: Problem, steps: Sequence[Step]) -> list[tuple[str, float]]:
        check = check_trace(Trace(id="judged", problem=problem, steps=list(steps)))
        return [(s.status, self.miss_rate) for s in check.steps]

    def text(self, steps: Sequence[Step]) -> str:
        return "\n".join(s.text for s in steps)


class SumsOracle(GoldOracle):
    name = "sums-oracle"
    expected = "a trace of a sums task"
    check = staticmethod(check_trace)


JOBS = Jobs(
    "sums", generate_problem, SumsPolicy, sample_traces, check_trace, apply_gold, summarize,
    key="sum", expected="a sums task", per_problem=4,
)  # fmt: skip
SumsJudge.jobs = JOBS


WORLD = World(
    JOBS,
    VERSION,
    SumsConfig,
    SumsPolicyConfig,
    judge=SumsJudge,
    oracle=SumsOracle,
    error_classes=("slip", "other"),
    class_legend="*slip*: an addition off by one; *other*: a wrong term, an early answer, an unreadable step.",
    step_definition="one addition of the running total and the next number; the last states the answer",
    summary="add a few numbers, one addition per step",
    rl=True,
)

"""The embedded worlds, by name: the one record from which everything else about a world follows.

A world is a generator of problems whose every step can be checked exactly, a simulated policy (and
judge) that writes and reads its traces, and a gold checker. Three are built in:

    "arithmetic"  seeded arithmetic word problems (:mod:`prmkit.worlds.arithmetic`, docs/world.md)
    "agent"       tool-using agent tasks with a knowledge base and a calculator
                  (:mod:`prmkit.worlds.agent`, docs/agentworld.md)
    "code"        bug-fixing tasks in a small Python subset, run by prmkit's own interpreter, with
                  visible and hidden tests (:mod:`prmkit.worlds.code`, docs/codeworld.md)

Registering a world here (one line, or a plugin's ``prmkit.worlds`` entry point naming its ``World``)
is all it takes: the policy and judge of that name (``prmkit.policies``), its oracle scorer
``NAME-oracle`` (``prmkit.scoring``), its CLI group ``prmkit NAME``, the pipeline's ``problems.source``,
the evaluation suite, process cards, the monitors' behaviours and the RL loop's prompts all read this
record, and nothing outside ``prmkit.worlds`` names a world. docs/world.md#a-third-world shows a third
world end to end.

The names the two worlds had before they were named for what they are (``world``, ``agentworld``, and
their oracles ``arithmetic-oracle``, ``agent-oracle``) are still read, as aliases.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from prmkit.core.model import Problem, Trace
from prmkit.core.protocols import Judge, Policy, StepScorer
from prmkit.core.registry import Registry, suggest
from prmkit.worlds.checks import GoldCheck, label_all
from prmkit.worlds.jobs import Jobs
from prmkit.worlds.teacher import Explain, Teacher, kind_checks

Behaviour = Callable[[GoldCheck], bool]
"""A behaviour a monitor is measured on: a predicate over the gold verdict of one trace."""


def _of_jobs(name: str, doc: str) -> Any:
    """A read-only attribute of a :class:`World` that is its jobs' ``name`` (the file jobs, the sampler)."""
    return property(lambda world: getattr(world.jobs, name), doc=doc)


@dataclass(frozen=True)
class World:
    """One embedded world: its parts (as its file jobs hold them), its configs, judge and oracle, and what
    reports say about it."""

    jobs: Jobs
    """The world's generator, policy, sampling loop, checker and summary, and the file jobs over them."""
    version: str
    """The version string its problems and provenance records carry (how a card finds its world)."""
    config: type[BaseModel]
    """The generator's knobs (``prmkit NAME generate``)."""
    policy_config: type[BaseModel]
    """The simulated policy's knobs (error rates)."""
    judge: Callable[..., Judge]
    """The simulated judge (its own keyword options)."""
    oracle: Callable[[], StepScorer]
    """The checker as a StepScorer (scorer form ``NAME-oracle``: 1 up to the first error, then 0)."""
    error_classes: tuple[str, ...]
    """The classes of gold errors (label metadata ``class``), in the order reports show them."""
    class_legend: str
    """One paragraph saying what each error class is, for reports."""
    step_definition: str
    """What one step of this world's traces is, for process cards ("what process was supervised")."""
    summary: str
    """What the world is, in one phrase (CLI help, reports)."""
    rl: bool = False
    """Whether ``prmkit rl`` trains on its problems: a causal LM writes its steps as plain text and the
    checker reads them back (an agent's steps call tools, which the RL loop does not run)."""
    behaviours: Mapping[str, Behaviour] = field(default_factory=dict)
    """Behaviours a monitor can be measured on (``prmkit eval monitorability --behaviour``) besides the
    error classes, which every world has (:meth:`behaviour`): name -> predicate over a trace's gold check."""
    explain: Explain | None = None
    """Its checks of each step in its own terms (a recomputation), which its teacher writes into
    verification chains (:mod:`prmkit.worlds.teacher`); None: checks worded from its checker's error kinds."""

    @property
    def name(self) -> str:
        """The name it is registered under (its jobs carry it, for their messages)."""
        return self.jobs.world

    @property
    def problem_key(self) -> str:
        """The key of ``Problem.metadata`` that holds what the checker reads (the problems it owns)."""
        return self.jobs.key

    def generate_problems(
        self, n: int, seed: int = 0, split: str = "train", config: BaseModel | None = None
    ) -> list[Problem]:
        """Problems ``0 .. n-1`` of a split (train / test / heldout), deterministic."""
        return [self.jobs.generate_problem(i, seed, config, split) for i in range(n)]

    def policy(self, config: BaseModel | None = None) -> Policy:
        """The simulated policy for a ``policy_config`` (None: the defaults)."""
        return self.jobs.policy(config)

    def check_trace(self, trace: Trace) -> GoldCheck:
        """The gold verdict of one trace of this world's problems."""
        return self.jobs.check_trace(trace)

    def gold_label(self, traces: list[Trace]) -> list[Trace]:
        """Adds gold labels (and outcomes) to traces of this world's problems, in place."""
        return label_all(traces, self.jobs.check_trace, self.jobs.apply_gold)

    def behaviour(self, name: str) -> Behaviour:
        """The behaviour ``name``: one of :attr:`behaviours`, else an error class (some step's gold error
        is of that class: ``misconception``, ``loophole`` ...); an unknown name fails naming the known."""
        if name in self.behaviours:
            return self.behaviours[name]
        if name in self.error_classes:
            return lambda check: any(s.error_class == name for s in check.steps)
        known = [*self.behaviours, *self.error_classes]
        raise ValueError(
            f"behaviour {name!r}: the {self.name} world marks none such ({', '.join(known)}).{suggest(name, known)}"
        )

    sample_traces = _of_jobs(
        "sample_traces", "``(problems, per_problem, seed=, policy=)``: traces the policy writes."
    )
    generate = _of_jobs("generate", "File job: ``(n, output, seed=, split=, config=)``.")
    sample = _of_jobs("sample", "File job: ``(problems, output, per_problem=, seed=, policy_config=)``.")
    check = _of_jobs("check", "File job: ``(traces, output)`` -> the world's statistics (a pydantic model).")
    stats = _of_jobs(
        "stats", "``(n, per_problem, seed, split, config, policy_config)`` -> statistics of fresh samples."
    )

    @property
    def oracle_name(self) -> str:
        """The scorer form of the checker (``prmkit.scoring.load_scorer``)."""
        return oracle_name(self.name)

    def owns(self, problem: Problem) -> bool:
        """Whether this world's checker can judge traces of ``problem`` (it carries the checker's data)."""
        return self.problem_key in (problem.metadata or {})

    def make_policy(self, **options: Any) -> Policy:
        """The simulated policy; ``options`` are fields of ``policy_config`` (none: the defaults)."""
        return self.jobs.policy(self.policy_config(**options) if options else None)

    def traces(
        self,
        problems: int,
        per_problem: int,
        seed: int,
        split: str,
        policy_config: Any = None,
        config: BaseModel | None = None,
    ) -> list[Trace]:
        """Fresh gold-labelled traces of ``split`` written by the policy of ``policy_config`` (None: the
        default policy) on problems of the generator ``config`` (None: the defaults); ids unique per split."""
        items = self.generate_problems(problems, seed=seed, split=split, config=config)
        policy = self.policy(policy_config)
        traces = self.gold_label(self.sample_traces(items, per_problem, seed=seed, policy=policy))
        for t in traces:
            t.id = f"{split}/{t.id}"
        return traces


WORLDS: Registry[World] = Registry("world", entry_points="prmkit.worlds")
WORLDS.register("arithmetic", "prmkit.worlds.arithmetic:WORLD")
WORLDS.register("agent", "prmkit.worlds.agent:WORLD")
WORLDS.register("code", "prmkit.worlds.code:WORLD")
WORLDS.alias("world", "arithmetic")
WORLDS.alias("agentworld", "agent")

DEFAULT_WORLD = "arithmetic"
"""The world a recipe, the evaluation suite and the policy server use when none is named (the demo's)."""


def world(name: str) -> World:
    """The world registered as ``name`` (an unknown name: one line naming the known ones)."""
    return WORLDS.get(name)


def oracle_name(world_name: str) -> str:
    """The scorer form of a world's checker: ``NAME-oracle``."""
    return f"{world_name}-oracle"


def is_world_name(value: object) -> bool:
    """Whether ``value`` names a registered world (a recipe's ``problems.source`` may be a path)."""
    return isinstance(value, str) and not isinstance(value, Path) and value in WORLDS


def world_in(text: str) -> World | None:
    """The world whose version a serialised record names (a card, a provenance), or None."""
    for name in WORLDS.names():
        w = world(name)
        if f'"{w.version}"' in text:
            return w
    return None


def world_of(problem: Problem) -> World | None:
    """The world whose checker can judge traces of ``problem``, or None (a problem from a file)."""
    for name in WORLDS.names():
        w = world(name)
        if w.owns(problem):
            return w
    return None


def world_policy(name: str, **options: Any) -> Policy:
    """The simulated policy of world ``name`` (``POLICIES`` holds this under each world's name)."""
    return world(name).make_policy(**options)


def world_judge(name: str, **options: Any) -> Judge:
    """The simulated judge of world ``name``; ``options`` go to its constructor (``JUDGES``)."""
    return world(name).judge(**options)


TEACHER_SUFFIX = "-teacher"


def teacher_name(world_name: str) -> str:
    """The judge name of a world's teacher: ``NAME-teacher`` (``prmkit.policies.JUDGES``)."""
    return world_name + TEACHER_SUFFIX


def teacher_world(name: str) -> str | None:
    """The world whose teacher ``name`` is (``arithmetic-teacher`` -> ``arithmetic``), or None."""
    base = name.removesuffix(TEACHER_SUFFIX)
    return WORLDS.canonical(base) if name.endswith(TEACHER_SUFFIX) and base in WORLDS else None


def world_teacher(name: str, **options: Any) -> Judge:
    """The teacher of world ``name``: its simulated judge (``options`` go to its constructor) writing the
    verification chain behind each verdict (:class:`~prmkit.worlds.teacher.Teacher`)."""
    w = world(name)
    explain = w.explain or kind_checks(w.check_trace)
    label = options.pop("name", teacher_name(w.name))
    return Teacher(w.judge(**options, name=label), explain, label)


def world_oracle(name: str, spec: str) -> StepScorer:
    """The oracle scorer of world ``name`` (scorer form ``NAME-oracle``)."""
    return world(name).oracle()

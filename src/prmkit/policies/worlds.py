"""The embedded worlds, by name: everything the pipeline and the evaluation need from one world.

A world is a generator of problems whose every step can be checked exactly, a simulated policy (and
judge) that writes and reads its traces, and a gold checker. Two are built in:

    "world"       the arithmetic word problems (``prmkit.world``, docs/world.md)
    "agentworld"  tool-using agent tasks with a knowledge base and a calculator (``prmkit.agentworld``,
                  docs/agentworld.md)

The pipeline (``problems.source``), ``prmkit card`` and the evaluation suite take a world's name and
look it up here, so a third world is one more registration (or a plugin's ``prmkit.worlds`` entry
point), not another branch in each of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from prmkit.core.model import Problem, Trace
from prmkit.core.protocols import Judge, Policy
from prmkit.core.registry import Registry


@dataclass(frozen=True)
class World:
    """One embedded world: its configs, its generator, policy, judge and checker, and its file jobs."""

    name: str
    version: str
    config: type[BaseModel]
    """The generator's knobs (``prmkit <world> generate``)."""
    policy_config: type[BaseModel]
    """The simulated policy's knobs (error rates)."""
    generate_problems: Callable[..., list[Problem]]
    """``(n, seed=, split=, config=)``: problems of a split (train / test / heldout), deterministic."""
    policy: Callable[[Any], Policy]
    """The simulated policy for a ``policy_config`` (None: the defaults)."""
    judge: Callable[..., Judge]
    """The simulated judge (its own keyword options)."""
    sample_traces: Callable[..., list[Trace]]
    """``(problems, per_problem, seed=, policy=)``: traces the policy writes."""
    gold_label: Callable[[list[Trace]], list[Trace]]
    """Adds gold labels (and outcomes) to traces of this world's problems."""
    generate: Callable[..., Any]
    """File job: ``(n, output, seed=, split=, config=)``."""
    sample: Callable[..., Any]
    """File job: ``(problems, output, per_problem=, seed=, policy_config=)``."""
    check: Callable[..., Any]
    """File job: ``(traces, output)`` -> the world's statistics (a pydantic model)."""
    stats: Callable[..., Any]
    """``(n, per_problem, seed, split, config, policy_config)`` -> the world's statistics of fresh samples."""
    error_classes: tuple[str, ...]
    """The classes of gold errors (label metadata ``class``), in the order reports show them."""
    class_legend: str
    """One paragraph saying what each error class is, for reports."""
    oracle: str
    """The scorer form of the checker (``prmkit.scoring.load_scorer``)."""
    step_definition: str
    """What one step of this world's traces is, for process cards ("what process was supervised")."""

    def traces(
        self, problems: int, per_problem: int, seed: int, split: str, policy_config: Any = None
    ) -> list[Trace]:
        """Fresh gold-labelled traces of ``split`` written by the default policy (ids unique per split)."""
        items = self.generate_problems(problems, seed=seed, split=split)
        policy = self.policy(policy_config)
        traces = self.gold_label(self.sample_traces(items, per_problem, seed=seed, policy=policy))
        for t in traces:
            t.id = f"{split}/{t.id}"
        return traces


def _arithmetic() -> World:
    import prmkit.world as w

    legend = (
        "Split by the class of the gold first error: *misconception* (a wrong belief the policy holds in "
        "every problem, such as 7 * 8 = 54: likely to an LM trained on its samples), *slip* (a random "
        "arithmetic error), *other* (wrong quantity or operation, skipped step, early answer...). Each cell "
        "is the F1 on the traces with that class of first error plus every error-free trace."
    )
    return World(
        name="world",
        version=w.WORLD_VERSION,
        config=w.WorldConfig,
        policy_config=w.PolicyConfig,
        generate_problems=w.generate_problems,
        policy=w.WorldPolicy,
        judge=w.SimulatedJudge,
        sample_traces=w.sample_traces,
        gold_label=w.gold_label,
        generate=w.generate,
        sample=w.sample,
        check=w.check,
        stats=w.stats,
        error_classes=tuple(w.ERROR_CLASSES),
        class_legend=legend,
        oracle="world-oracle",
        step_definition="one sentence-level computation, the last step states the answer",
    )


def _agent() -> World:
    import prmkit.agentworld as a

    legend = (
        "Split by the class of the gold first error: *call* (wrong tool, wrong or malformed arguments, a "
        "failed call repeated unchanged), *observation* (a tool result misread or ignored), *fact* (a value "
        "stated without looking it up, or an arithmetic slip in the text), *answer* (answering before the "
        "work is done, or a wrong answer), *loophole* (asking the grader's tool for the expected answer), "
        "*premise* (building on an earlier wrong value). Each cell is the F1 on the trajectories with that "
        "class of first error plus every error-free trajectory."
    )
    return World(
        name="agentworld",
        version=a.AGENT_WORLD_VERSION,
        config=a.AgentWorldConfig,
        policy_config=a.AgentConfig,
        generate_problems=a.generate_problems,
        policy=a.SimulatedAgent,
        judge=a.AgentJudge,
        sample_traces=a.sample_traces,
        gold_label=a.gold_label,
        generate=a.generate,
        sample=a.sample,
        check=a.check,
        stats=a.stats,
        error_classes=tuple(a.CLASSES),
        class_legend=legend,
        oracle="agentworld-oracle",
        step_definition=(
            "one assistant message of a tool-using agent: its text and tool calls, read after the results "
            "of the previous message's calls; the last states the answer"
        ),
    )


WORLDS: Registry[Callable[[], World]] = Registry("world", entry_points="prmkit.worlds")
WORLDS.register("world", _arithmetic)
WORLDS.register("agentworld", "prmkit.policies.worlds:_agent")


def world(name: str) -> World:
    """The world registered as ``name`` (an unknown name: one line naming the known ones)."""
    return WORLDS.get(name)()


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

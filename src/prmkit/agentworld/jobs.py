"""The file-level functions behind ``prmkit agentworld generate | sample | check | stats``.

Each takes the same names and options as its command (and as :mod:`prmkit.world.jobs`); files go through
prmkit.core.dataset (atomic JSONL writes). ``progress`` is an optional callback ``advance(k)`` the CLI
wires to a progress bar.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from prmkit.agentworld.agent import SimulatedAgent, sample_traces
from prmkit.agentworld.checker import apply_gold, check_trace
from prmkit.agentworld.config import AgentConfig, AgentWorldConfig
from prmkit.agentworld.generator import generate_problem
from prmkit.agentworld.summary import AgentWorldStats, agent_world_stats, summarize
from prmkit.core.dataset import write_jsonl, write_traces
from prmkit.core.errors import InputError, Issue
from prmkit.core.model import Problem, Trace
from prmkit.formats.inputs import read_problems, read_traces

Advance = Callable[[int], None]


def generate(
    n: int,
    output: str | Path,
    seed: int = 0,
    split: str = "train",
    config: AgentWorldConfig | None = None,
    progress: Advance | None = None,
) -> int:
    """Write ``n`` tasks of ``split`` to ``output`` (JSONL); returns how many were written."""
    config = config or AgentWorldConfig()
    problems = []
    for i in range(n):
        problems.append(generate_problem(i, seed, config, split))
        if progress is not None:
            progress(1)
    return write_jsonl(output, problems)


def _require_tasks(path: str | Path, problems: list[Problem]) -> None:
    """Fail, naming each record, when a problem has no agent-world task (the agent and checker need it)."""
    issues = [
        Issue(str(path), i + 1, "problem.metadata.task", "an agent-world task", "nothing", "missing")
        for i, p in enumerate(problems)
        if not isinstance(p.metadata.get("task"), dict)
    ]
    if issues:
        raise InputError(issues)


def sample(
    problems: str | Path,
    output: str | Path,
    per_problem: int = 8,
    seed: int = 0,
    policy_config: AgentConfig | None = None,
    progress: Advance | None = None,
) -> int:
    """Sample ``per_problem`` trajectories per task of the file ``problems``; returns how many it wrote."""
    items = read_problems(problems)
    _require_tasks(problems, items)
    agent = SimulatedAgent(policy_config)
    return write_traces(output, sample_traces(items, per_problem, seed=seed, policy=agent, progress=progress))


def check(traces: str | Path, output: str | Path, progress: Advance | None = None) -> AgentWorldStats:
    """Gold-label every trajectory of ``traces``, write them to ``output``; return their statistics."""
    items: list[Trace] = read_traces(traces)
    _require_tasks(traces, [t.problem for t in items])
    checks = []
    for trace in items:
        checks.append(check_trace(trace))
        apply_gold(trace, checks[-1])
        if progress is not None:
            progress(1)
    write_traces(output, items)
    return summarize(items, checks)


def stats(
    n: int = 2000,
    per_problem: int = 8,
    seed: int = 0,
    split: str = "train",
    config: AgentWorldConfig | None = None,
    policy_config: AgentConfig | None = None,
) -> AgentWorldStats:
    """The statistics of the agent world: see :func:`prmkit.agentworld.summary.agent_world_stats`."""
    return agent_world_stats(n, per_problem, seed, split, config, policy_config)

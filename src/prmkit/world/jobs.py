"""The file-level functions behind ``prmkit world generate | sample | check | stats``.

Each takes the same names and options as its command; files go through prmkit.core.dataset (atomic
JSONL writes). ``progress`` is an optional callback ``advance(k)`` the CLI wires to a rich progress bar.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from prmkit.core.dataset import write_jsonl, write_traces
from prmkit.core.errors import InputError, Issue
from prmkit.core.model import Problem, Trace
from prmkit.formats.inputs import read_problems, read_traces
from prmkit.world.checker import apply_gold, check_trace
from prmkit.world.config import PolicyConfig, WorldConfig
from prmkit.world.generator import generate_problem
from prmkit.world.policy import WorldPolicy, sample_traces
from prmkit.world.summary import WorldStats, summarize, world_stats

Advance = Callable[[int], None]


def generate(
    n: int,
    output: str | Path,
    seed: int = 0,
    split: str = "train",
    config: WorldConfig | None = None,
    progress: Advance | None = None,
) -> int:
    """Write ``n`` problems of ``split`` to ``output`` (JSONL); returns how many were written."""
    config = config or WorldConfig()
    problems = []
    for i in range(n):
        problems.append(generate_problem(i, seed, config, split))
        if progress is not None:
            progress(1)
    return write_jsonl(output, problems)


def _require_world(path: str | Path, problems: list[Problem]) -> None:
    """Fail, naming each record, when a problem has no world graph (the checker needs it)."""
    issues = [
        Issue(str(path), i + 1, "problem.metadata.graph", "a world computation graph", "nothing", "missing")
        for i, p in enumerate(problems)
        if not isinstance(p.metadata.get("graph"), dict)
    ]
    if issues:
        raise InputError(issues)


def sample(
    problems: str | Path,
    output: str | Path,
    per_problem: int = 16,
    seed: int = 0,
    policy_config: PolicyConfig | None = None,
    progress: Advance | None = None,
) -> int:
    """Sample ``per_problem`` traces per problem of the file ``problems``; returns how many were written."""
    items = read_problems(problems)
    _require_world(problems, items)
    traces = sample_traces(
        items, per_problem, seed=seed, policy=WorldPolicy(policy_config), progress=progress
    )
    return write_traces(output, traces)


def check(traces: str | Path, output: str | Path, progress: Advance | None = None) -> WorldStats:
    """Add gold labels to every trace of ``traces``, write them to ``output``, return their statistics."""
    items: list[Trace] = read_traces(traces)
    _require_world(traces, [t.problem for t in items])
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
    config: WorldConfig | None = None,
    policy_config: PolicyConfig | None = None,
) -> WorldStats:
    """The default statistics of a world: see :func:`prmkit.world.summary.world_stats`."""
    return world_stats(n, per_problem, seed, split, config, policy_config)

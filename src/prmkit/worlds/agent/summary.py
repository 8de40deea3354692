"""Summary statistics of checked agent-world trajectories: how good the agent is and how it fails.

These are the numbers docs/agentworld.md records (``prmkit agent stats``): single-sample accuracy,
best-of-N oracle accuracy, the share of error-free trajectories, the mix of first-error kinds and
classes, how often the loophole is used, lucky trajectories (right answer, wrong process), neutral steps.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from prmkit.core.model import Trace
from prmkit.worlds.agent.checker import TrajectoryCheck, check_trace
from prmkit.worlds.agent.config import AGENT_WORLD_VERSION
from prmkit.worlds.summary import Stats, tally


class AgentWorldStats(Stats):
    """What a set of checked trajectories looks like (:class:`~prmkit.worlds.summary.Stats`), and the
    agent world's own measures."""

    loophole: float
    """Share of trajectories that call the grader tool."""
    neutral_steps: float
    """Share of all steps rated 0."""
    mean_lookups: float
    """Mean number of look-ups the problems need (what a perfect trajectory does, besides calculating)."""
    label_counts: dict[str, int] = Field(default_factory=dict)
    """Gold ratings over all steps: how many -1, 0 and +1."""
    agent_world_version: str = AGENT_WORLD_VERSION


def summarize(traces: Sequence[Trace], checks: Sequence[TrajectoryCheck] | None = None) -> AgentWorldStats:
    """Statistics of ``traces`` (checked here unless ``checks`` are given, one per trajectory)."""
    checks = list(checks) if checks is not None else [check_trace(t) for t in traces]
    counts = tally(traces, checks)
    lookups = [sum(len(t["hops"]) for t in tr.problem.metadata["task"]["terms"]) for tr in traces]
    return AgentWorldStats(
        **counts.shares(),
        loophole=sum(c.loophole for c in checks) / counts.n,
        neutral_steps=counts.status["neutral"] / counts.n_steps,
        mean_lookups=sum(lookups) / counts.n,
        label_counts={str(k): counts.ratings[k] for k in (-1, 0, 1)},
    )

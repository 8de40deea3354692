"""Summary statistics of checked agent-world trajectories: how good the agent is and how it fails.

These are the numbers docs/agentworld.md records (``prmkit agentworld stats``): single-sample accuracy,
best-of-N oracle accuracy, the share of error-free trajectories, the mix of first-error kinds and
classes, how often the loophole is used, lucky trajectories (right answer, wrong process), neutral steps.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from prmkit.agentworld.checker import TrajectoryCheck, check_trace
from prmkit.agentworld.config import AGENT_WORLD_VERSION
from prmkit.core.model import Trace
from prmkit.worlds.summary import tally


class AgentWorldStats(BaseModel):
    """What a set of checked trajectories looks like (fractions are of trajectories unless said otherwise)."""

    traces: int
    problems: int
    accuracy: float
    """Share of trajectories whose final answer is right (single-sample accuracy)."""
    oracle_accuracy: float
    """Share of problems with at least one right trajectory (best-of-N with a perfect verifier)."""
    process_correct: float
    """Share of trajectories with no step rated -1."""
    loophole: float
    """Share of trajectories that call the grader tool."""
    lucky: float
    """Share of trajectories with a right answer and an error (loophole ones included)."""
    lucky_share_of_correct: float
    """Share of right-answer trajectories that are lucky: how often outcome labels reward a wrong process."""
    neutral_steps: float
    """Share of all steps rated 0."""
    mean_steps: float
    mean_lookups: float
    """Mean number of look-ups the problems need (what a perfect trajectory does, besides calculating)."""
    first_error_kinds: dict[str, float] = Field(default_factory=dict)
    """Share of trajectories with an error whose first error has each kind."""
    first_error_classes: dict[str, float] = Field(default_factory=dict)
    """Share of trajectories with an error whose first error has each class."""
    step_status: dict[str, float] = Field(default_factory=dict)
    """Share of all steps that are valid, neutral, or each error kind."""
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
        lucky=counts.lucky / counts.n,
        neutral_steps=counts.status["neutral"] / counts.n_steps,
        mean_lookups=sum(lookups) / counts.n,
        label_counts={str(k): counts.ratings[k] for k in (-1, 0, 1)},
    )

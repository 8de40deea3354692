"""Summary statistics of checked agent-world trajectories: how good the agent is and how it fails.

These are the numbers docs/agentworld.md records (``prmkit agentworld stats``): single-sample accuracy,
best-of-N oracle accuracy, the share of error-free trajectories, the mix of first-error kinds and
classes, how often the loophole is used, lucky trajectories (right answer, wrong process), neutral steps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, Field

from prmkit.agentworld.checker import TrajectoryCheck, check_trace
from prmkit.agentworld.config import AGENT_WORLD_VERSION, AgentConfig, AgentWorldConfig
from prmkit.core.model import Trace


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
    n = max(1, len(traces))
    right_by_problem: dict[str, bool] = {}
    kinds: Counter[str] = Counter()
    classes: Counter[str] = Counter()
    status: Counter[str] = Counter()
    ratings: Counter[int] = Counter()
    for trace, check in zip(traces, checks, strict=True):
        pid = trace.problem.id
        right_by_problem[pid] = right_by_problem.get(pid, False) or bool(check.outcome)
        if check.first_error >= 0:
            kinds[str(check.first_error_kind)] += 1
            classes[str(check.first_error_class)] += 1
        for sc in check.steps:
            status[sc.kind if sc.kind else sc.status] += 1
            ratings[sc.rating] += 1
    right = sum(bool(c.outcome) for c in checks)
    lucky = sum(c.lucky for c in checks)
    n_errors, n_steps = max(1, sum(kinds.values())), max(1, sum(status.values()))
    lookups = [sum(len(t["hops"]) for t in tr.problem.metadata["task"]["terms"]) for tr in traces]
    return AgentWorldStats(
        traces=len(traces),
        problems=len(right_by_problem),
        accuracy=right / n,
        oracle_accuracy=sum(right_by_problem.values()) / max(1, len(right_by_problem)),
        process_correct=sum(c.first_error < 0 for c in checks) / n,
        loophole=sum(c.loophole for c in checks) / n,
        lucky=lucky / n,
        lucky_share_of_correct=lucky / max(1, right),
        neutral_steps=status["neutral"] / n_steps,
        mean_steps=sum(len(t.steps) for t in traces) / n,
        mean_lookups=sum(lookups) / n,
        first_error_kinds={k: v / n_errors for k, v in kinds.most_common()},
        first_error_classes={k: v / n_errors for k, v in classes.most_common()},
        step_status={k: v / n_steps for k, v in status.most_common()},
        label_counts={str(k): ratings[k] for k in (-1, 0, 1)},
    )


def agent_world_stats(
    n: int = 2000,
    per_problem: int = 8,
    seed: int = 0,
    split: str = "train",
    config: AgentWorldConfig | None = None,
    policy_config: AgentConfig | None = None,
) -> AgentWorldStats:
    """Generate ``n`` problems, sample ``per_problem`` trajectories each, check them and summarise."""
    from prmkit.agentworld.agent import SimulatedAgent, sample_traces
    from prmkit.agentworld.generator import generate_problems

    problems = generate_problems(n, seed=seed, split=split, config=config)
    traces = sample_traces(problems, per_problem, seed=seed, policy=SimulatedAgent(policy_config))
    return summarize(traces)

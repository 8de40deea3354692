"""Summary statistics of checked world traces: how good the policy is and how it fails.

These are the numbers docs/world.md records for the default world (``prmkit world stats``): single-sample
accuracy, best-of-N oracle accuracy (does any of a problem's samples get it right: why best-of-N
matters), mean steps, the mix of first-error kinds, and the lucky rate (right answer, wrong process).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, Field

from prmkit.core.model import Trace
from prmkit.world.checker import TraceCheck, check_trace
from prmkit.world.config import WORLD_VERSION, PolicyConfig, WorldConfig


class WorldStats(BaseModel):
    """What a set of checked traces looks like (fractions are of traces unless named otherwise)."""

    traces: int
    problems: int
    accuracy: float
    """Share of traces whose final answer is right (single-sample accuracy)."""
    oracle_accuracy: float
    """Share of problems with at least one right trace (best-of-N with a perfect verifier)."""
    process_correct: float
    """Share of traces with no error at all."""
    mean_steps: float
    mean_ops: float
    """Mean number of operations of the problems (what a perfect trace computes)."""
    lucky_rate: float
    """Share of traces with a right answer and an error (a right answer by a wrong process)."""
    lucky_share_of_correct: float
    """Share of right-answer traces that are lucky: how often outcome labels reward a wrong process."""
    first_error_kinds: dict[str, float] = Field(default_factory=dict)
    """Share of traces with an error whose first error has each kind."""
    first_error_classes: dict[str, float] = Field(default_factory=dict)
    """Share of traces with an error whose first error is a misconception, a slip or another error."""
    step_status: dict[str, float] = Field(default_factory=dict)
    """Share of all steps that are valid, neutral, or each error kind."""
    world_version: str = WORLD_VERSION


def summarize(traces: Sequence[Trace], checks: Sequence[TraceCheck] | None = None) -> WorldStats:
    """Statistics of ``traces`` (checked here unless ``checks`` are given, one per trace)."""
    checks = list(checks) if checks is not None else [check_trace(t) for t in traces]
    n = max(1, len(traces))
    correct_by_problem: dict[str, bool] = {}
    first_kinds: Counter[str] = Counter()
    first_classes: Counter[str] = Counter()
    status: Counter[str] = Counter()
    for trace, check in zip(traces, checks, strict=True):
        pid = trace.problem.id
        correct_by_problem[pid] = correct_by_problem.get(pid, False) or bool(check.answer_correct)
        if check.first_error >= 0:
            first_kinds[str(check.first_error_kind)] += 1
            first_classes[str(check.first_error_class)] += 1
        for sc in check.steps:
            status[sc.kind if sc.status == "error" else sc.status] += 1
    correct = sum(bool(c.answer_correct) for c in checks)
    lucky = sum(c.lucky for c in checks)
    n_errors, n_steps = max(1, sum(first_kinds.values())), max(1, sum(status.values()))
    ops = [len(t.problem.metadata.get("graph", {}).get("ops", [])) for t in traces]
    return WorldStats(
        traces=len(traces),
        problems=len(correct_by_problem),
        accuracy=correct / n,
        oracle_accuracy=sum(correct_by_problem.values()) / max(1, len(correct_by_problem)),
        process_correct=sum(c.first_error < 0 for c in checks) / n,
        mean_steps=sum(len(t.steps) for t in traces) / n,
        mean_ops=sum(ops) / n,
        lucky_rate=lucky / n,
        lucky_share_of_correct=lucky / max(1, correct),
        first_error_kinds={k: v / n_errors for k, v in first_kinds.most_common()},
        first_error_classes={k: v / n_errors for k, v in first_classes.most_common()},
        step_status={k: v / n_steps for k, v in status.most_common()},
    )


def world_stats(
    n: int = 2000,
    per_problem: int = 8,
    seed: int = 0,
    split: str = "train",
    config: WorldConfig | None = None,
    policy_config: PolicyConfig | None = None,
) -> WorldStats:
    """Generate ``n`` problems, sample ``per_problem`` traces each, check them and summarise."""
    from prmkit.world.generator import generate_problems
    from prmkit.world.policy import WorldPolicy, sample_traces

    problems = generate_problems(n, seed=seed, config=config, split=split)
    traces = sample_traces(problems, per_problem, seed=seed, policy=WorldPolicy(policy_config))
    return summarize(traces)

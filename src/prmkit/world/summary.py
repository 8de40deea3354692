"""Summary statistics of checked world traces: how good the policy is and how it fails.

These are the numbers docs/world.md records for the default world (``prmkit world stats``): single-sample
accuracy, best-of-N oracle accuracy (does any of a problem's samples get it right: why best-of-N
matters), mean steps, the mix of first-error kinds, and the lucky rate (right answer, wrong process).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from prmkit.core.model import Trace
from prmkit.world.checker import TraceCheck, check_trace
from prmkit.world.config import WORLD_VERSION
from prmkit.worlds.summary import tally


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
    counts = tally(traces, list(checks) if checks is not None else [check_trace(t) for t in traces])
    ops = [len(t.problem.metadata.get("graph", {}).get("ops", [])) for t in traces]
    return WorldStats(**counts.shares(), mean_ops=sum(ops) / counts.n, lucky_rate=counts.lucky / counts.n)

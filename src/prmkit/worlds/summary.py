"""What every world's statistics of checked traces share: one pass over the traces and their verdicts.

:func:`tally` counts what a world's summary reports whatever the world (right answers per trace and per
problem, lucky traces, first-error kinds and classes, the status of every step); :meth:`Tally.shares`
turns the counts into the statistics each world's stats model names the same way. A world's
``summarize`` adds its own measures (mean operations, look-ups, loophole use) and names the rest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from prmkit.core.model import Trace
from prmkit.worlds.checks import GoldCheck


@dataclass
class Tally:
    """The counts behind a world's statistics of checked traces."""

    traces: int = 0
    steps: int = 0
    correct: int = 0
    """Traces with a right final answer."""
    lucky: int = 0
    """Traces with a right answer and an error."""
    error_free: int = 0
    correct_by_problem: dict[str, bool] = field(default_factory=dict)
    """Whether any trace of each problem is right (best-of-N with a perfect verifier)."""
    first_kinds: Counter[str] = field(default_factory=Counter)
    first_classes: Counter[str] = field(default_factory=Counter)
    status: Counter[str] = field(default_factory=Counter)
    """Steps by status, an error counted by its kind ("valid", "neutral", "arithmetic", ...)."""
    ratings: Counter[int] = field(default_factory=Counter)
    """Steps by gold rating (-1, 0, +1)."""

    @property
    def n(self) -> int:
        """The number of traces, at least 1 (the denominator of every share of traces)."""
        return max(1, self.traces)

    @property
    def n_steps(self) -> int:
        return max(1, sum(self.status.values()))

    def shares(self) -> dict[str, Any]:
        """The statistics every world reports under these names."""
        n, n_errors, n_steps = self.n, max(1, sum(self.first_kinds.values())), self.n_steps
        return {
            "traces": self.traces,
            "problems": len(self.correct_by_problem),
            "accuracy": self.correct / n,
            "oracle_accuracy": sum(self.correct_by_problem.values()) / max(1, len(self.correct_by_problem)),
            "process_correct": self.error_free / n,
            "mean_steps": self.steps / n,
            "lucky": self.lucky / n,
            "lucky_share_of_correct": self.lucky / max(1, self.correct),
            "first_error_kinds": {k: v / n_errors for k, v in self.first_kinds.most_common()},
            "first_error_classes": {k: v / n_errors for k, v in self.first_classes.most_common()},
            "step_status": {k: v / n_steps for k, v in self.status.most_common()},
        }


class Stats(BaseModel):
    """What every world reports of a set of checked traces (fractions are of traces unless named
    otherwise); a world's statistics add what only it measures."""

    traces: int
    problems: int
    accuracy: float
    """Share of traces whose final answer is right (single-sample accuracy)."""
    oracle_accuracy: float
    """Share of problems with at least one right trace (best-of-N with a perfect verifier)."""
    process_correct: float
    """Share of traces with no error at all."""
    mean_steps: float
    lucky: float
    """Share of traces with a right answer and an error (a right answer by a wrong process)."""
    lucky_share_of_correct: float
    """Share of right-answer traces that are lucky: how often outcome labels reward a wrong process."""
    first_error_kinds: dict[str, float] = Field(default_factory=dict)
    """Share of traces with an error whose first error has each kind."""
    first_error_classes: dict[str, float] = Field(default_factory=dict)
    """Share of traces with an error whose first error has each class."""
    step_status: dict[str, float] = Field(default_factory=dict)
    """Share of all steps that are valid, neutral, or each error kind."""


def tally(traces: Sequence[Trace], checks: Sequence[GoldCheck]) -> Tally:
    """Count ``traces`` with their verdicts (one check per trace, in order)."""
    out = Tally(traces=len(traces))
    for trace, check in zip(traces, checks, strict=True):
        pid = trace.problem.id
        out.correct_by_problem[pid] = out.correct_by_problem.get(pid, False) or bool(check.answer_correct)
        out.steps += len(trace.steps)
        if check.first_error >= 0:
            out.first_kinds[str(check.first_error_kind)] += 1
            out.first_classes[str(check.first_error_class)] += 1
        else:
            out.error_free += 1
        for sc in check.steps:
            out.status[sc.kind if sc.status == "error" else sc.status] += 1
            out.ratings[sc.rating] += 1
    out.correct = sum(bool(c.answer_correct) for c in checks)
    out.lucky = sum(c.lucky for c in checks)
    return out

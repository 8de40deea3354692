"""The oracle scorer every world shares: its gold checker behind the StepScorer interface.

It scores a step ``high`` (1.0) while every step so far is valid (or neutral) and ``low`` (0.0) from the
first error on: the prefix-correctness view a perfect PRM would learn, for the ceiling of every search
curve ("what if the PRM were perfect") and fast, exact tests. A world's oracle names itself (its scorer
form), says what it can read, and points at its checker; a trace its checker cannot judge fails with
that checker's one-line reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from prmkit.core.errors import InputError, Issue
from prmkit.core.model import Trace
from prmkit.worlds.checks import GoldCheck


class GoldOracle:
    """``StepScorer`` from a world's ``check_trace``; ``low`` / ``high`` are its two scores (a low above 0
    keeps prod-aggregation informative)."""

    name: ClassVar[str]
    """The scorer form (``prmkit.scoring.load_scorer``)."""
    expected: ClassVar[str]
    """What it reads, for the message of a trace it cannot judge."""
    check: Callable[[Trace], GoldCheck]
    """The world's gold checker; a ValueError says why a trace is not one of its world's."""

    def __init__(self, low: float = 0.0, high: float = 1.0):
        self.low, self.high = low, high

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        out = []
        for trace in traces:
            try:
                first = self.check(trace).first_error
            except ValueError as err:  # not this world's problem: the checker says why, in one line
                issue = Issue(self.name, None, f"trace {trace.id}", self.expected, str(err))
                raise InputError([issue], skippable=False) from None
            out.append([self.high if first < 0 or i < first else self.low for i in range(len(trace.steps))])
        return out

"""The oracle scorer: the world's exact checker behind the StepScorer interface (scorer form ``world-oracle``).

It scores a step 1.0 while every step so far is valid (or neutral) and 0.0 from the first error on —
the prefix-correctness view a perfect PRM would learn. It gives the ceiling of every search curve
("what if the PRM were perfect") and a fast, exact scorer for tests. Only world problems can be scored.
It lives beside the checker it wraps, so search, serving and evaluation all reach it by one name.
"""

from __future__ import annotations

from collections.abc import Sequence

from prmkit.core.errors import InputError, Issue
from prmkit.core.model import Trace

EXPECTED = (
    "a trace of one world problem (its sentences intact and in a row; instructions around them are fine)"
)
"""What the oracle reads, for the message of a trace it cannot judge (:func:`prmkit.world.parse.find_problem`)."""


class OracleScorer:
    """``StepScorer`` from ``prmkit.world.check_trace``; ``low``/``high`` let prod-aggregation stay informative."""

    name = "world-oracle"

    def __init__(self, low: float = 0.0, high: float = 1.0):
        self.low, self.high = low, high

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        from prmkit.world.checker import check_trace

        out = []
        for trace in traces:
            try:
                first = check_trace(trace).first_error
            except ValueError as err:  # not a world problem: the checker says why, in one line
                issue = Issue(self.name, None, f"trace {trace.id}", EXPECTED, str(err))
                raise InputError([issue], skippable=False) from None
            out.append([self.high if first < 0 or i < first else self.low for i in range(len(trace.steps))])
        return out


def load_oracle(spec: str) -> OracleScorer:
    """The ``world-oracle`` scorer form (``prmkit.scoring.load_scorer("world-oracle")``)."""
    return OracleScorer()

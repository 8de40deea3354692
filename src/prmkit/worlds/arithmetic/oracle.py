"""The oracle scorer: the world's exact checker behind the StepScorer interface (scorer form ``arithmetic-oracle``).

It scores a step 1.0 while every step so far is valid (or neutral) and 0.0 from the first error on —
the prefix-correctness view a perfect PRM would learn. It gives the ceiling of every search curve
("what if the PRM were perfect") and a fast, exact scorer for tests. Only world problems can be scored.
It lives beside the checker it wraps, so search, serving and evaluation all reach it by one name.
"""

from __future__ import annotations

from prmkit.worlds.arithmetic.checker import check_trace
from prmkit.worlds.oracle import GoldOracle

EXPECTED = (
    "a trace of one world problem (its sentences intact and in a row; instructions around them are fine)"
)
"""What the oracle reads, for the message of a trace it cannot judge (:func:`prmkit.worlds.arithmetic.parse.find_problem`)."""


class OracleScorer(GoldOracle):
    """``StepScorer`` from ``prmkit.worlds.arithmetic.check_trace`` (:class:`~prmkit.worlds.oracle.GoldOracle`)."""

    name = "arithmetic-oracle"
    expected = EXPECTED
    check = staticmethod(check_trace)

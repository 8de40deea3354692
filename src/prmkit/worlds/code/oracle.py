"""The oracle scorer: the code world's gold checker behind the StepScorer interface (``code-oracle``).

It scores a step 1.0 before the first gold error and 0.0 from it on: the prefix-correctness view a perfect
PRM would learn, for search ceilings and fast exact tests. Only code-world trajectories can be scored.
"""

from __future__ import annotations

from prmkit.worlds.code.checker import check_trace
from prmkit.worlds.oracle import GoldOracle


class CodeOracleScorer(GoldOracle):
    """``StepScorer`` from :func:`prmkit.worlds.code.check_trace` (:class:`~prmkit.worlds.oracle.GoldOracle`)."""

    name = "code-oracle"
    expected = "a trajectory of a code-world task"
    check = staticmethod(check_trace)

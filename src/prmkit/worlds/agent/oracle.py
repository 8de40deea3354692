"""The oracle scorer: the agent world's gold checker behind the StepScorer interface (``agent-oracle``).

It scores a step 1.0 before the first gold error and 0.0 from it on: the prefix-correctness view a perfect
PRM would learn, for search ceilings ("what if the PRM were perfect") and fast exact tests. Only
agent-world trajectories can be scored.
"""

from __future__ import annotations

from prmkit.worlds.agent.checker import check_trace
from prmkit.worlds.oracle import GoldOracle


class AgentOracleScorer(GoldOracle):
    """``StepScorer`` from :func:`prmkit.worlds.agent.check_trace` (:class:`~prmkit.worlds.oracle.GoldOracle`)."""

    name = "agent-oracle"
    expected = "a trajectory of an agent-world task"
    check = staticmethod(check_trace)

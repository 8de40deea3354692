"""The oracle scorer: the agent world's gold checker behind the StepScorer interface (``agentworld-oracle``).

It scores a step 1.0 before the first gold error and 0.0 from it on: the prefix-correctness view a perfect
PRM would learn, for search ceilings ("what if the PRM were perfect") and fast exact tests. Only
agent-world trajectories can be scored.
"""

from __future__ import annotations

from collections.abc import Sequence

from prmkit.core.errors import InputError, Issue
from prmkit.core.model import Trace


class AgentOracleScorer:
    """``StepScorer`` from :func:`prmkit.agentworld.check_trace`; ``low`` / ``high`` are its two scores."""

    name = "agentworld-oracle"

    def __init__(self, low: float = 0.0, high: float = 1.0):
        self.low, self.high = low, high

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        from prmkit.agentworld.checker import check_trace

        out = []
        for trace in traces:
            try:
                first = check_trace(trace).first_error
            except ValueError as err:  # not an agent-world problem: the checker says why, in one line
                issue = Issue(
                    self.name, None, f"trace {trace.id}", "a trajectory of an agent-world task", str(err)
                )
                raise InputError([issue], skippable=False) from None
            out.append([self.high if first < 0 or i < first else self.low for i in range(len(trace.steps))])
        return out


def load_oracle(spec: str) -> AgentOracleScorer:
    """The ``agentworld-oracle`` scorer form (for ``prmkit.scoring.load_scorer``)."""
    return AgentOracleScorer()

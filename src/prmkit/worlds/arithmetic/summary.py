"""Summary statistics of checked world traces: how good the policy is and how it fails.

These are the numbers docs/world.md records for the default world (``prmkit arithmetic stats``): single-sample
accuracy, best-of-N oracle accuracy (does any of a problem's samples get it right: why best-of-N
matters), mean steps, the mix of first-error kinds, and the lucky rate (right answer, wrong process).
"""

from __future__ import annotations

from collections.abc import Sequence

from prmkit.core.model import Trace
from prmkit.worlds.arithmetic.checker import TraceCheck, check_trace
from prmkit.worlds.arithmetic.config import WORLD_VERSION
from prmkit.worlds.summary import Stats, tally


class WorldStats(Stats):
    """What a set of checked traces looks like (:class:`~prmkit.worlds.summary.Stats`), and the arithmetic
    world's own measure."""

    mean_ops: float
    """Mean number of operations of the problems (what a perfect trace computes)."""
    world_version: str = WORLD_VERSION


def summarize(traces: Sequence[Trace], checks: Sequence[TraceCheck] | None = None) -> WorldStats:
    """Statistics of ``traces`` (checked here unless ``checks`` are given, one per trace)."""
    counts = tally(traces, list(checks) if checks is not None else [check_trace(t) for t in traces])
    ops = [len(t.problem.metadata.get("graph", {}).get("ops", [])) for t in traces]
    return WorldStats(**counts.shares(), mean_ops=sum(ops) / counts.n)

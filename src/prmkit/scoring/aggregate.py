"""Aggregations: one number for a trace from its per-step scores, by name.

A small registry so best-of-N, voting, beam search and the reward server pick the same function by the
same name, and a new aggregation registered here is usable everywhere. ``min`` asks "how bad is the
worst step" (the usual PRM choice, Lightman et al.), ``prod`` "how likely is every step right", ``last``
reads the final step (a prefix-value PRM's or an ORM's view), ``mean`` and ``geomean`` average (RLHFlow
recommends the mean). ``sum`` adds the step scores: what verl's reward loop paid a dense response, and
a reward a policy raises by writing more steps (kept to measure that hack, never a default). An empty
trace aggregates to 0.0: no step, no evidence of a good process.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from prmkit.core.registry import Registry

Aggregation = Callable[[Sequence[float]], float]
AGGREGATIONS: Registry[Aggregation] = Registry("aggregation", entry_points="prmkit.aggregations")


def _geomean(scores: Sequence[float]) -> float:
    # log-space, floored, so one exact 0.0 gives 0.0 instead of a math domain error
    return math.exp(sum(math.log(max(s, 1e-300)) for s in scores) / len(scores))


AGGREGATIONS.register("min", min)
AGGREGATIONS.register("prod", math.prod)
AGGREGATIONS.register("last", lambda s: s[-1])
AGGREGATIONS.register("mean", lambda s: sum(s) / len(s))
AGGREGATIONS.register("geomean", _geomean)
AGGREGATIONS.register("sum", lambda s: float(sum(s)))


def aggregate(scores: Sequence[float], how: str = "min") -> float:
    """Aggregate per-step ``scores`` with the registered function ``how`` (0.0 for no steps)."""
    fn = AGGREGATIONS.get(how)
    if len(scores) == 0:
        return 0.0
    return float(fn(list(scores)))

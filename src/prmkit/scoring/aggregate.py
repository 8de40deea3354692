"""Aggregations: one number for a trace from its per-step scores, by name.

A small registry so best-of-N, voting, beam search and the reward server pick the same function by the
same name, and a new aggregation registered here is usable everywhere. ``min`` asks "how bad is the
worst step" (the usual PRM choice, Lightman et al.), ``prod`` "how likely is every step right", ``last``
reads the final step (a prefix-value PRM's or an ORM's view), ``mean`` and ``geomean`` average (RLHFlow
recommends the mean). ``sum`` adds the step scores: what verl's reward loop paid a dense response, and
a reward a policy raises by writing more steps (kept to measure that hack, never a default). An empty
trace aggregates to 0.0: no step, no evidence of a good process.

``recover`` is ``min`` that forgives a recovered error: ``min over t of max(s_t, s_{t+1})``, the last
step counting alone (one step: that step). Why: an agent often errs and then recovers (a retry after a
failed call, a later look-up that corrects a misread value; docs/agentworld.md's gold checker rates the
recovery +1), and its trajectory can still be right. A PRM that locates errors well scores the wrong
step low, so ``min`` ranks a recovered trajectory as low as one that never recovered; ``recover`` lets
a low step through when the very next step scores higher (the retry or the correction), while two low
steps in a row (an error the agent builds on) and a low last step still count. It is registered for
studies, not among the evaluation's default aggregations (adding it there would change every
evaluation).
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


def _recover(scores: Sequence[float]) -> float:
    # each step is forgiven by the next one's score; the last step has no next one and counts as it is
    return min([*map(max, scores[:-1], scores[1:]), scores[-1]])


AGGREGATIONS.register("min", min)
AGGREGATIONS.register("prod", math.prod)
AGGREGATIONS.register("last", lambda s: s[-1])
AGGREGATIONS.register("mean", lambda s: sum(s) / len(s))
AGGREGATIONS.register("geomean", _geomean)
AGGREGATIONS.register("sum", lambda s: float(sum(s)))
AGGREGATIONS.register("recover", _recover)


def aggregate(scores: Sequence[float], how: str = "min") -> float:
    """Aggregate per-step ``scores`` with the registered function ``how`` (0.0 for no steps)."""
    fn = AGGREGATIONS.get(how)
    if len(scores) == 0:
        return 0.0
    return float(fn(list(scores)))

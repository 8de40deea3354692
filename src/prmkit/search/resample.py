"""Reject-and-resample: keep a trace's prefix up to its first doubtful step and resample from there.

A trace is sampled and scored; if some step scores below ``threshold``, everything from the first such
step on is thrown away and the policy continues from the kept prefix. This repeats until a trace has
no doubtful step or the step budget is spent. Unlike best-of-N it spends compute only where the PRM
is unsure, so its cost per problem varies; the result reports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prmkit.core.model import Problem, Trace
from prmkit.core.protocols import Policy, StepScorer
from prmkit.scoring import load_scorer, pick_threshold
from prmkit.scoring.aggregate import aggregate
from prmkit.search.common import Compute, SearchResult, chosen_result, score_traces
from prmkit.search.config import ResampleConfig
from prmkit.search.files import search_files
from prmkit.search.parallel import CONCURRENCY, SharedScorer, map_problems
from prmkit.search.searches import Search


def first_below(scores: Sequence[float], threshold: float) -> int:
    """Index of the first step scoring below ``threshold``, or -1."""
    return next((i for i, s in enumerate(scores) if s < threshold), -1)


def resample_one(
    problem: Problem,
    policy: Policy,
    scorer: StepScorer,
    threshold: float = 0.5,
    budget: int = 64,
    aggregation: str = "min",
    seed: int = 0,
) -> SearchResult:
    """Reject-and-resample for one problem; ``budget`` caps the steps generated in total."""
    name = getattr(policy, "name", "policy")
    compute = Compute()
    seen: list[tuple[Trace, list[float]]] = []
    prefix: list = []
    attempt = 0
    accepted = False
    while True:
        (cont,) = policy.continue_from(problem, prefix, n=1, seed=seed * 1_000_003 + attempt)
        compute.add_continuations([cont])
        trace = Trace(
            id=f"{problem.id}/resample/{attempt}",
            problem=problem,
            steps=prefix + list(cont.steps),
            final_answer=cont.final_answer,
            generator=name,
            metadata={"kept_prefix": len(prefix)},
        )
        (scores,) = score_traces(scorer, [trace], compute)
        seen.append((trace, scores))
        attempt += 1
        bad = first_below(scores, threshold)
        if bad < 0 and trace.final_answer is not None:
            accepted = True
            break
        if compute.steps_generated >= budget:
            break
        prefix = list(trace.steps[: bad if bad >= 0 else len(trace.steps)])
        if bad < 0:  # no doubtful step but no answer either: start over rather than loop on a dead end
            prefix = []
    trace, scores = seen[-1] if accepted else max(seen, key=lambda ts: aggregate(ts[1], aggregation))
    return chosen_result(
        problem,
        "resample",
        trace,
        scores,
        aggregation=aggregation,
        compute=compute,
        candidates=[t for t, _ in seen],
        details={"threshold": threshold, "budget": budget, "attempts": attempt, "accepted": accepted},
    )


def reject_and_resample(
    problems: Sequence[Problem],
    policy: Policy,
    scorer: StepScorer,
    threshold: float = 0.5,
    budget: int = 64,
    aggregation: str = "min",
    seed: int = 0,
    *,
    concurrency: int = CONCURRENCY,
    show_progress: bool = False,
) -> list[SearchResult]:
    """Reject-and-resample over problems; problem ``k`` uses seed ``seed + k``, ``concurrency`` problems
    at once sharing the scorer (the results do not depend on it)."""
    shared = SharedScorer(scorer)

    def one(k: int) -> SearchResult:
        return resample_one(problems[k], policy, shared, threshold, budget, aggregation, seed + k)

    stop = getattr(policy, "stop", None)
    return map_problems(one, len(problems), concurrency, "reject-and-resample", show_progress, stop)


def run_resample(config: ResampleConfig, show_progress: bool = True) -> dict[str, Any]:
    """``prmkit resample``: :func:`reject_and_resample` over the config's problem file, from the first step
    scored below the threshold (None: the checkpoint's own, else 0.5); the summary says which threshold
    was used and where it came from."""
    policy, scorer = config.policy.build_policy(), load_scorer(config.scorer, load=config.load)
    used, origin = pick_threshold(config.threshold, scorer)
    summary = search_files(
        config,
        lambda problems: reject_and_resample(
            problems, policy, scorer, used, config.budget, config.aggregation, config.seed,
            concurrency=config.concurrency, show_progress=show_progress,
        ),
    )  # fmt: skip
    return summary | {"threshold": used, "threshold_from": origin}


SEARCH = Search("resample", ResampleConfig, run_resample)
"""Reject-and-resample from the first doubtful step, within a step budget."""

"""Best-of-N: sample N full solutions, score every step, keep the one with the best aggregate.

The aggregate (min, prod, last, mean, ...) turns per-step scores into one number per trace; "min" asks
"is every step right", "last" trusts the final step's view of the whole prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prmkit.core.model import Problem, Trace
from prmkit.core.protocols import Policy, StepScorer
from prmkit.scoring import load_scorer
from prmkit.scoring.aggregate import aggregate
from prmkit.search.common import Compute, SearchResult, chosen_result, sample_candidates, score_traces
from prmkit.search.config import BonConfig
from prmkit.search.files import search_files
from prmkit.search.parallel import CONCURRENCY, problem_bar, sample_all, scored_in_chunks
from prmkit.search.searches import Search


def select_best(traces: Sequence[Trace], scores: Sequence[Sequence[float]], aggregation: str = "min") -> int:
    """Index of the trace with the highest aggregated score (the first of equals); -1 when empty."""
    best, best_value = -1, float("-inf")
    for i, row in enumerate(scores):
        value = aggregate(row, aggregation)
        if value > best_value:
            best, best_value = i, value
    return best


def best_of_n_one(
    problem: Problem,
    policy: Policy,
    scorer: StepScorer,
    n: int = 16,
    aggregation: str = "min",
    seed: int = 0,
) -> SearchResult:
    """Best-of-N for one problem."""
    compute = Compute()
    traces = sample_candidates(policy, problem, n, seed, compute)
    return _choose(problem, traces, score_traces(scorer, traces, compute), compute, n, aggregation)


def _choose(
    problem: Problem,
    traces: list[Trace],
    scores: list[list[float]],
    compute: Compute,
    n: int,
    aggregation: str,
) -> SearchResult:
    i = select_best(traces, scores, aggregation)
    chosen_scores = scores[i] if i >= 0 else []
    return chosen_result(
        problem,
        f"bon-{aggregation}",
        traces[i] if i >= 0 else None,
        chosen_scores,
        aggregation=aggregation,
        compute=compute,
        candidates=traces,
        details={"n": n, "aggregation": aggregation, "step_scores": chosen_scores},
    )


def best_of_n(
    problems: Sequence[Problem],
    policy: Policy,
    scorer: StepScorer,
    n: int = 16,
    aggregation: str = "min",
    seed: int = 0,
    *,
    concurrency: int = CONCURRENCY,
    show_progress: bool = False,
) -> list[SearchResult]:
    """Best-of-N over problems; problem ``k`` uses seed ``seed + k`` so runs are reproducible.

    ``concurrency`` problems are sampled at once and their candidates scored together, in calls of up
    to :data:`~prmkit.search.parallel.SCORE_TRACES` traces; the results do not depend on it."""
    results = []
    with (
        sample_all(policy, problems, n, seed, concurrency) as sampled,
        problem_bar("best-of-N", len(problems), show_progress) as advance,
    ):
        for problem, (traces, compute, scores) in zip(
            problems, scored_in_chunks(sampled, scorer), strict=True
        ):
            results.append(_choose(problem, traces, scores, compute, n, aggregation))
            advance()
    return results


def run_bon(config: BonConfig, show_progress: bool = True) -> dict[str, Any]:
    """``prmkit bon``: :func:`best_of_n` over the config's problem file; writes its results and returns the
    summary (``show_progress``: a progress bar)."""
    policy, scorer = config.policy.build_policy(), load_scorer(config.scorer, load=config.load)
    return search_files(
        config,
        lambda problems: best_of_n(
            problems, policy, scorer, config.n, config.aggregation, config.seed,
            concurrency=config.concurrency, show_progress=show_progress,
        ),
    )  # fmt: skip


SEARCH = Search("bon", BonConfig, run_bon)
"""Best-of-N: sample N solutions per problem and keep the one with the best aggregated step score."""

"""Majority vote and PRM-weighted majority vote over sampled answers.

Answers are grouped as equal by :func:`prmkit.core.answers.check_answer` (exact for numbers,
math-verify otherwise), so "1/2", "0.5" and "\\frac{1}{2}" vote together. Plain vote weighs each
sample 1; weighted vote weighs it by its aggregated PRM score (Uesato et al. / search-and-learn's
"weighted best-of-N"). Samples without a final answer do not vote.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prmkit.core.answers import check_answer
from prmkit.core.model import Problem, Trace
from prmkit.core.protocols import Policy, StepScorer
from prmkit.scoring import load_scorer
from prmkit.scoring.aggregate import aggregate
from prmkit.search.common import Compute, SearchResult, finish, sample_candidates, score_traces
from prmkit.search.config import VoteConfig
from prmkit.search.files import search_files
from prmkit.search.parallel import CONCURRENCY, problem_bar, sample_all, scored_in_chunks
from prmkit.search.searches import Search


@dataclass
class AnswerGroup:
    """Samples whose answers are equivalent: the first answer seen stands for the group."""

    answer: str
    members: list[int]
    weight: float = 0.0


def group_answers(answers: Sequence[str | None]) -> list[AnswerGroup]:
    """Group equivalent answers (first-seen order). Unparseable comparisons never merge groups."""
    groups: list[AnswerGroup] = []
    for i, ans in enumerate(answers):
        if ans is None or not ans.strip():
            continue
        for group in groups:
            if group.answer == ans or check_answer(group.answer, ans):
                group.members.append(i)
                break
        else:
            groups.append(AnswerGroup(answer=ans, members=[i]))
    return groups


def select_vote(
    traces: Sequence[Trace],
    scores: Sequence[Sequence[float]] | None = None,
    aggregation: str = "min",
) -> tuple[AnswerGroup | None, list[AnswerGroup]]:
    """The winning group and all groups; weights are counts without ``scores``, score sums with them."""
    groups = group_answers([t.final_answer for t in traces])
    for group in groups:
        if scores is None:
            group.weight = float(len(group.members))
        else:
            group.weight = sum(aggregate(scores[i], aggregation) for i in group.members)
    winner = max(groups, key=lambda g: g.weight, default=None)  # max keeps the first of equals
    return winner, groups


def vote_one(
    problem: Problem,
    policy: Policy,
    n: int = 16,
    scorer: StepScorer | None = None,
    aggregation: str = "min",
    seed: int = 0,
) -> SearchResult:
    """Majority vote for one problem (weighted by the scorer when one is given)."""
    compute = Compute()
    traces = sample_candidates(policy, problem, n, seed, compute)
    scores = score_traces(scorer, traces, compute) if scorer is not None else None
    return _tally(problem, traces, scores, compute, n, aggregation)


def _tally(
    problem: Problem,
    traces: list[Trace],
    scores: list[list[float]] | None,
    compute: Compute,
    n: int,
    aggregation: str,
) -> SearchResult:
    winner, groups = select_vote(traces, scores, aggregation)
    chosen = traces[winner.members[0]] if winner else None
    if winner and scores is not None:  # show the best-scored member of the winning group
        chosen = traces[max(winner.members, key=lambda i: aggregate(scores[i], aggregation))]
    return finish(
        SearchResult(
            problem=problem,
            method="weighted-vote" if scores is not None else "majority-vote",
            answer=winner.answer if winner else None,
            trace=chosen,
            score=winner.weight if winner else None,
            compute=compute,
            candidates=traces,
            details={
                "n": n,
                "aggregation": aggregation if scores is not None else None,
                "votes": {g.answer: round(g.weight, 6) for g in groups},
            },
        )
    )


def vote(
    problems: Sequence[Problem],
    policy: Policy,
    n: int = 16,
    scorer: StepScorer | None = None,
    aggregation: str = "min",
    seed: int = 0,
    *,
    concurrency: int = CONCURRENCY,
    show_progress: bool = False,
) -> list[SearchResult]:
    """Majority vote over problems; with a ``scorer`` it is PRM-weighted. Problem ``k`` uses ``seed + k``.

    ``concurrency`` problems are sampled at once and, with a scorer, their candidates scored together in
    calls of up to :data:`~prmkit.search.parallel.SCORE_TRACES` traces; the results do not depend on it."""
    results = []
    with (
        sample_all(policy, problems, n, seed, concurrency) as sampled,
        problem_bar("vote", len(problems), show_progress) as advance,
    ):
        if scorer is None:
            scored = ((traces, compute, None) for traces, compute in sampled)
        else:
            scored = scored_in_chunks(sampled, scorer)
        for problem, (traces, compute, scores) in zip(problems, scored, strict=True):
            results.append(_tally(problem, traces, scores, compute, n, aggregation))
            advance()
    return results


def run_vote(config: VoteConfig, show_progress: bool = True) -> dict[str, Any]:
    """``prmkit vote``: :func:`vote` over the config's problem file, PRM-weighted when it names a scorer;
    writes its results and returns the summary."""
    policy = config.policy.build_policy()
    scorer = load_scorer(config.scorer, load=config.load) if config.scorer else None
    return search_files(
        config,
        lambda problems: vote(
            problems, policy, config.n, scorer, config.aggregation, config.seed,
            concurrency=config.concurrency, show_progress=show_progress,
        ),
    )  # fmt: skip


SEARCH = Search("vote", VoteConfig, run_vote)
"""Majority vote over N samples, PRM-weighted with a scorer."""

"""What every search method shares: the result record, compute accounting, scoring and aggregation.

Every method returns one :class:`SearchResult` per problem that says what it chose *and* what it cost
(steps and tokens the policy generated, traces and steps the scorer read), so methods can be compared
at equal compute. Aggregation is ``prmkit.scoring.aggregate`` (a registry: min, prod, last, mean, geomean, ...), so
a new aggregation registered there is usable here by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from prmkit.core.answers import check_answer
from prmkit.core.model import Continuation, Problem, Trace
from prmkit.core.protocols import StepScorer
from prmkit.scoring.aggregate import aggregate


@dataclass
class Compute:
    """What a search spent: the policy's output and the scorer's input."""

    steps_generated: int = 0
    tokens_generated: int | None = 0
    """None as soon as one backend did not count its tokens (then compare by steps)."""
    policy_calls: int = 0
    traces_scored: int = 0
    steps_scored: int = 0

    def add_continuations(self, continuations: Sequence[Continuation]) -> None:
        self.policy_calls += 1
        for cont in continuations:
            self.steps_generated += len(cont.steps)
            if cont.num_tokens is None or self.tokens_generated is None:
                self.tokens_generated = None
            else:
                self.tokens_generated += cont.num_tokens

    def add_scored(self, traces: Sequence[Trace]) -> None:
        self.traces_scored += len(traces)
        self.steps_scored += sum(len(t.steps) for t in traces)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class SearchResult:
    """One problem's outcome: the chosen trace and answer, its score, whether it is right, the cost."""

    problem: Problem
    method: str
    answer: str | None
    trace: Trace | None
    score: float | None
    compute: Compute
    correct: bool | None = None
    """``check_answer(problem.answer, answer)``; None when the reference is unknown or unparseable."""
    candidates: list[Trace] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """A JSON-ready record (no traces) for result files and tables."""
        return {
            "problem_id": self.problem.id,
            "method": self.method,
            "answer": self.answer,
            "reference": self.problem.answer,
            "correct": self.correct,
            "score": self.score,
            **self.compute.as_dict(),
            **self.details,
        }


def finish(result: SearchResult) -> SearchResult:
    """Fill ``correct`` from the problem's reference answer."""
    result.correct = check_answer(result.problem.answer, result.answer)
    return result


def chosen_result(
    problem: Problem,
    method: str,
    chosen: Trace | None,
    step_scores: Sequence[float],
    *,
    aggregation: str,
    compute: Compute,
    candidates: list[Trace],
    details: dict[str, Any],
) -> SearchResult:
    """The finished result of a method that picked ``chosen`` (None: nothing to pick) among ``candidates``.

    Its answer is ``chosen``'s final answer and its score ``chosen``'s ``step_scores`` aggregated with
    ``aggregation``; ``correct`` is filled by :func:`finish`.
    """
    return finish(
        SearchResult(
            problem=problem,
            method=method,
            answer=chosen.final_answer if chosen is not None else None,
            trace=chosen,
            score=aggregate(step_scores, aggregation) if chosen is not None else None,
            compute=compute,
            candidates=candidates,
            details=details,
        )
    )


def trace_from(problem: Problem, cont: Continuation, *, generator: str, trace_id: str) -> Trace:
    """Wrap a fresh continuation (empty prefix) as a Trace."""
    return Trace(
        id=trace_id,
        problem=problem,
        steps=list(cont.steps),
        final_answer=cont.final_answer,
        generator=generator,
        metadata={"finished": cont.finished},
    )


def score_traces(scorer: StepScorer, traces: Sequence[Trace], compute: Compute) -> list[list[float]]:
    """Score traces in one call, check the scorer kept its contract, and count what it read."""
    rows = score_readable(scorer, traces, compute)
    for trace, row in zip(traces, rows, strict=True):
        if row is None:
            raise RuntimeError(
                f"scorer {scorer.name!r} returned too few scores for trace {trace.id} "
                f"with {len(trace.steps)} steps"
            )
    return rows  # type: ignore[return-value]


def score_readable(scorer: StepScorer, traces: Sequence[Trace], compute: Compute) -> list[list[float] | None]:
    """:func:`score_traces` for a scorer under a skip or truncate length policy: a trace it could not
    read whole (fewer scores than steps) is None, never a row of a prefix's scores."""
    if not traces:
        return []
    scores = scorer.score(list(traces))
    if len(scores) != len(traces):
        raise RuntimeError(
            f"scorer {scorer.name!r} returned {len(scores)} score lists for {len(traces)} traces"
        )
    for trace, row in zip(traces, scores, strict=True):
        if len(row) > len(trace.steps):
            raise RuntimeError(
                f"scorer {scorer.name!r} returned {len(row)} scores for trace {trace.id} "
                f"with {len(trace.steps)} steps"
            )
    compute.add_scored(traces)
    return [
        list(map(float, row)) if len(row) == len(t.steps) else None
        for t, row in zip(traces, scores, strict=True)
    ]


def sample_candidates(policy: Any, problem: Problem, n: int, seed: int, compute: Compute) -> list[Trace]:
    """``n`` full solutions of ``problem`` from ``policy`` (one call), as traces."""
    conts = policy.continue_from(problem, [], n=n, seed=seed)
    compute.add_continuations(conts)
    name = getattr(policy, "name", "policy")
    settings = policy.settings() if callable(getattr(policy, "settings", None)) else {}
    sampling = {"policy": name, "seed": seed, "per_problem": n, **settings}
    traces = [
        trace_from(problem, c, generator=name, trace_id=f"{problem.id}/s{seed}/{i}")
        for i, c in enumerate(conts)
    ]
    for t in traces:  # how they were drawn, as the worlds' samplers record it (the process card reads it)
        t.metadata["sampling"] = dict(sampling)
    return traces

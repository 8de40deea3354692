"""PRM-guided step-level beam search and diverse verifier tree search (DVTS), as in search-and-learn.

Beam search keeps ``n // beam_width`` prefixes. Each round every prefix is expanded by ``beam_width``
one-step continuations (``continue_from(..., max_steps=1)``), so each round generates ``n`` steps; all
candidates are scored in one scorer call and the best ``n // beam_width`` unfinished ones survive.
Candidates that reached an answer leave the beam and wait for the final choice.

DVTS splits the same budget into ``n // beam_width`` independent subtrees, each greedily keeping only
its own best child, which keeps the answers diverse when one early prefix would otherwise take over.

Both stop when every beam has answered or after ``max_depth`` rounds; beams still open then are
finished with one full rollout each (counted in the compute like every other step).

Length policy: a candidate the scorer can no longer read whole (longer than a checkpoint's positions)
is dropped, never ranked on the scores of a prefix, and counted (``details["dropped_overlong"]``). The
search sets the scorer's length policy to ``skip`` while it runs, so one long candidate does not stop it;
the result has no choice (``answer`` None) when every candidate outgrew the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from prmkit.core.model import Problem, Step, Trace
from prmkit.core.protocols import Policy, StepScorer
from prmkit.scoring import load_scorer
from prmkit.scoring.aggregate import aggregate
from prmkit.scoring.scorer import overlong_policy
from prmkit.search.common import Compute, SearchResult, chosen_result, score_readable
from prmkit.search.config import BeamConfig
from prmkit.search.files import search_files
from prmkit.search.parallel import CONCURRENCY, SharedScorer, map_problems
from prmkit.search.searches import Search


@dataclass
class _Beam:
    steps: list[Step]
    final_answer: str | None = None
    done: bool = False
    scores: list[float] | None = field(default_factory=list)
    """None: the scorer could not read the candidate whole (it outgrew the model)."""
    group: int = 0
    """The subtree a DVTS beam belongs to (always 0 in plain beam search)."""


def _as_trace(problem: Problem, beam: _Beam, name: str, i: int) -> Trace:
    return Trace(
        id=f"{problem.id}/beam/{i}",
        problem=problem,
        steps=beam.steps,
        final_answer=beam.final_answer,
        generator=name,
    )


def _expand(
    problem: Problem, policy: Policy, beams: Sequence[_Beam], width: int, seed: int, compute: Compute
) -> list[_Beam]:
    children = []
    for b, beam in enumerate(beams):
        conts = policy.continue_from(problem, beam.steps, n=width, seed=seed + 7919 * b, max_steps=1)
        compute.add_continuations(conts)
        for cont in conts:
            done = cont.finished or not cont.steps
            children.append(_Beam(beam.steps + list(cont.steps), cont.final_answer, done, group=beam.group))
    return children


def _score(
    problem: Problem, scorer: StepScorer, beams: list[_Beam], name: str, compute: Compute
) -> list[_Beam]:
    """Score ``beams`` in one call; returns the ones the scorer read whole (the module's length policy)."""
    traces = [_as_trace(problem, b, name, i) for i, b in enumerate(beams)]
    for beam, row in zip(beams, score_readable(scorer, traces, compute), strict=True):
        beam.scores = row
    return [b for b in beams if b.scores is not None]


def _finish_open(
    problem: Problem, policy: Policy, scorer: StepScorer, beams: list[_Beam], seed: int, compute: Compute
) -> list[_Beam]:
    """Complete beams still open at ``max_depth`` with one full rollout each."""
    out = []
    for b, beam in enumerate(beams):
        (cont,) = policy.continue_from(problem, beam.steps, n=1, seed=seed + 104729 + b)
        compute.add_continuations([cont])
        out.append(_Beam(beam.steps + list(cont.steps), cont.final_answer, True, group=beam.group))
    return _score(problem, scorer, out, getattr(policy, "name", "policy"), compute)


def _search(
    problem: Problem,
    policy: Policy,
    scorer: StepScorer,
    n: int,
    beam_width: int,
    max_depth: int,
    aggregation: str,
    seed: int,
    diverse: bool,
) -> SearchResult:
    if beam_width < 1 or n < beam_width:
        raise ValueError(f"need 1 <= beam_width <= n, got n={n}, beam_width={beam_width}")
    keep = n // beam_width
    name = getattr(policy, "name", "policy")
    compute = Compute()
    active = [_Beam(steps=[], group=g if diverse else 0) for g in range(keep)]
    completed: list[_Beam] = []
    depth = dropped = 0
    while active and depth < max_depth:
        children = _expand(problem, policy, active, beam_width, seed * 1_000_003 + depth * 1009, compute)
        readable = _score(problem, scorer, children, name, compute)
        dropped += len(children) - len(readable)
        children = readable
        depth += 1
        rank = sorted(children, key=lambda c: aggregate(c.scores, aggregation), reverse=True)
        if diverse:  # each subtree keeps its own best child; it ends when that child has answered
            active = []
            for g in sorted({c.group for c in rank}):
                mine = [c for c in rank if c.group == g]
                completed += [c for c in mine if c.done]
                if not mine[0].done:
                    active.append(mine[0])
        else:
            completed += [c for c in rank if c.done]
            active = [c for c in rank if not c.done][:keep]
            if len(completed) >= n:
                active = []
    if active:
        finished = _finish_open(problem, policy, scorer, active, seed, compute)
        dropped += len(active) - len(finished)
        completed += finished
    best = max(completed, key=lambda c: aggregate(c.scores, aggregation), default=None)
    return chosen_result(
        problem,
        "dvts" if diverse else "beam",
        _as_trace(problem, best, name, 0) if best is not None else None,
        best.scores if best is not None else [],
        aggregation=aggregation,
        compute=compute,
        candidates=[_as_trace(problem, c, name, i) for i, c in enumerate(completed)],
        details={
            "n": n, "beam_width": beam_width, "depth": depth, "aggregation": aggregation,
            "dropped_overlong": dropped,
        },
    )  # fmt: skip


def _search_all(
    problems: Sequence[Problem],
    policy: Policy,
    scorer: StepScorer,
    n: int,
    beam_width: int,
    max_depth: int,
    aggregation: str,
    seed: int,
    diverse: bool,
    concurrency: int,
    show_progress: bool,
) -> list[SearchResult]:
    """:func:`_search` over problems, ``concurrency`` at once, sharing the scorer (problem ``k``: seed
    ``seed + k``, whatever thread runs it)."""
    with overlong_policy(scorer, "skip"):
        shared = SharedScorer(scorer)

        def one(k: int) -> SearchResult:
            return _search(
                problems[k], policy, shared, n, beam_width, max_depth, aggregation, seed + k, diverse
            )

        desc, stop = "dvts" if diverse else "beam search", getattr(policy, "stop", None)
        return map_problems(one, len(problems), concurrency, desc, show_progress, stop)


def beam_search(
    problems: Sequence[Problem],
    policy: Policy,
    scorer: StepScorer,
    n: int = 16,
    beam_width: int = 4,
    max_depth: int = 40,
    aggregation: str = "min",
    seed: int = 0,
    *,
    concurrency: int = CONCURRENCY,
    show_progress: bool = False,
) -> list[SearchResult]:
    """Step-level beam search: ``n`` candidates per round, the top ``n // beam_width`` kept;
    ``concurrency`` problems at once (the results do not depend on it)."""
    return _search_all(
        problems, policy, scorer, n, beam_width, max_depth, aggregation, seed, False, concurrency,
        show_progress,
    )  # fmt: skip


def dvts(
    problems: Sequence[Problem],
    policy: Policy,
    scorer: StepScorer,
    n: int = 16,
    beam_width: int = 4,
    max_depth: int = 40,
    aggregation: str = "min",
    seed: int = 0,
    *,
    concurrency: int = CONCURRENCY,
    show_progress: bool = False,
) -> list[SearchResult]:
    """Diverse verifier tree search: ``n // beam_width`` greedy subtrees of ``beam_width`` children each;
    ``concurrency`` problems at once (the results do not depend on it)."""
    return _search_all(
        problems, policy, scorer, n, beam_width, max_depth, aggregation, seed, True, concurrency,
        show_progress,
    )  # fmt: skip


def run_beam(config: BeamConfig, show_progress: bool = True) -> dict[str, Any]:
    """``prmkit beam``: :func:`beam_search` (or :func:`dvts` with ``diverse``) over the config's problem
    file; writes its results and returns the summary."""
    policy, scorer = config.policy.build_policy(), load_scorer(config.scorer, load=config.load)
    method = dvts if config.diverse else beam_search
    return search_files(
        config,
        lambda problems: method(
            problems, policy, scorer, config.n, config.beam_width, config.max_depth, config.aggregation,
            config.seed, concurrency=config.concurrency, show_progress=show_progress,
        ),
    )  # fmt: skip


SEARCH = Search("beam", BeamConfig, run_beam)
"""PRM-guided step-level beam search (or DVTS)."""

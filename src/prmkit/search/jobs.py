"""The file-level functions behind ``prmkit bon | vote | beam | resample``: read problems, search, write.

Each reads a problem file (or a trace file: its distinct problems), builds the policy and scorer it
names, runs one search method, and writes one JSON summary per problem to ``out`` (what was chosen, whether
it is right, what it cost) plus, with ``traces_out``, the chosen traces. It returns the overall summary
that the CLI prints, so the API and the CLI report the same numbers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from prmkit.core.dataset import write_traces
from prmkit.core.files import atomic_write
from prmkit.core.protocols import StepScorer
from prmkit.formats.inputs import read_problems
from prmkit.modeling.loading import LoadOptions
from prmkit.policies.options import PolicyOptions
from prmkit.search.beam import beam_search, dvts
from prmkit.search.bon import best_of_n
from prmkit.search.common import SearchResult
from prmkit.search.parallel import CONCURRENCY
from prmkit.search.resample import reject_and_resample
from prmkit.search.vote import vote as vote_search


def summarize(results: Sequence[SearchResult]) -> dict[str, Any]:
    """Accuracy (unknown references left out) and mean compute per problem."""
    known = [r.correct for r in results if r.correct is not None]
    tokens = [r.compute.tokens_generated for r in results]
    n = max(1, len(results))
    return {
        "problems": len(results),
        "accuracy": sum(known) / len(known) if known else None,
        "unknown_reference": len(results) - len(known),
        "steps_generated_per_problem": sum(r.compute.steps_generated for r in results) / n,
        "tokens_generated_per_problem": None if None in tokens else sum(t or 0 for t in tokens) / n,
        "steps_scored_per_problem": sum(r.compute.steps_scored for r in results) / n,
    }


def _run(
    problems: Path,
    out: Path,
    traces_out: Path | None,
    limit: int | None,
    search: Callable[[list], list[SearchResult]],
) -> dict[str, Any]:
    items = read_problems(problems)[:limit]
    results = search(items)
    with atomic_write(out) as fh:
        for r in results:
            fh.write(json.dumps(r.summary(), ensure_ascii=False) + "\n")
    if traces_out is not None:
        write_traces(traces_out, [r.trace for r in results if r.trace is not None])
    return summarize(results)


def _scorer(scorer: str, load: LoadOptions | None = None) -> StepScorer:
    """Any scorer spec (``prmkit.scoring.SCORER_HELP``), a checkpoint loaded with ``load``."""
    from prmkit.scoring import load_scorer

    return load_scorer(scorer, load=load)


def bon(
    problems: Path, scorer: str, out: Path, n: int = 16, aggregation: str = "min", seed: int = 0,
    policy: PolicyOptions | None = None, limit: int | None = None, traces_out: Path | None = None,
    load: LoadOptions | None = None, *, concurrency: int = CONCURRENCY, show_progress: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """Best-of-N: ``n`` samples per problem, the best by aggregated step score; ``concurrency`` problems
    at once (see :mod:`prmkit.search.parallel`), a progress bar with ``show_progress``."""
    pol, sc = (policy or PolicyOptions()).build_policy(), _scorer(scorer, load)
    run = dict(concurrency=concurrency, show_progress=show_progress)
    return _run(
        problems, out, traces_out, limit, lambda ps: best_of_n(ps, pol, sc, n, aggregation, seed, **run)
    )


def vote(
    problems: Path, out: Path, scorer: str | None = None, n: int = 16, aggregation: str = "min", seed: int = 0,
    policy: PolicyOptions | None = None, limit: int | None = None, traces_out: Path | None = None,
    load: LoadOptions | None = None, *, concurrency: int = CONCURRENCY, show_progress: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """Majority vote over ``n`` samples; PRM-weighted when ``scorer`` is given; ``concurrency`` and
    ``show_progress`` as for :func:`bon`."""
    pol = (policy or PolicyOptions()).build_policy()
    sc = _scorer(scorer, load) if scorer else None
    run = dict(concurrency=concurrency, show_progress=show_progress)
    return _run(
        problems, out, traces_out, limit, lambda ps: vote_search(ps, pol, n, sc, aggregation, seed, **run)
    )


def beam(
    problems: Path, scorer: str, out: Path, n: int = 16, beam_width: int = 4, max_depth: int = 40,
    aggregation: str = "min", diverse: bool = False, seed: int = 0, policy: PolicyOptions | None = None,
    limit: int | None = None, traces_out: Path | None = None, load: LoadOptions | None = None, *,
    concurrency: int = CONCURRENCY, show_progress: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """Step-level beam search (or DVTS with ``diverse``): ``n`` candidate steps per round;
    ``concurrency`` and ``show_progress`` as for :func:`bon`."""
    pol, sc = (policy or PolicyOptions()).build_policy(), _scorer(scorer, load)
    method = dvts if diverse else beam_search
    run = dict(concurrency=concurrency, show_progress=show_progress)
    return _run(
        problems,
        out,
        traces_out,
        limit,
        lambda ps: method(ps, pol, sc, n, beam_width, max_depth, aggregation, seed, **run),
    )


def resample(
    problems: Path, scorer: str, out: Path, threshold: float | None = None, budget: int = 64,
    aggregation: str = "min", seed: int = 0, policy: PolicyOptions | None = None, limit: int | None = None,
    traces_out: Path | None = None, load: LoadOptions | None = None, *, concurrency: int = CONCURRENCY,
    show_progress: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """Reject-and-resample from the first step scored below ``threshold`` (None: the checkpoint's own,
    else 0.5), within ``budget`` steps; the summary says which threshold was used and where it came from.
    ``concurrency`` and ``show_progress`` as for :func:`bon`."""
    from prmkit.scoring import pick_threshold

    pol, sc = (policy or PolicyOptions()).build_policy(), _scorer(scorer, load)
    used, origin = pick_threshold(threshold, sc)
    summary = _run(
        problems, out, traces_out, limit,
        lambda ps: reject_and_resample(
            ps, pol, sc, used, budget, aggregation, seed, concurrency=concurrency, show_progress=show_progress
        ),
    )  # fmt: skip
    return summary | {"threshold": used, "threshold_from": origin}

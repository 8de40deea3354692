"""What every search command reads and writes: the problems of its config's file, one JSON summary per
problem (what was chosen, whether it is right, what it cost) and, with ``traces_out``, the chosen traces.

The commands' ``run_*(config)`` (one in each method's module) hand their pure search to
:func:`search_files`, which returns the overall summary the CLI prints, so the API and the CLI report
the same numbers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from prmkit.core.dataset import write_traces
from prmkit.core.files import atomic_write
from prmkit.core.model import Problem
from prmkit.formats.inputs import read_problems
from prmkit.search.common import SearchResult
from prmkit.search.config import SearchOptions


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


def search_files(
    config: SearchOptions, search: Callable[[list[Problem]], list[SearchResult]]
) -> dict[str, Any]:
    """Run ``search`` on the first ``config.limit`` problems of ``config.problems`` (or of a trace file's
    distinct problems), write ``config.out`` and ``config.traces_out``, and return the summary."""
    results = search(read_problems(config.problems)[: config.limit])
    with atomic_write(config.out) as fh:
        for r in results:
            fh.write(json.dumps(r.summary(), ensure_ascii=False) + "\n")
    if config.traces_out is not None:
        write_traces(config.traces_out, [r.trace for r in results if r.trace is not None])
    return summarize(results)

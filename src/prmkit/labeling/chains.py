"""Verification chains on labelled traces: reading a teacher's chain back, and ThinkPRM's process-based
filtering.

A teacher's chain is a judge's answer in ThinkPRM's format (``Step i: CHECK \\boxed{correct}``): the
world's teacher (``prmkit label judge --judge arithmetic-teacher``) or an LLM behind an endpoint
(``--judge endpoint --judge-format thinkprm``). :func:`prmkit.labeling.judge.label_judge` keeps it in
each label's provenance (``params["raw"]``), so a trace labelled by the teacher carries its chain.

A teacher errs, so its chains are not gold. ThinkPRM keeps a chain only where its verdicts agree with the
step labels of a small labelled set (Khalifa et al. 2025, "Process Reward Models That Think", sec. 3:
process-based filtering): :func:`process_filter` does that against any label source (a hand-labelled
set, or gold on a declared number of traces), draws the set by a seed when asked for fewer traces than
carry its labels, and counts what it read, since the filter set is the labels the verifier cost.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from prmkit.core.model import Trace
from prmkit.policies.critic import parse_step_checks

Checks = list[tuple[str, bool]]
"""One ``(check, correct)`` per step: what a verifier wrote about it and its verdict."""


def teacher_chain(trace: Trace, source: str) -> Checks | None:
    """The chain ``source``'s labels on ``trace`` carry (their provenance's ``raw`` answer), read into
    one check per step; None when they carry none, or it leaves a step without a verdict."""
    raw = next((lab.provenance.params.get("raw") for s in trace.steps if (lab := s.label(source))), None)
    if not isinstance(raw, str):
        return None
    checks = parse_step_checks(raw, len(trace.steps))
    return None if any(c is None for c in checks) else [c for c in checks if c is not None]


def agrees(checks: Checks, trace: Trace, source: str) -> bool:
    """Whether a chain's verdicts match ``source``'s labels on every step it labelled, up to and
    including its first error (a step rated 0, true but useless, is "correct"); later steps are not
    compared, since sources disagree there and the first error is what a verifier must find."""
    first = trace.first_error(source)
    for i, rating in enumerate(trace.ratings(source)):
        if first != -1 and i > first:
            break
        if rating is not None and checks[i][1] != (rating != -1):
            return False
    return True


def process_filter(
    traces: Sequence[Trace], teacher: str, filter_source: str | None, size: int | None = None, seed: int = 0
) -> tuple[list[tuple[Trace, Checks]], dict[str, Any]]:
    """The traces whose ``teacher`` chain is kept, each with its chain, and what the filter read.

    ``filter_source`` None keeps every whole chain (unfiltered); else the filter set is the traces with
    both a chain and ``filter_source`` labels (``size`` of them, drawn with ``seed``, when given), and a
    chain is kept where it :func:`agrees` with those labels. Only filter-set traces are kept: a chain
    that was never checked is not trained on."""
    chained = [(t, c) for t in traces if (c := teacher_chain(t, teacher)) is not None]
    summary: dict[str, Any] = {"teacher": teacher, "filter_source": filter_source, "traces": len(traces),
                               "chains": len(chained)}  # fmt: skip
    if filter_source is None:
        return chained, summary | {"kept": len(chained)}
    checked = [(t, c) for t, c in chained if any(s.label(filter_source) for s in t.steps)]
    if size is not None and size < len(checked):
        checked = [checked[i] for i in sorted(random.Random(seed).sample(range(len(checked)), size))]
    kept = [(t, c) for t, c in checked if agrees(c, t, filter_source)]
    labels = sum(1 for t, _ in checked for s in t.steps if s.label(filter_source))
    return kept, summary | {"filter_traces": len(checked), "filter_labels": labels, "kept": len(kept)}

"""Reading gold out of labelled traces, the one way every evaluation and audit does it.

The world writes two gold views per step (``world:local``: is this step itself valid; ``world:prefix``:
is everything so far valid). Both agree on the first error, so first-error metrics use it directly;
step-level audits name the view they compare against, because a PRM trained on one view is only fairly
judged against that view.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from prmkit.core.answers import check_answer
from prmkit.core.model import Trace

GoldView = Literal["local", "prefix"]

LOOPHOLE = "loophole"
"""The gold error class of a step that games the task (label metadata ``class``)."""


def first_errors(traces: Sequence[Trace], source: str = "gold") -> list[int]:
    """Each trace's first error under ``source`` (-1 when the source rated no step -1)."""
    return [t.first_error(source) for t in traces]


def has_gold(trace: Trace, source: str = "gold") -> bool:
    """Whether ``source`` labelled at least one step of ``trace`` (so its first error means something)."""
    return any(step.label(source) is not None for step in trace.steps)


def step_validity(trace: Trace, view: GoldView = "local", source: str = "gold") -> np.ndarray:
    """1.0 per valid step, 0.0 per erroneous step, NaN where ``source`` left a step unlabelled.

    ``local``: the step's own rating (0 = neutral counts as valid: true, just useless).
    ``prefix``: valid only before the first error, as ProcessBench and Monte Carlo labels read it.
    """
    ratings = trace.ratings(source)
    if view == "prefix":
        fe = trace.first_error(source)
        return np.array(
            [np.nan if r is None else float(fe == -1 or i < fe) for i, r in enumerate(ratings)], dtype=float
        )
    return np.array([np.nan if r is None else float(r != -1) for r in ratings], dtype=float)


def loophole_step(trace: Trace, source: str = "gold", error_class: str = LOOPHOLE) -> int:
    """Index of the first step ``source`` marks with ``error_class`` (a loophole), -1 when none is.

    Here, below the loophole audit and the best-of-N curves, because both read it: the audit asks
    whether a verifier rewards gaming, the curves count a gamed pick as not honestly right."""
    for i, step in enumerate(trace.steps):
        label = step.label(source)
        if label is not None and label.metadata.get("class") == error_class:
            return i
    return -1


def process_valid(trace: Trace, source: str = "gold") -> bool:
    """Whether the whole process is valid: no step rated -1."""
    return trace.first_error(source) == -1


def outcome(trace: Trace) -> bool | None:
    """Whether the final answer is right: ``answer_correct`` when set, else checked against the
    reference answer; None when that cannot be decided (no reference, no answer, unparseable)."""
    if trace.answer_correct is not None:
        return trace.answer_correct
    return check_answer(trace.problem.answer, trace.final_answer)


def trace_correct(trace: Trace) -> bool:
    """Outcome as a plain bool: an undecidable answer counts as not right (it cannot win a vote)."""
    return bool(outcome(trace))


def group_by_problem(traces: Sequence[Trace]) -> dict[str, list[int]]:
    """Indices of the traces of each problem, problems in first-seen order."""
    groups: dict[str, list[int]] = {}
    for i, t in enumerate(traces):
        groups.setdefault(t.problem.id, []).append(i)
    return groups


def check_lengths(traces: Sequence[Trace], scores: Sequence[Sequence[float]]) -> None:
    """Fail clearly when scores do not line up with traces and their steps."""
    if len(traces) != len(scores):
        raise ValueError(f"{len(scores)} score lists for {len(traces)} traces")
    for t, s in zip(traces, scores, strict=True):
        if len(s) != len(t.steps):
            raise ValueError(f"trace {t.id}: {len(s)} scores for {len(t.steps)} steps")

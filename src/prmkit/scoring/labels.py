"""Stored labels as a scorer (scorer form ``labels:SOURCE``): scores a trace file already carries.

``prmkit score`` writes a model's step scores as labels (source ``model:NAME``), judges and labellers
write theirs; reading them back as a :class:`~prmkit.core.protocols.StepScorer` lets ``eval bon``,
``audit`` and ``eval processbench`` compare any of them with a model without scoring again.
"""

from __future__ import annotations

from collections.abc import Sequence

from prmkit.core.errors import InputError, Issue
from prmkit.core.model import Trace

PREFIX = "labels:"


class LabelScorer:
    """Per-step scores read from the labels of ``source`` (any selector ``trace.first_error`` takes).

    A soft score is used as is; a rating maps -1 -> 0.0, 0 -> 0.5, +1 -> 1.0. A step ``source`` left
    unlabelled is refused: an evaluation of partly scored traces would silently mislead, and a trace a
    search has just sampled carries no labels at all.
    """

    def __init__(self, source: str):
        self.source = source
        self.name = source

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        out = []
        for t in traces:
            row = []
            for i, step in enumerate(t.steps):
                lab = step.label(self.source)
                if lab is None:
                    raise InputError([_missing(self.source, t.id, i)], skippable=False)
                row.append(lab.score if lab.score is not None else (lab.rating + 1) / 2)  # type: ignore[operator]
            out.append(row)
        return out


def _missing(source: str, trace_id: str, step: int) -> Issue:
    return Issue(
        f"{PREFIX}{source}",
        None,
        f"trace {trace_id} step {step}",
        f"a label from {source!r} stored on the trace",
        "none",
        "missing",
        f"{PREFIX}SOURCE scores only traces read from a file that carries SOURCE's labels (not the ones a "
        "search samples); pass a checkpoint folder, arithmetic-oracle or a server URL instead",
    )


def load_labels(spec: str) -> LabelScorer:
    """The ``labels:SOURCE`` scorer form."""
    source = spec.removeprefix(PREFIX)
    if not source:
        issue = Issue(spec, None, "(scorer)", "labels:SOURCE, e.g. labels:gold", "no source", "missing")
        raise InputError([issue], skippable=False)
    return LabelScorer(source)

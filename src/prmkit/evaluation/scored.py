"""A scorer spec turned into step scores, once, for every evaluation command that takes a spec.

``prmkit audit`` and ``prmkit eval bon`` both take a scorer spec (``prmkit.scoring.SCORER_HELP``) and a
trace file; this is the one place that loads the scorer and keeps what the commands need from it beyond
the scores: its name for the report, its kind (an ORM's one verdict is broadcast to every step before it
is audited) and the threshold a checkpoint stores (``prmkit.scoring.pick_threshold`` reads it).
It sits below the audits and the best-of-N curves so that neither has to import the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prmkit.core.model import Trace
from prmkit.modeling.loading import LoadOptions
from prmkit.scoring import load_scorer


@dataclass(frozen=True)
class Scored:
    """Per-step scores of a trace file and what the report says about the scorer that gave them."""

    scores: list[list[float]]
    name: str
    kind: str | None
    """``prm`` / ``orm`` from a prmkit checkpoint's spec; None when the scorer does not say."""
    threshold: float | None
    """The first-error threshold the checkpoint stores; None for remote, oracle and label scorers."""


def scorer_kind(scorer: Any) -> str | None:
    """``prm`` / ``orm`` from a prmkit checkpoint's spec, None when the scorer does not say."""
    spec = getattr(getattr(scorer, "convention", None), "spec", None)
    return getattr(spec, "kind", None)


def score_with(model: str, traces: Sequence[Trace], load: LoadOptions | None = None) -> Scored:
    """Score ``traces`` with any scorer spec (``prmkit.scoring.load_scorer``) loaded with ``load``."""
    scorer = load_scorer(model, load=load)
    scores = [list(map(float, s)) for s in scorer.score(list(traces))]
    stored = getattr(scorer, "threshold", None)
    return Scored(scores, getattr(scorer, "name", str(model)), scorer_kind(scorer), stored)


def broadcast_last(scores: Sequence[Sequence[float]]) -> list[list[float]]:
    """Every step gets its trace's last-step score: how an ORM's one verdict per trace is audited."""
    return [[float(s[-1])] * len(s) if len(s) else [] for s in scores]

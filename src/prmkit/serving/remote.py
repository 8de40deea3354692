"""Kept for ``serving/rl.py`` until that file switches to :func:`prmkit.scoring.load_scorer`: the remote
client now lives in :mod:`prmkit.scoring.remote` and every scorer spec is read by ``load_scorer``.
"""

from __future__ import annotations

from prmkit.core.protocols import StepScorer
from prmkit.scoring.forms import load_scorer, scorer_form
from prmkit.scoring.remote import RemoteScorer, RemoteScoringError

__all__ = ["RemoteScorer", "RemoteScoringError", "load_any_scorer"]


def load_any_scorer(
    model: str | StepScorer, api_key: str | None = None, batch_tokens: int | None = None
) -> StepScorer:
    """``prmkit.scoring.load_scorer(model)`` with ``api_key`` for a server and ``batch_tokens`` for a
    checkpoint, each left out for the other forms as before (kept for serving/rl.py and rl/rewards.py)."""
    if not isinstance(model, str):
        return model
    form = scorer_form(model)
    options = {"http": {"api_key": api_key}, "checkpoint": {"batch_tokens": batch_tokens}}.get(form, {})
    return load_scorer(model, **options)

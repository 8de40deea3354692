"""Scoring: every step of every trace in one forward pass, then one number per trace.

Contract: :func:`load_scorer` returns a :class:`~prmkit.core.protocols.StepScorer` for any scorer spec
(a checkpoint folder, ``arithmetic-oracle``, ``http(s)://HOST:PORT``, ``labels:SOURCE``: the SCORER_FORMS
registry, help text :data:`SCORER_HELP`); :func:`score` writes the scores into traces as Labels with
provenance ``model``; :func:`aggregate` turns step scores into one number by a registered name.

- ``forms.py``       SCORER_FORMS registry and ``load_scorer``: every spec a command takes, read one way
- ``aggregate.py``   AGGREGATIONS registry: min, prod, last, mean, geomean, sum, recover
- ``conventions.py`` CONVENTIONS registry (prmkit, trl, likelihood here): how a checkpoint is loaded
                     (exactly, or refused), fed and read; ``CONVENTION:PATH`` names one
- ``families.py``    the released families, read as their cards read them: qwen, math-shepherd, rlhflow,
                     skywork, implicit
- ``critic.py``      the ``critic`` convention: a critic head writes a check after each step, its verdict
                     read; ``k`` sampled chains for more verifier compute
- ``config.py``      ``prmkit score``'s config and ``run_score``
- ``scorer.py``      ModelScorer (the checkpoint form): length-bucketed, padding-aware, inference-mode batches
- ``remote.py``      RemoteScorer (the ``http(s)://`` form): a reward server's ``/score`` with retries
- ``labels.py``      LabelScorer (the ``labels:`` form): scores stored on the traces
- ``thinkprm.py``    ThinkPRM's own score (the ``thinkprm:`` form): a verification chain, then P(yes) of the
                     forced "Is the solution correct?", mean over n samples, as its search code computes it
- ``verdicts.py``    generative-verdict scorers: K sampled verdicts per step averaged (the ``genprm:`` form),
                     the verifier's token budget bounded before any request
- ``verdict_backends.py`` where verdicts are generated: an OpenAI-compatible endpoint or a local HF model
- ``vllm_pooling.py`` VllmScorer (the ``vllm:`` form): vLLM's pooling server or offline engine, the rows
                     read by the convention on this side
- ``views.py``       the released conventions' GPU benchmark as a docs table (``bench/results/released-*.json``)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prmkit.core.model import Label, Provenance, Trace
from prmkit.core.protocols import StepScorer
from prmkit.scoring.aggregate import AGGREGATIONS, aggregate
from prmkit.scoring.forms import SCORER_FORMS, SCORER_HELP, ScorerForm, load_scorer, scorer_form
from prmkit.scoring.scorer import (
    OVERLONG_HELP,
    LengthCounts,
    ModelScorer,
    Overlong,
    OverlongError,
    overlong_policy,
    pick_threshold,
)

__all__ = [
    "AGGREGATIONS",
    "OVERLONG_HELP",
    "SCORER_FORMS",
    "SCORER_HELP",
    "LengthCounts",
    "ModelScorer",
    "Overlong",
    "OverlongError",
    "ScorerForm",
    "aggregate",
    "load_scorer",
    "overlong_policy",
    "pick_threshold",
    "score",
    "scorer_form",
]


def score(
    model: str | Path | StepScorer,
    traces: Sequence[Trace],
    *,
    convention: str | None = None,
    aggregation: str | None = None,
    replace: bool = True,
    overlong: Overlong | None = None,
) -> list[Trace]:
    """Add one ``model`` Label per step (score in [0, 1]) to every trace; returns the traces.

    ``model`` is any scorer spec :func:`load_scorer` reads, or a StepScorer; its name becomes the label's actor, so
    ``"model:<name>"`` selects these labels later. ``aggregation`` also stores the trace score in
    ``metadata["prm_score"]``. ``replace`` drops earlier labels of the same actor first.

    A trace longer than the model takes follows ``overlong`` (when ``model`` is a folder, default
    ``error``; a scorer brings its own policy): cut traces get labels on the steps that fit only and their trace score
    says ``steps_scored``; skipped ones get no labels and no trace score.
    """
    scorer = model if isinstance(model, StepScorer) else load_scorer(model, convention, overlong=overlong)
    params = {
        "convention": getattr(getattr(scorer, "convention", None), "name", None),
        "threshold": getattr(scorer, "threshold", None),  # the checkpoint's: `inspect` cuts scores at it
    }
    prov = Provenance.now("model", scorer.name, params={k: v for k, v in params.items() if v is not None})
    for trace, row in zip(traces, scorer.score(traces), strict=True):
        if replace:
            trace.drop_labels(prov.source)
        labels: list[Label | None] = [Label(score=min(1.0, max(0.0, float(s))), provenance=prov) for s in row]
        trace.add_labels(labels + [None] * (len(trace.steps) - len(row)))  # cut or skipped: unscored
        if aggregation is not None and row:
            trace.metadata["prm_score"] = {
                "model": scorer.name,
                "how": aggregation,
                "value": aggregate(row, aggregation),
            }
            if len(row) < len(trace.steps):
                trace.metadata["prm_score"]["steps_scored"] = len(row)
    return list(traces)

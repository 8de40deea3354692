"""First-error metrics for model selection and learnability curves, per error kind.

The metric itself (predicted first error = first step scoring below a threshold; acc_error, acc_correct
and their harmonic mean) is ProcessBench's, from ``prmkit.evaluation.processbench``. Per kind: the F1 of
the traces whose gold first error is of that kind together with every error-free trace, so each kind's
number says how well *that* error is found without crying wolf on right traces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prmkit.core.model import Trace
from prmkit.evaluation.processbench import predicted_first_error, subset_metrics, tune_threshold


def first_error_kind(trace: Trace, source: str = "gold") -> str | None:
    """The error kind the source recorded at the trace's first error (None when error-free)."""
    fe = trace.first_error(source)
    if fe == -1:
        return None
    lab = trace.steps[fe].label(source)
    return str(lab.metadata.get("kind", "error")) if lab is not None else "error"


def first_error_report(
    traces: Sequence[Trace],
    scores: Sequence[Sequence[float]],
    threshold: float | None = None,
    source: str = "gold",
) -> dict[str, Any]:
    """Overall and per-kind first-error metrics; the threshold is tuned on these traces when None."""
    gold = [t.first_error(source) for t in traces]
    if threshold is None:
        threshold = tune_threshold({"all": scores}, {"all": gold})
    pred = [predicted_first_error(s, threshold) for s in scores]
    overall = subset_metrics("all", gold, pred)
    report: dict[str, Any] = {
        "threshold": threshold,
        "f1": overall.f1 or 0.0,
        "acc_error": overall.acc_error,
        "acc_correct": overall.acc_correct,
        "traces": len(traces),
        "with_error": overall.with_error,
        "by_kind": {},
    }
    kinds = [first_error_kind(t, source) for t in traces]
    for kind in sorted({k for k in kinds if k is not None}):
        idx = [i for i, k in enumerate(kinds) if k in (kind, None)]
        sub = subset_metrics(kind, [gold[i] for i in idx], [pred[i] for i in idx])
        report["by_kind"][kind] = {"f1": sub.f1, "acc_error": sub.acc_error, "n": sub.with_error}
    return report

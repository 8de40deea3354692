"""Audits of what a score means: calibration (reliability, ECE) and length bias.

Calibration compares step scores with gold step validity in equal-width bins; expected calibration
error (ECE) is the count-weighted mean gap between a bin's mean score and its observed validity rate.
It is measured against both gold views (``local``: the step itself is valid; ``prefix``: every step so
far is), because a PRM trained on Monte Carlo or prefix labels should be judged on the prefix view.

Length bias: min- and product-aggregated scores fall with the number of steps even when nothing is
wrong, so long right solutions lose to short ones. Among gold-valid traces (where the ideal score is
flat and high) the slope of the aggregated score per extra step is the bias; the slope of the gold
validity rate over all traces is shown beside it as the part of the fall that is real.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from prmkit.core.model import Trace
from prmkit.evaluation.bon_curves import aggregate_all
from prmkit.evaluation.gold import GoldView, check_lengths, has_gold, process_valid, step_validity


def reliability_bins(
    conf: np.ndarray, truth: np.ndarray, bins: int = 10
) -> tuple[list[dict[str, Any]], float]:
    """Per-bin (mean score, observed rate, count) and the ECE, for scores in [0, 1]."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(conf, edges[1:-1]), 0, bins - 1)
    rows, ece = [], 0.0
    for b in range(bins):
        mask = which == b
        count = int(mask.sum())
        row: dict[str, Any] = {"lo": round(edges[b], 4), "hi": round(edges[b + 1], 4), "count": count}
        if count:
            c, a = float(conf[mask].mean()), float(truth[mask].mean())
            row |= {"confidence": round(c, 6), "accuracy": round(a, 6)}
            ece += count / len(conf) * abs(c - a)
        rows.append(row)
    return rows, ece


def calibration(
    traces: Sequence[Trace],
    scores: Sequence[Sequence[float]],
    bins: int = 10,
    views: Sequence[GoldView] = ("local", "prefix"),
    source: str = "gold",
) -> dict[str, Any]:
    """Reliability bins and ECE of step scores against each gold view."""
    check_lengths(traces, scores)
    out: dict[str, Any] = {"bins": bins, "views": {}}
    for view in views:
        conf, truth = [], []
        for trace, row in zip(traces, scores, strict=True):
            if not has_gold(trace, source):
                continue
            valid = step_validity(trace, view, source)
            keep = ~np.isnan(valid)
            conf.extend(np.asarray(row, float)[keep])
            truth.extend(valid[keep])
        if not conf:
            continue
        rows, ece = reliability_bins(np.asarray(conf), np.asarray(truth), bins)
        out["views"][view] = {"ece": round(ece, 6), "steps": len(conf), "reliability": rows}
    return out


def _slope(x: np.ndarray, y: np.ndarray) -> float | None:
    """Least-squares slope of y on x, or None with fewer than two distinct x values."""
    if len(x) < 2 or len(np.unique(x)) < 2:
        return None
    return round(float(np.polyfit(x, y, 1)[0]), 6)


def length_bias(
    traces: Sequence[Trace], scores: Sequence[Sequence[float]], aggregation: str = "min", source: str = "gold"
) -> dict[str, Any]:
    """Aggregated score and gold validity against the number of steps; slopes per extra step."""
    check_lengths(traces, scores)
    keep = [i for i, t in enumerate(traces) if t.steps and has_gold(t, source)]
    length = np.array([len(traces[i].steps) for i in keep], dtype=float)
    agg = aggregate_all([scores[i] for i in keep], aggregation)
    valid = np.array([float(process_valid(traces[i], source)) for i in keep])
    rows = []
    for n in sorted(set(length.astype(int).tolist())):
        m = length == n
        mv = m & (valid == 1)
        rows.append(
            {
                "steps": n,
                "traces": int(m.sum()),
                "score": round(float(agg[m].mean()), 6),
                "gold_valid": round(float(valid[m].mean()), 6),
                "score_valid_only": round(float(agg[mv].mean()), 6) if mv.any() else None,
            }
        )
    ok = valid == 1
    return {
        "aggregation": aggregation,
        "rows": rows,
        "score_slope_valid_only": _slope(length[ok], agg[ok]),
        "score_slope_all": _slope(length, agg),
        "gold_valid_slope": _slope(length, valid),
        "corr_length_score_valid_only": _corr(length[ok], agg[ok]),
    }


def _corr(x: np.ndarray, y: np.ndarray) -> float | None:
    if len(x) < 3 or np.std(x) == 0 or np.std(y) == 0:
        return None
    return round(float(np.corrcoef(x, y)[0, 1]), 6)

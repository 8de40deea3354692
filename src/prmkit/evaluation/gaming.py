"""Audits of what selection does: verifier gaming (a Goodhart curve) and the process-to-outcome shift.

Verifier gaming: as selection pressure rises (best-of-N with larger N, or beam search with a wider
beam), the picked traces' PRM scores rise. Does their gold process validity keep pace? The gap between
the picks' mean aggregated score and the share of picks with no gold-wrong step is the number; its
growth with N is the Goodhart curve.

Process-to-outcome shift (Qwen, "The Lessons of Developing PRMs", 2025): among best-of-N picks, the
share whose lowest step score sits on the *final* step. A PRM that has drifted into an outcome model
puts its doubt at the answer rather than at the wrong step; the paper found 42–55 % for open
rollout-trained PRMs. Ties go to the earlier step (``argmin``), so the share is a lower bound; traces of
one step are left out (their minimum is trivially final).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from prmkit.core.model import Trace
from prmkit.evaluation.bon_curves import aggregate_all, bootstrap_mean, default_ns, pick_best, subsets
from prmkit.evaluation.gold import (
    check_lengths,
    group_by_problem,
    process_valid,
    step_validity,
    trace_correct,
)


def picked_means(
    traces: Sequence[Trace],
    selection_score: np.ndarray,
    values: dict[str, np.ndarray],
    ns: Sequence[int],
    draws: int,
    seed: int,
) -> dict[int, dict[str, np.ndarray]]:
    """For each N, per problem, the mean of each per-trace value over the best-of-N picks (NaNs skipped)."""
    rng = np.random.default_rng(seed)
    groups = list(group_by_problem(traces).values())
    out: dict[int, dict[str, np.ndarray]] = {}
    for n in ns:
        per: dict[str, list[float]] = {name: [] for name in values}
        for idx in groups:
            idx_arr = np.asarray(idx)
            picks = idx_arr[pick_best(selection_score[idx_arr], subsets(len(idx), n, draws, rng))]
            for name, vals in values.items():
                chosen = vals[picks]
                per[name].append(float(np.nanmean(chosen)) if np.isfinite(chosen).any() else np.nan)
        out[n] = {name: np.asarray(v) for name, v in per.items()}
    return out


def _ns(traces: Sequence[Trace], ns: Sequence[int] | None, max_n: int) -> list[int]:
    smallest = min(len(g) for g in group_by_problem(traces).values())
    return sorted({n for n in (ns or default_ns(min(max_n, smallest))) if 1 <= n <= smallest})


def verifier_gaming(
    traces: Sequence[Trace],
    scores: Sequence[Sequence[float]],
    aggregation: str = "min",
    ns: Sequence[int] | None = None,
    max_n: int = 256,
    draws: int = 32,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    source: str = "gold",
) -> dict[str, Any]:
    """The Goodhart curve of best-of-N: picks' score vs their gold validity, per N, with the gap's band."""
    check_lengths(traces, scores)
    agg = aggregate_all(scores, aggregation)
    values = {
        "score": agg,
        "gold_valid": np.array([float(process_valid(t, source)) for t in traces]),
        "answer_correct": np.array([float(trace_correct(t)) for t in traces]),
        "step_score": np.array([np.mean(s) if len(s) else np.nan for s in scores]),
        "step_valid": np.array(
            [np.nanmean(step_validity(t, "local", source)) if t.steps else np.nan for t in traces]
        ),
    }
    ns = _ns(traces, ns, max_n)
    means = picked_means(traces, agg, values, ns, draws, seed)
    resamples = np.random.default_rng(seed + 1).integers(
        0, len(means[ns[0]]["score"]), (bootstrap, len(means[ns[0]]["score"]))
    )
    rows = []
    for n in ns:
        m = means[n]
        gap, lo, hi = bootstrap_mean(m["score"] - m["gold_valid"], resamples, confidence)
        row = {"n": n, **{k: round(float(np.nanmean(v)), 6) for k, v in m.items()}}
        rows.append({**row, "gap": round(gap, 6), "gap_lo": round(lo, 6), "gap_hi": round(hi, 6)})
    return {
        "aggregation": aggregation,
        "rows": rows,
        "gap_at_1": rows[0]["gap"],
        "gap_at_max": rows[-1]["gap"],
        "gap_growth": round(rows[-1]["gap"] - rows[0]["gap"], 6),
        "max_n": ns[-1],
    }


def gaming_from_selections(
    levels: Sequence[tuple[Any, Sequence[Trace], Sequence[Sequence[float]]]],
    aggregation: str = "min",
    source: str = "gold",
) -> dict[str, Any]:
    """The same Goodhart reading for selections made elsewhere, e.g. beam search at rising beam widths.

    ``levels`` holds ``(pressure, selected_traces, their_step_scores)``; each selected trace must carry
    gold labels (the world's :func:`gold_label` adds them to any trace of a world problem).
    """
    rows = []
    for pressure, traces, scores in levels:
        check_lengths(traces, scores)
        agg = aggregate_all(scores, aggregation)
        valid = np.array([float(process_valid(t, source)) for t in traces])
        correct = np.array([float(trace_correct(t)) for t in traces])
        rows.append(
            {
                "pressure": pressure,
                "score": round(float(agg.mean()), 6),
                "gold_valid": round(float(valid.mean()), 6),
                "answer_correct": round(float(correct.mean()), 6),
                "gap": round(float(agg.mean() - valid.mean()), 6),
                "traces": len(traces),
            }
        )
    return {
        "aggregation": aggregation,
        "rows": rows,
        "gap_growth": round(rows[-1]["gap"] - rows[0]["gap"], 6),
    }


def min_on_final(scores: Sequence[Sequence[float]]) -> np.ndarray:
    """1.0 where a trace's lowest step score is on its final step, 0.0 elsewhere, NaN for 1-step traces."""
    return np.array([float(np.argmin(s) == len(s) - 1) if len(s) >= 2 else np.nan for s in scores])


def outcome_shift(
    traces: Sequence[Trace],
    scores: Sequence[Sequence[float]],
    aggregation: str = "min",
    ns: Sequence[int] | None = None,
    max_n: int = 256,
    draws: int = 32,
    seed: int = 0,
) -> dict[str, Any]:
    """Share of best-of-N picks whose lowest step score is on the final step, per N (and over all traces)."""
    check_lengths(traces, scores)
    final = min_on_final(scores)
    all_share = float(np.nanmean(final)) if np.isfinite(final).any() else float("nan")
    ns = _ns(traces, ns, max_n)
    means = picked_means(traces, aggregate_all(scores, aggregation), {"final": final}, ns, draws, seed)
    rows = [
        {
            "n": n,
            "share_min_on_final": round(float(np.nanmean(means[n]["final"])), 6),
            "share_min_on_final_all": round(all_share, 6),
        }
        for n in ns
    ]
    return {
        "aggregation": aggregation,
        "rows": rows,
        "share_at_max": rows[-1]["share_min_on_final"],
        "share_all": round(all_share, 6),
    }


def beam_gaming(
    problems: Sequence[Any],
    policy: Any,
    scorer: Any,
    budgets: Sequence[int] = (4, 16),
    beam_width: int = 4,
    aggregation: str = "min",
    seed: int = 0,
    gold_label: Callable[[list[Trace]], list[Trace]] | None = None,
) -> dict[str, Any]:
    """The Goodhart reading of PRM-guided beam search at rising budgets ``n`` (world problems: gold exists).

    Each budget runs :func:`prmkit.search.beam.beam_search`; the chosen traces are gold-labelled by
    ``gold_label`` (the problems' world's checker; default the arithmetic world's) and re-scored, then
    read like best-of-N picks (:func:`gaming_from_selections`).
    """
    from prmkit.search.beam import beam_search

    if gold_label is None:
        from prmkit.worlds.registry import DEFAULT_WORLD, world

        gold_label = world(DEFAULT_WORLD).gold_label

    levels, dropped, unchosen = [], {}, {}
    for n in budgets:
        results = beam_search(
            problems, policy, scorer, n=n, beam_width=min(beam_width, n), aggregation=aggregation, seed=seed
        )
        chosen = gold_label([r.trace for r in results if r.trace is not None])
        levels.append((n, chosen, scorer.score(chosen)))
        # beam search's length policy: candidates that outgrew the scorer are dropped, not ranked
        dropped[n] = sum(r.details.get("dropped_overlong", 0) for r in results)
        unchosen[n] = sum(r.trace is None for r in results)
    out = gaming_from_selections(levels, aggregation)
    out |= {"beam_width": beam_width, "dropped_overlong": dropped, "problems_without_choice": unchosen}
    return out

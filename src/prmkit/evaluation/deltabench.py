"""DeltaBench's section-level error detection (He et al., 2025, arXiv 2502.19361; OpenStellarTeam/DeltaBench),
as its ``evaluation.py`` (commit 6b67c64ad177553ec73f85ff98b18b0e6627341f) scores a critic, for a PRM.

A long CoT is split into sections; the gold erroneous sections are the union of
``reason_error_section_numbers`` and ``reason_unuseful_section_numbers`` (``process_line``), 1-based. A
section is *predicted* erroneous when the predictor rates it wrong; a PRM's section scores are cut by the
paper's **Z-score outlier rule**: flagged when below ``mean − k·std`` of that trace's section scores
(``z_k``, ``z_ddof``; :func:`~prmkit.evaluation.stepbench.zscore_flags`). The paper states the rule but
neither its repository nor any text reachable here gives k or the std's degrees of freedom: both are
config fields (default k = 1, population std), recorded with the result; ``use_threshold`` cuts at a fixed
threshold instead.

Per trace, ``parse_output``'s rules: predicted sections after the last gold erroneous section are
dropped (``x <= max(all_error_section_indexs)``); precision, recall and F1 of the predicted set against
the gold set, each 0 when its denominator is 0. A trace with **no** gold erroneous section makes upstream's
``max([])`` raise inside its try; the record is written without metrics and pandas' mean skips it: such
traces are left out here too, and counted (``no_gold_error``). Per ``task_l1`` (read by
:mod:`prmkit.formats.deltabench` into ``Problem.source``; the file stem for files of other formats) and
overall, ``calculate_accuracies_v2``: macro = the plain mean of the per-trace figures, micro = from summed
TP/FP/FN. The headline is overall macro-F1. First-error F1 and AUROC sit beside them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from prmkit.core.model import Trace
from prmkit.evaluation.config import DeltaBenchConfig
from prmkit.evaluation.stepbench import (
    Row,
    StepBenchResult,
    by_group,
    first_error_f1,
    run_stepbench,
    set_prf,
    step_auroc,
    zscore_rule,
)

OFFICIAL = "OpenStellarTeam/DeltaBench evaluation.py @ 6b67c64ad177553ec73f85ff98b18b0e6627341f"
GOLD_SOURCES = ("gold", "human:deltabench")


def sections(ratings: Sequence[int | None]) -> set[int]:
    """1-based numbers of the sections rated wrong."""
    return {i + 1 for i, r in enumerate(ratings) if r == -1}


def trace_prf(row: Row) -> tuple[float, float, float, int, int, int] | None:
    """``parse_output``'s figures for one trace; None when it has no gold erroneous section."""
    gold = sections(row.gold)
    if not gold:
        return None
    predicted = {x for x in sections(row.predicted) if x <= max(gold)}
    return set_prf(predicted, gold)


def group_metrics(name: str, rows: Sequence[Row]) -> dict:
    """``calculate_accuracies_v2`` over the rows that have a gold error."""
    figures = [f for f in map(trace_prf, rows) if f is not None]
    tp, fp, fn = (sum(f[i] for f in figures) for i in (3, 4, 5))
    p = tp / (tp + fp) if tp + fp > 0 else 0
    r = tp / (tp + fn) if tp + fn > 0 else 0
    mean = (lambda i: float(np.mean([f[i] for f in figures]))) if figures else (lambda i: None)
    return {
        "name": name, "traces": len(rows), "no_gold_error": len(rows) - len(figures),
        "recall_macro": mean(1), "precision_macro": mean(0), "f1_macro": mean(2),
        "recall_micro": r, "precision_micro": p, "f1_micro": 2 * p * r / (p + r) if p + r > 0 else 0,
    }  # fmt: skip


def evaluate_deltabench(rows: Sequence[Row]) -> StepBenchResult:
    """Section precision / recall / F1, macro and micro, per group and overall (headline: macro-F1)."""
    groups = by_group(rows)
    overall = group_metrics("Overall", rows)
    return StepBenchResult(
        "deltabench", "", "macro-F1", overall["f1_macro"], [group_metrics(n, rs) for n, rs in groups.items()],
        overall, [first_error_f1(n, rs) for n, rs in groups.items()], step_auroc(rows),
        notes=[f"official: {OFFICIAL}"],
    )  # fmt: skip


def headline(rows: Sequence[Row], w: np.ndarray) -> np.ndarray:
    """Macro-F1 under trace weights ``w`` (R, n) (traces with no gold error weigh nothing)."""
    figures = [trace_prf(r) for r in rows]
    f1 = np.array([f[2] if f else 0.0 for f in figures])
    has = np.array([f is not None for f in figures], dtype=float)
    den = w @ has
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, (w @ (f1 * has)) / np.where(den > 0, den, 1), np.nan)


def by_domain(sets: dict[str, list[Trace]]) -> dict[str, list[Trace]]:
    """The traces of DeltaBench files grouped by ``task_l1`` (upstream's ``groupby('task_l1')``); files of
    other formats keep their file-stem group."""
    out: dict[str, list[Trace]] = {}
    for stem, traces in sets.items():
        for t in traces:
            group = t.problem.source if "deltabench" in t.metadata and t.problem.source else stem
            out.setdefault(group, []).append(t)
    return out


def run_deltabench(config: DeltaBenchConfig) -> StepBenchResult:
    """``prmkit eval deltabench``: the fields are documented on
    :class:`~prmkit.evaluation.config.DeltaBenchConfig`."""
    if config.use_threshold:
        return run_stepbench(config, GOLD_SOURCES, evaluate_deltabench, headline, regroup=by_domain)
    rule = zscore_rule(config.z_k, config.z_ddof)
    return run_stepbench(
        config,
        GOLD_SOURCES,
        evaluate_deltabench,
        headline,
        rule,
        f"z-score k={config.z_k} ddof={config.z_ddof}",
        regroup=by_domain,
    )

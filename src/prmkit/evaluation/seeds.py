"""Several training seeds of one model measured on the same traces, and the first-error statistics a
bootstrap over problems (and seeds) reads: what :mod:`~prmkit.evaluation.transfer`,
:mod:`~prmkit.evaluation.monitorability` and :mod:`~prmkit.evaluation.fewshot` share.

A model's training seeds (the same recipe trained with other seeds) are one model measured several
times: each at its own deployed threshold, on the same traces, so every number is the mean over the seeds
and every interval a crossed bootstrap over seeds × problems (:func:`prmkit.core.stats.crossed_bootstrap`:
one multinomial weight vector over the problems shared by every seed, the seeds drawn with replacement),
which counts the training noise beside the problems'. A :data:`~prmkit.core.stats.Stat` per seed is
joined by :func:`per_seed`; with one seed everything reduces to the bootstrap over problems.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from prmkit.core.model import Trace
from prmkit.core.stats import Estimate, Stat, crossed_bootstrap, item_weights, weighted_auroc
from prmkit.evaluation.processbench import first_error_steps


@dataclass
class SeedModel:
    """One training seed's scorer in a matrix measured over seeds: its name and deployed threshold."""

    model: str
    threshold: float | None
    """None for a judge (its verdicts need none)."""
    threshold_from: str


def problem_indices(traces: Sequence[Trace], problems: int) -> np.ndarray:
    """Each trace's problem index, in the order the problems first appear (the order they were drawn)."""
    order = {p: i for i, p in enumerate(dict.fromkeys(t.problem.id for t in traces))}
    if len(order) != problems:
        raise ValueError(f"the traces cover {len(order)} problems, the matrix pairs {problems} per setting")
    return np.asarray([order[t.problem.id] for t in traces], dtype=int)


def f1_stat(
    gold: Sequence[int], predicted: Sequence[int | None], problem_of: np.ndarray, problems: int
) -> Stat:
    """First-error F1 on reweighted problems: acc_error and acc_correct as ratios of per-problem counts,
    their harmonic mean (0 when both are 0, NaN when a side has no weight: ProcessBench's rule)."""
    counts = np.zeros((4, problems))  # with error, matched; error-free, matched
    for g, p, i in zip(gold, predicted, problem_of, strict=True):
        side = 0 if g != -1 else 2
        counts[side, i] += 1
        counts[side + 1, i] += p is not None and p == g

    def stat(_: int, w: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            a, b = (w @ counts[1]) / (w @ counts[0]), (w @ counts[3]) / (w @ counts[2])
            f1 = np.where(a + b > 0, 2 * a * b / (a + b), 0.0)
        return np.where(np.isnan(a) | np.isnan(b), np.nan, f1)

    return stat


def auroc_stat(rows: Sequence[Sequence[float]], gold: Sequence[int], problem_of: np.ndarray) -> Stat:
    """Step-level first-error AUROC on reweighted problems: the steps of
    :func:`~prmkit.evaluation.processbench.first_error_steps`, each weighted as its trace's problem."""
    parts = [first_error_steps([row], [g]) for row, g in zip(rows, gold, strict=True)]
    wrong = np.concatenate([w for w, _ in parts]) if parts else np.zeros(0)
    positive = np.concatenate([p for _, p in parts]) if parts else np.zeros(0, bool)
    step_problem = np.repeat(problem_of, [len(w) for w, _ in parts]).astype(int)
    return lambda _, w: weighted_auroc(wrong, positive, item_weights(w, step_problem))


def over_problems(
    stat: Stat, problems: int, resamples: int, confidence: float, seed: int, seeds: int = 1
) -> Estimate:
    """``stat``'s percentile bootstrap interval over problem indices (one run), or over training seeds ×
    problem indices when ``seeds`` > 1 (``stat(s, w)`` reads seed ``s``): the one every row of the
    matrix, and every point of the few-shot curve (:mod:`prmkit.evaluation.fewshot`), is given."""
    draws = {"seed": seeds, "problem": problems} if seeds > 1 else {"problem": problems}
    return crossed_bootstrap(
        stat, seeds, problems, resamples=resamples, confidence=confidence, rng=seed, draws=draws
    )


def per_seed(stats: Sequence[Stat]) -> Stat:
    """One :data:`~prmkit.core.stats.Stat` over seeds from one per seed: ``stat(s, w)`` is seed ``s``'s."""
    return lambda s, w: stats[s](s, w)


def as_seeds(scorer: Any, threshold: Any) -> tuple[list[Any], list[float | None]]:
    """``scorer`` (one, or a list of training seeds of one model) and ``threshold`` (one for all, or one
    per seed) as two lists of equal length."""
    scorers = list(scorer) if isinstance(scorer, list | tuple) else [scorer]
    if not scorers:
        raise ValueError("no scorer to measure: give one, or a list of training seeds of one model")
    thresholds = list(threshold) if isinstance(threshold, list | tuple) else [threshold] * len(scorers)
    if len(thresholds) != len(scorers):
        raise ValueError(f"{len(thresholds)} thresholds for {len(scorers)} seeds: give one, or one per seed")
    return scorers, thresholds

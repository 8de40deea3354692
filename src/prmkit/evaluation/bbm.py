"""BIG-Bench Mistake's mistake-location accuracy (Tyen et al., 2023, arXiv 2311.08516;
WHGTyen/BIG-Bench-Mistake), per task, beside first-error F1 and AUROC.

The repository holds data and prompts only, no scoring code; the metric is the paper's: a trace's
predicted mistake step (the first step rated wrong, 0-based like ``mistake_index``) either is the
annotated ``mistake_index`` or not. prmkit reports it two ways, both named:

- ``location_acc``: over the traces that contain a mistake (the predicted index equals ``mistake_index``);
- ``location_acc_all``: over all traces, a trace with no mistake counting as a hit when nothing is flagged
  (``mistake_index`` null and no step rated wrong).

Which of the two the paper's tables print could not be checked here against the paper's text (the repo
has no scoring code): the headline is ``location_acc`` (traces with a mistake), and ``location_acc_all``
sits beside it. No prediction (steps left unrated) is a miss in both. ``answer_acc`` is the share of
traces whose ``answer`` equals ``target`` (the policy's accuracy, for context).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from prmkit.evaluation.config import BbmConfig
from prmkit.evaluation.stepbench import (
    Row,
    StepBenchResult,
    by_group,
    first_error_f1,
    run_stepbench,
    step_auroc,
)

GOLD_SOURCES = ("gold", "human:bbm")


def task_metrics(name: str, rows: Sequence[Row]) -> dict:
    """One task's counts and accuracies."""
    mistaken = [r for r in rows if r.gold_first != -1]
    hits = sum(r.predicted_first == r.gold_first for r in mistaken)
    clean_hits = sum(r.predicted_first == -1 for r in rows if r.gold_first == -1)
    answered = [r for r in rows if r.correct is not None]
    return {
        "name": name, "traces": len(rows), "with_mistake": len(mistaken),
        "location_acc": hits / len(mistaken) if mistaken else None,
        "location_acc_all": (hits + clean_hits) / len(rows) if rows else None,
        "answer_acc": sum(bool(r.correct) for r in answered) / len(answered) if answered else None,
    }  # fmt: skip


def evaluate_bbm(rows: Sequence[Row]) -> StepBenchResult:
    """Mistake-location accuracy per task and over all traces (pooled), first-error F1 and AUROC."""
    groups = {n: rs for n, rs in by_group(rows).items()}
    table = [task_metrics(n, rs) for n, rs in groups.items()]
    overall = task_metrics("all", rows)
    first = [first_error_f1(n, rs) for n, rs in groups.items()]
    notes = ["no official scoring code: the paper's definition (module docstring)"]
    return StepBenchResult(
        "bbm", "", "mistake-location accuracy (traces with a mistake)", overall["location_acc"],
        table, overall, first, step_auroc(rows), notes=notes,
    )  # fmt: skip


def headline(rows: Sequence[Row], w: np.ndarray) -> np.ndarray:
    """``location_acc`` under trace weights ``w`` (R, n)."""
    mistaken = np.array([r.gold_first != -1 for r in rows])
    hit = np.array([r.gold_first != -1 and r.predicted_first == r.gold_first for r in rows])
    den = w @ mistaken
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, (w @ hit) / np.where(den > 0, den, 1), np.nan)


def run_bbm(config: BbmConfig) -> StepBenchResult:
    """``prmkit eval bbm``: the fields are documented on :class:`~prmkit.evaluation.config.BbmConfig`."""
    return run_stepbench(config, GOLD_SOURCES, evaluate_bbm, headline)

"""Hard2Verify's metrics (Pandit et al., 2025, arXiv 2510.13744; Salesforce), from the paper's definitions.

The evaluation code (github SalesforceAIResearch/Hard2Verify) could not be fetched here and the HF dataset's
rows are encrypted, so prmkit reads no Hard2Verify file of its own: it evaluates any traces with step gold
(``gold`` or ``human:hard2verify`` labels, e.g. a prmkit trace file). The definitions (paper; alphaxiv's
summary of it): a *positive* is a correct step (TPR: accuracy on correct steps), a *negative* a wrong one
(TNR); balanced accuracy = (TPR + TNR) / 2, balanced F1 = 2·TPR·TNR / (TPR + TNR). Three tasks:

- step level: every gold-rated step pooled over responses (a step the predictor left unrated is a miss);
- response level: a response is correct iff all its steps are; predicted correct iff no step is rated
  wrong (no prediction is a miss either way);
- ErrorID: a correct response is a hit when nothing is flagged, a wrong one when the first flagged step
  is the gold first error; TPR/TNR are ProcessBench's acc_correct/acc_error, so balanced F1 is its F1.

The headline is step-level balanced F1. Per-file groups get the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from prmkit.evaluation.config import Hard2VerifyConfig
from prmkit.evaluation.stepbench import (
    Row,
    StepBenchResult,
    balanced,
    by_group,
    first_error_f1,
    run_stepbench,
    step_auroc,
)

GOLD_SOURCES = ("gold", "human:hard2verify")


def step_counts(row: Row) -> tuple[int, int, int, int]:
    """(correct steps predicted correct, correct steps, wrong steps predicted wrong, wrong steps)."""
    pairs = [(g, p) for g, p in zip(row.gold, row.predicted, strict=False) if g is not None]
    tp = sum(g == 1 and p == 1 for g, p in pairs)
    tn = sum(g == -1 and p == -1 for g, p in pairs)
    return tp, sum(g == 1 for g, _ in pairs), tn, sum(g == -1 for g, _ in pairs)


def group_metrics(name: str, rows: Sequence[Row]) -> dict:
    """Step-, response- and ErrorID-level rates of one group."""
    tp, pos, tn, neg = (sum(c[i] for c in map(step_counts, rows)) for i in range(4))
    step = balanced(tp, pos, tn, neg)
    good = [r for r in rows if r.gold_first == -1]
    bad = [r for r in rows if r.gold_first != -1]
    resp = balanced(sum(r.predicted_first == -1 for r in good), len(good),
                    sum(r.predicted_first not in (None, -1) for r in bad), len(bad))  # fmt: skip
    first = balanced(sum(r.predicted_first == -1 for r in good), len(good),
                     sum(r.predicted_first == r.gold_first for r in bad), len(bad))  # fmt: skip
    return {
        "name": name, "responses": len(rows), "steps": pos + neg,
        "step_tpr": step["tpr"], "step_tnr": step["tnr"], "step_balanced_acc": step["balanced_accuracy"],
        "step_balanced_f1": step["balanced_f1"], "response_balanced_acc": resp["balanced_accuracy"],
        "response_balanced_f1": resp["balanced_f1"], "errorid_balanced_acc": first["balanced_accuracy"],
        "errorid_balanced_f1": first["balanced_f1"],
    }  # fmt: skip


def evaluate_hard2verify(rows: Sequence[Row]) -> StepBenchResult:
    """The three tasks' balanced accuracy and F1 per group and pooled (headline: step-level balanced F1)."""
    groups = by_group(rows)
    overall = group_metrics("all", rows)
    return StepBenchResult(
        "hard2verify", "", "step-level balanced F1", overall["step_balanced_f1"],
        [group_metrics(n, rs) for n, rs in groups.items()], overall,
        [first_error_f1(n, rs) for n, rs in groups.items()], step_auroc(rows),
        notes=["no official code reachable: the paper's definitions (module docstring)"],
    )  # fmt: skip


def headline(rows: Sequence[Row], w: np.ndarray) -> np.ndarray:
    """Step-level balanced F1 under trace weights ``w`` (R, n)."""
    c = np.array([step_counts(r) for r in rows], dtype=float).reshape(len(rows), 4)
    tp, pos, tn, neg = (w @ c[:, i] for i in range(4))
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr, tnr = tp / pos, tn / neg
        return np.where(tpr + tnr > 0, 2 * tpr * tnr / (tpr + tnr), 0.0)


def run_hard2verify(config: Hard2VerifyConfig) -> StepBenchResult:
    """``prmkit eval hard2verify``: the fields are documented on
    :class:`~prmkit.evaluation.config.Hard2VerifyConfig`."""
    return run_stepbench(config, GOLD_SOURCES, evaluate_hard2verify, headline)

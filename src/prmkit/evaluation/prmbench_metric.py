"""PRMBench's step counts and PRMScore, pure functions over lists (no files, no models).

A prediction labels each step valid (True) or not; an item's counts are PRMBench's ``f1_matrix``
(``eval_on_hallucination_step``): over the steps the prediction labels, TP = a correct step labelled
valid, FP = an error step labelled valid, TN = an error step labelled invalid, FN = a correct step
labelled invalid. F1(correct steps) = F1 of (TP, FP, FN); F1(error steps) = F1 of (TN, FN, FP);
PRMScore = their mean. :func:`official_metrics` rebuilds the whole dictionary ``evaluate_function``
returns, its -1 for "undefined" and its other averages included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

VALIDITY_THRESHOLD = 0.5
"""A step is valid when its score is above this (PRMBench's models: ``item > validity_threshold``)."""
REDUNDANCY_THRESHOLD = 0.15
"""A step is redundant when its redundancy score is above this (PRMBench's ``redundancy_threshold``)."""
REDUNDANCY_CLASSES = ("redundency", "circular")
"""Classes scored on redundancy labels when a prediction has them (the official spelling)."""
CORRECT = "correct"
CATEGORIES = {
    "simplicity": ("redundency", "circular"),
    "soundness": ("counterfactual", "step_contradiction", "domain_inconsistency", "confidence"),
    "sensitivity": ("missing_condition", "deception", "multi_solutions"),
}
"""PRMBench's three categories and their classes (the leaderboard notebook's grouping)."""
METRICS = ("correct_step_acc", "wrong_step_acc", "total_step_acc", "first_error_acc")


def ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def f1(tp: float, fp: float, fn: float) -> float | None:
    """F1 of the positive class; 0 when one of precision and recall is undefined and the other 0 (the
    official code's -0.0), None when both are undefined (its -1)."""
    precision, recall = ratio(tp, tp + fp), ratio(tp, tp + fn)
    if precision is None and recall is None:
        return None
    p, r = precision or 0.0, recall or 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


def prm_score(f1_correct: float | None, f1_error: float | None) -> float | None:
    return None if f1_correct is None or f1_error is None else 0.5 * f1_correct + 0.5 * f1_error


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0

    def __iadd__(self, other: Counts) -> Counts:
        self.tp, self.fp, self.tn, self.fn = (
            self.tp + other.tp,
            self.fp + other.fp,
            self.tn + other.tn,
            self.fn + other.fn,
        )
        return self

    def f1_correct(self) -> float | None:
        return f1(self.tp, self.fp, self.fn)

    def f1_error(self) -> float | None:
        return f1(self.tn, self.fn, self.fp)

    @staticmethod
    def prm_score_of(table: np.ndarray) -> np.ndarray:
        """PRMScore of (R, 4) rows of weighted (TP, FP, TN, FN); nan where an F1 is undefined."""
        tp, fp, tn, fn = table.T

        def f1v(t: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(t > 0, 2 * t / (2 * t + a + b), np.where(t + a + b > 0, 0.0, np.nan))

        return 0.5 * f1v(tp, fp, fn) + 0.5 * f1v(tn, fn, fp)


def item_counts(error_steps: Sequence[int], labels: Sequence[bool]) -> Counts:
    """One item's counts over the steps ``labels`` covers (``error_steps`` 1-based)."""
    errors = {e - 1 for e in error_steps}
    c = Counts()
    for i, valid in enumerate(labels):
        if i in errors:
            c.fp, c.tn = c.fp + bool(valid), c.tn + (not valid)
        else:
            c.tp, c.fn = c.tp + bool(valid), c.fn + (not valid)
    return c


@dataclass
class Prediction:
    """One item's prediction: validity labels (None: no usable prediction, the official
    ``validity: false``), redundancy labels (True = redundant) when the model gives them, scores."""

    validity: list[bool] | None
    redundancy: list[bool] | None = None
    scores: list[float] | None = None

    @property
    def valid(self) -> bool:
        return self.validity is not None

    def labels_for(self, classification: str) -> list[bool]:
        """The labels the official code reads for an item of ``classification``."""
        if classification in REDUNDANCY_CLASSES and self.redundancy is not None:
            return [not r for r in self.redundancy]
        return list(self.validity or [])

    @classmethod
    def from_scores(cls, scores: list[float]) -> Prediction:
        return cls([s > VALIDITY_THRESHOLD for s in scores], None, scores)

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> Prediction:
        """A prediction as mr_eval stores it: ``{idx, scores: {step_level_validity_labels,
        step_level_validity_scores, step_level_redundancy_labels | _scores}, validity}``; labels come
        from scores at the official thresholds when only scores are given."""
        if "validity" in rec and not rec["validity"]:  # the official test
            return cls(None)
        s = rec.get("scores")
        if not isinstance(s, dict):
            raise ValueError("expected scores: an object of step-level labels and scores")
        scores = s.get("step_level_validity_scores")
        validity = s.get("step_level_validity_labels")
        if validity is None and scores is not None:
            validity = [x > VALIDITY_THRESHOLD for x in scores]
        if validity is None:
            raise ValueError("expected step_level_validity_labels or step_level_validity_scores")
        redundancy = s.get("step_level_redundancy_labels")
        if redundancy is None and s.get("step_level_redundancy_scores") is not None:
            redundancy = [x > REDUNDANCY_THRESHOLD for x in s["step_level_redundancy_scores"]]
        return cls([bool(v) for v in validity], redundancy, scores)

    def to_record(self) -> dict[str, Any]:
        if self.validity is None:
            return {"scores": {}, "validity": False}
        out: dict[str, Any] = {"step_level_validity_labels": self.validity}
        if self.scores is not None:
            out["step_level_validity_scores"] = [round(x, 6) for x in self.scores]
        if self.redundancy is not None:
            out["step_level_redundancy_labels"] = self.redundancy
        return {"scores": out}


def official_f1(tp: int, fp: int, fn: int) -> float:
    """The official F1: -1 when precision + recall is 0 (an F1 of 0 included) or both are undefined."""
    return _official_f1(tp, fp, fn)[2]


def _official_f1(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """(precision, recall, F1) with the official -1 for undefined, and its arithmetic on them."""
    p = tp / (tp + fp) if tp + fp else -1
    r = tp / (tp + fn) if tp + fn else -1
    return p, r, 2 * p * r / (p + r) if p + r != 0 else -1


def official_metrics(
    items: Sequence[tuple[str, str, list[int]]], preds: Mapping[str, Prediction]
) -> dict[str, Any]:
    """What ``evaluate_function`` returns (less ``detailed_logs``) for items ``(key, class, error
    steps)`` and predictions by key, correct copies first as the official code scores them."""
    classes = {c for _, c, _ in items}
    per: dict[str, dict[str, list[float]]] = {m: {c: [] for c in classes} for m in (*METRICS, "similarity")}
    total: dict[str, list[float]] = {m: [] for m in (*METRICS, "similarity")}
    counts = {c: Counts() for c in classes}
    overall = Counts()
    acc: dict[str, float] = {}
    predicted = [(k, c, e) for k, c, e in items if k in preds]
    valid = 0
    order = [x for x in predicted if x[1] == CORRECT] + [x for x in predicted if x[1] != CORRECT]
    for key, cls, errors in order:
        p = preds[key]
        if not p.valid:
            continue
        labels = p.labels_for(cls) if cls != CORRECT else list(p.validity or [])
        lists = _step_lists(errors, labels)
        for m in METRICS:
            per[m][cls] += lists[m]
            if cls != CORRECT:
                total[m] += lists[m]
        c = item_counts(errors, labels)
        counts[cls] += c
        model_acc = sum(labels) / len(labels) if labels else -1
        if cls == CORRECT:
            acc[key] = model_acc
            continue
        valid += 1
        overall += c
        base = acc.get("correct_" + key[len(f"{cls}_") :])
        if base and model_acc != -1:
            per["similarity"][cls].append(abs(model_acc - base))
            total["similarity"].append(abs(model_acc - base))
    mean = lambda v: sum(v) / len(v) if v else -1  # noqa: E731
    tot = {m: mean(total[m]) for m in (*METRICS, "similarity")}
    by = {m: {c: mean(v) for c, v in per[m].items()} for m in (*METRICS, "similarity")}
    _put_f1(tot, overall)
    names = ("precision", "recall", "f1", "negative_precision", "negative_recall", "negative_f1")
    for n in names:
        by[n] = {}
    for cls in classes:
        one: dict[str, float] = {}
        _put_f1(one, counts[cls])
        for n in names:
            by[n][cls] = one[n]
    n_total = len(items) - sum(1 for _, c, _ in predicted if c == CORRECT)
    return {
        "total_hallucination_results": tot,
        "hallucination_type_results": by,
        "validitiy_rate": valid / n_total if n_total else None,
    }


def _put_f1(target: dict[str, Any], c: Counts) -> None:
    target["precision"], target["recall"], target["f1"] = _official_f1(c.tp, c.fp, c.fn)
    n = _official_f1(c.tn, c.fn, c.fp)
    target["negative_precision"], target["negative_recall"], target["negative_f1"] = n


def _step_lists(error_steps: Sequence[int], labels: Sequence[bool]) -> dict[str, list[float]]:
    """The per-step 0/1 lists of ``eval_on_hallucination_step`` (and its first-error hit)."""
    errors = {e - 1 for e in error_steps}
    first = min(errors) if errors else -1
    out: dict[str, list[float]] = {m: [] for m in METRICS}
    for i, valid in enumerate(labels):
        if i == first:
            out["first_error_acc"].append(0 if valid else 1)
        right = (not valid) if i in errors else bool(valid)
        out["wrong_step_acc" if i in errors else "correct_step_acc"].append(int(right))
        out["total_step_acc"].append(int(right))
    return out

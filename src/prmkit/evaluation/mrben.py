"""MR-Ben's MR-Score (Zeng et al., 2024, arXiv 2406.13975; dvlab-research/Mr-Ben), as its
``script/evaluate.py`` ``calculate_mr_score`` and ``script/utils.py`` ``get_mr_score`` compute it
(commit 6eb1eca8861be411838c7c1c189dba208c140e06), for a step predictor.

Per subject (the data file: biology, chemistry, coding, logic, math, medicine, physics):

- task 1, solution correctness: the predictor calls a solution *correct* when it rates no step wrong,
  *incorrect* when it rates one wrong; no prediction (steps left unrated) is neither, as an empty parsed
  answer is upstream. ``t1-tp`` = correct solutions called correct, ``t1-tn`` = incorrect called incorrect,
  ``fp = incorrect − tn``, ``fn = correct − tp``; MCC with ``MCC_score``'s rule (0 when the numerator or
  the denominator is 0). The *positive* class is "correct", as upstream.
- task 2, first error step: among the incorrect solutions called incorrect, the predicted first wrong step
  (1-based, as ``Step N``) equals the annotated ``Model_Solution_First_Error_Step``. ``ACC_step`` =
  hits / incorrect solutions (all of them, not only those called incorrect).
- task 3, error reason: needs a judge of the explanation. A PRM has none: without ``reason_verdicts``
  ``ACC_reason`` is not computed and the MR-Score reported is its **PRM part**
  ``0.2·max(0, MCC) + 0.3·ACC_step``. With verdicts, ``t3`` counts task-2 hits whose verdict is correct.
- coding: upstream scores the coding first error *only* through the judge (a line of code is "a rough
  indicator"): an incorrect solution called incorrect counts for task 2 and 3 when the judge says correct.
  Without verdicts coding's ``ACC_step`` is therefore None (upstream's step term would be 0; the PRM part
  counts it as 0 and says so), and prmkit's own line match is reported beside it as ``acc_step_line``.

The headline is upstream's ``Average MR-Score``: the plain mean over subjects. First-error F1 and AUROC
(ProcessBench's) sit beside it; coding solutions whose annotated error line is not a line of the code
have no gold first error and are left out of them (counted as ``unlocated``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from prmkit.evaluation.config import MrBenConfig
from prmkit.evaluation.stepbench import (
    Row,
    StepBenchResult,
    by_group,
    first_error_f1,
    mcc,
    run_stepbench,
    step_auroc,
)

OFFICIAL = "dvlab-research/Mr-Ben script/evaluate.py @ 6eb1eca8861be411838c7c1c189dba208c140e06"
GOLD_SOURCES = ("gold", "human:mrben")
WEIGHTS = (0.2, 0.3, 0.5)
"""MR-Score's w1 (MCC), w2 (ACC_step), w3 (ACC_reason): ``get_mr_score``'s."""
CODING = "coding"


def _called_incorrect(r: Row) -> bool:
    return r.predicted_first is not None and r.predicted_first != -1


def subject_metrics(name: str, rows: Sequence[Row], verdicts: dict[str, bool] | None) -> dict:
    """Upstream's counts and metrics of one subject."""
    coding = name == CODING
    correct = [r for r in rows if r.correct]
    incorrect = [r for r in rows if not r.correct]
    tp = sum(r.predicted_first == -1 for r in correct)
    tn = sum(_called_incorrect(r) for r in incorrect)
    t2 = t3 = line = 0
    for r in incorrect:
        if not _called_incorrect(r):
            continue
        verdict = bool(verdicts and verdicts.get(r.id))
        located = r.gold_first != -1 and r.predicted_first == r.gold_first
        line += located
        if coding:
            t2 += verdict
            t3 += verdict
        elif located:
            t2 += 1
            t3 += verdict
    fp, fn = len(incorrect) - tn, len(correct) - tp
    m = mcc(tp, tn, fp, fn)
    n_bad = len(incorrect)
    acc_step = t2 / n_bad if n_bad and (verdicts is not None or not coding) else None
    acc_reason = t3 / n_bad if n_bad and verdicts is not None else None
    w1, w2, w3 = WEIGHTS
    prm_part = w1 * max(0.0, m) + w2 * (acc_step or 0.0)
    return {
        "name": name, "solutions": len(rows), "correct": len(correct), "incorrect": n_bad,
        "t1_tp": tp, "t1_tn": tn, "t1_fp": fp, "t1_fn": fn, "mcc": m, "acc_step": acc_step,
        "acc_step_line": line / n_bad if n_bad else None, "acc_reason": acc_reason,
        "mr_score_prm": prm_part,
        "mr_score": prm_part + w3 * acc_reason if acc_reason is not None else None,
    }  # fmt: skip


def evaluate_mrben(rows: Sequence[Row], verdicts: dict[str, bool] | None = None) -> StepBenchResult:
    """MR-Score per subject and its plain mean (the headline: the full score with ``verdicts``, else the
    PRM part), first-error F1 and AUROC beside them."""
    groups = [subject_metrics(n, rs, verdicts) for n, rs in by_group(rows).items()]
    key = "mr_score" if verdicts is not None else "mr_score_prm"
    headline = float(np.mean([g[key] for g in groups])) if groups else None
    overall = {k: None for k in groups[0]} if groups else {}
    overall.update(name="average", solutions=len(rows), **{key: headline})
    located = [r for r in rows if r.correct or r.gold_first != -1]
    notes = [f"official: {OFFICIAL}"]
    if verdicts is None:
        notes.append("ACC_reason (0.5 of MR-Score) needs a judge's verdicts (--reason-verdicts): not computed; "
                     "the MR-Score shown is its PRM part 0.2·max(0,MCC) + 0.3·ACC_step")  # fmt: skip
        if any(g["name"] == CODING for g in groups):
            notes.append(
                "coding: the official step term is judged, not matched; counted 0 (acc_step_line: prmkit's)"
            )
    if len(located) < len(rows):
        notes.append(f"{len(rows) - len(located)} incorrect solution(s) with no locatable gold step: "
                     "left out of first-error F1 and AUROC")  # fmt: skip
    first = [first_error_f1(n, [r for r in rs if r in located]) for n, rs in by_group(rows).items()]
    return StepBenchResult(
        "mrben", "", "Average MR-Score" + ("" if verdicts is not None else " (PRM part)"), headline,
        groups, overall, first, step_auroc(located), notes=notes,
    )  # fmt: skip


def headline(rows: Sequence[Row], w: np.ndarray) -> np.ndarray:
    """The PRM part of the average MR-Score under trace weights ``w`` (R, n), for the paired bootstrap."""
    rows_by = by_group(rows)
    index = {id(r): i for i, r in enumerate(rows)}
    total = np.zeros(w.shape[0])
    for name, rs in rows_by.items():
        cols = [index[id(r)] for r in rs]
        ww = w[:, cols]
        good = np.array([bool(r.correct) for r in rs])
        said_ok = np.array([r.predicted_first == -1 for r in rs])
        said_bad = np.array([_called_incorrect(r) for r in rs])
        hit = np.array([name != CODING and _called_incorrect(r) and r.gold_first != -1
                        and r.predicted_first == r.gold_first for r in rs])  # fmt: skip
        tp, tn = ww @ (good & said_ok), ww @ (~good & said_bad)
        pos, neg = ww @ good, ww @ ~good
        fp, fn = neg - tn, pos - tp
        num = tp * tn - fp * fn
        den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        with np.errstate(divide="ignore", invalid="ignore"):
            m = np.where((num == 0) | (den == 0), 0.0, num / np.where(den == 0, 1, den))
            step = np.where(neg > 0, (ww @ hit) / np.where(neg > 0, neg, 1), 0.0)
        total += WEIGHTS[0] * np.maximum(0.0, m) + WEIGHTS[1] * step
    return total / max(len(rows_by), 1)


def read_verdicts(path: str | Path) -> dict[str, bool]:
    """``{"id": ..., "correct": bool}`` per line -> id -> verdict."""
    out = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            rec = json.loads(line)
            if (
                not isinstance(rec, dict)
                or not isinstance(rec.get("id"), str)
                or not isinstance(rec.get("correct"), bool)
            ):
                raise ValueError(
                    f'{path}:{n}: expected {{"id": string, "correct": true|false}}, found {line.strip()[:60]}'
                )
            out[rec["id"]] = rec["correct"]
    return out


def run_mrben(config: MrBenConfig) -> StepBenchResult:
    """``prmkit eval mrben``: the fields are documented on :class:`~prmkit.evaluation.config.MrBenConfig`."""
    verdicts = read_verdicts(config.reason_verdicts) if config.reason_verdicts else None
    return run_stepbench(config, GOLD_SOURCES, lambda rows: evaluate_mrben(rows, verdicts), headline)

"""Audits of what the step scores follow: process collapse and lucky answers.

Process collapse: a PRM trained on outcome-derived labels can learn to score *answers* rather than
*steps*. Gold step validity and final-answer correctness disagree on exactly two kinds of step, and
those decide it:

- valid steps of wrong-answer traces (the steps before the first error): a process PRM scores them
  high, a collapsed one low;
- the wrong step of right-answer ("lucky") traces: a process PRM scores it low, a collapsed one high.

*Process fidelity* is the AUC of the step score separating the first kind (positive) from the second
(negative): 1.0 = follows the process, 0.0 = follows the outcome, 0.5 = neither. A bootstrap band
(steps of both groups resampled) decides the verdict: ``collapsed`` when the whole band lies below 0.5
— an ORM, whose score is the same for every step of a trace, must come out so — ``process`` when it
lies above, ``undecided`` when it straddles 0.5 (too few disagreeing steps, or scores that barely
move, as an untrained model's do). Steps after the first error are left out: their validity differs between the
local and prefix gold views.

Lucky answers: right answers reached by a wrong process. The share of right-answer traces with a gold
wrong step, and how many of them the PRM catches (predicts some first error; predicts the exact one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from prmkit.core.model import Trace
from prmkit.core.stats import auc, percentile_band
from prmkit.evaluation.gold import check_lengths, has_gold, outcome, trace_correct

GROUPS = (
    "valid step | right answer",
    "valid step | wrong answer",
    "wrong step | right answer",
    "wrong step | wrong answer",
)


def rank_auc(pos: Sequence[float], neg: Sequence[float]) -> float | None:
    """P(score of a positive > score of a negative), ties counting half (:func:`prmkit.core.stats.auc`);
    None when a group is empty."""
    return auc(pos, neg) if len(pos) and len(neg) else None


def step_groups(
    traces: Sequence[Trace], scores: Sequence[Sequence[float]], source: str = "gold"
) -> dict[str, list[float]]:
    """Step scores split by gold validity (up to the first error) and by the trace's outcome."""
    groups: dict[str, list[float]] = {g: [] for g in GROUPS}
    for trace, row in zip(traces, scores, strict=True):
        right = outcome(trace)
        if right is None or not has_gold(trace, source):
            continue  # nothing to compare against
        fe = trace.first_error(source)
        answer = "right answer" if right else "wrong answer"
        stop = len(row) if fe == -1 else fe
        groups[f"valid step | {answer}"].extend(float(s) for s in row[:stop])
        if fe != -1:
            groups[f"wrong step | {answer}"].append(float(row[fe]))
    return groups


def fidelity_band(
    pos: Sequence[float], neg: Sequence[float], bootstrap: int = 500, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap band of :func:`rank_auc`, resampling each group with replacement."""
    if not len(pos) or not len(neg):
        return None
    rng = np.random.default_rng(seed)
    p, n = np.asarray(pos, float), np.asarray(neg, float)
    return percentile_band(
        [auc(rng.choice(p, len(p)), rng.choice(n, len(n))) for _ in range(bootstrap)], confidence
    )


def process_collapse(
    traces: Sequence[Trace],
    scores: Sequence[Sequence[float]],
    source: str = "gold",
    bootstrap: int = 500,
    seed: int = 0,
) -> dict[str, Any]:
    """Process fidelity on the steps where validity and outcome disagree; see the module docstring."""
    check_lengths(traces, scores)
    g = step_groups(traces, scores, source)
    valid = g[GROUPS[0]] + g[GROUPS[1]]
    wrong = g[GROUPS[2]] + g[GROUPS[3]]
    right_answer = g[GROUPS[0]] + g[GROUPS[2]]
    wrong_answer = g[GROUPS[1]] + g[GROUPS[3]]
    fidelity = rank_auc(g[GROUPS[1]], g[GROUPS[2]])
    band = fidelity_band(g[GROUPS[1]], g[GROUPS[2]], bootstrap, seed=seed)
    verdict = (
        None
        if band is None
        else "collapsed"
        if band[1] < 0.5
        else "process"
        if band[0] > 0.5
        else "undecided"
    )
    return {
        "process_fidelity": _round(fidelity),
        "fidelity_band": None if band is None else [round(band[0], 6), round(band[1], 6)],
        "verdict": verdict,
        "collapsed": None if verdict is None else verdict == "collapsed",
        "auc_validity": _round(rank_auc(valid, wrong)),
        "auc_outcome": _round(rank_auc(right_answer, wrong_answer)),
        "mean_score": {k: _round(float(np.mean(v)) if v else None) for k, v in g.items()},
        "steps": {k: len(v) for k, v in g.items()},
    }


def lucky_answers(
    traces: Sequence[Trace], scores: Sequence[Sequence[float]], threshold: float = 0.5, source: str = "gold"
) -> dict[str, Any]:
    """How common right-answer-wrong-process traces are, and how many the PRM catches at ``threshold``."""
    check_lengths(traces, scores)
    right_valid = lucky = flagged = exact = false_alarm = 0
    for trace, row in zip(traces, scores, strict=True):
        if not trace_correct(trace):
            continue
        fe = trace.first_error(source)
        pred = next((i for i, s in enumerate(row) if s < threshold), -1)
        if fe == -1:
            right_valid += 1
            false_alarm += pred != -1
        else:
            lucky += 1
            flagged += pred != -1
            exact += pred == fe
    right = right_valid + lucky
    return {
        "threshold": threshold,
        "right_answers": right,
        "right_valid": right_valid,
        "lucky": lucky,
        "lucky_share": round(lucky / right, 6) if right else 0.0,
        "lucky_flagged": flagged,
        "lucky_exact": exact,
        "catch_rate": round(flagged / lucky, 6) if lucky else None,
        "exact_rate": round(exact / lucky, 6) if lucky else None,
        "false_alarm_rate": round(false_alarm / right_valid, 6) if right_valid else None,
    }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)

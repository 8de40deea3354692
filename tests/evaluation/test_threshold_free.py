"""Threshold-free first-error metrics beside F1: step-level AUROC / AUPRC and F1 at a subset's own best
threshold, so "verifies worse" reads apart from "the tuned threshold did not transfer"."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from prmkit.core.model import Problem, Step
from prmkit.core.protocols import JudgeVerdict
from prmkit.evaluation.processbench import (
    auroc,
    average_precision,
    evaluate_first_error,
    first_error_ranking,
    first_error_steps,
    predict,
    predicted_first_error,
    subset_metrics,
)

from .test_processbench import ListScorer
from .worldlike import make_trace


def _traces():
    """Four traces: error-free, first error at 1, at 0, at 2 (problem ids q0..q3)."""
    return [
        make_trace("q0", "t0", 3, -1, True),
        make_trace("q1", "t1", 4, 1, False),
        make_trace("q2", "t2", 3, 0, False),
        make_trace("q3", "t3", 3, 2, False),
    ]


SCORES = {
    "t0": [0.9, 0.8, 0.7],  # wrong-scores 0.1 0.2 0.3, all negative
    "t1": [0.6, 0.3, 0.1, 0.95],  # 0.4 negative, 0.7 positive; steps 2, 3 left out
    "t2": [0.75, 0.2, 0.2],  # 0.25 positive; steps 1, 2 left out
    "t3": [0.5, 0.75, 0.65],  # 0.5 and 0.25 negative (0.25 ties t2's positive), 0.35 positive
}


def test_auroc_and_auprc_equal_hand_computed_values():
    result = evaluate_first_error({"s": _traces()}, ListScorer(SCORES), threshold=0.5)
    s = result.subsets[0]
    # negatives 0.1 0.2 0.3 0.4 0.5 0.25; positives 0.7 0.25 0.35.
    # pairs won: 0.7 beats 6; 0.25 beats 0.1 0.2 and ties 0.25 (half): 2.5; 0.35 beats 4 -> 12.5 / 18
    assert s.auroc == pytest.approx(12.5 / 18)
    # by descending score: 0.7 (P) -> precision 1, recall 1/3; 0.35 (4th) -> 2/4, 2/3;
    # 0.25 (the tied P and N, 6th and 7th) -> 3/7, 1. AP = (1 + 1/2 + 3/7) / 3 = 9/14
    assert s.auprc == pytest.approx(9 / 14)
    assert (result.auroc, result.auprc) == (s.auroc, s.auprc)  # one subset: the mean is itself


def test_steps_after_the_first_error_change_nothing():
    before = evaluate_first_error({"s": _traces()}, ListScorer(SCORES), threshold=0.5).subsets[0]
    moved = dict(SCORES, t1=[0.6, 0.3, 0.99, 0.0], t2=[0.75, 0.01, 0.999])
    after = evaluate_first_error({"s": _traces()}, ListScorer(moved), threshold=0.5).subsets[0]
    assert (after.auroc, after.auprc) == (before.auroc, before.auprc)
    # ... whereas the step before t1's first error is ranked: raising its wrong-score above the
    # positive 0.25 of t2 and 0.35 of t3 changes the AUROC
    worse = evaluate_first_error(
        {"s": _traces()}, ListScorer(dict(SCORES, t1=[0.05, 0.3, 0.1, 0.95])), threshold=0.5
    ).subsets[0]
    assert worse.auroc == pytest.approx(11.5 / 18)


def test_unscored_steps_are_left_out_and_one_sided_subsets_have_none():
    wrong, positive = first_error_steps([[0.9, 0.8], [0.7, 0.2, 0.1]], [3, 1])
    assert wrong.tolist() == pytest.approx([0.1, 0.2, 0.3, 0.8])  # first row cut before its error at 3
    assert positive.tolist() == [False, False, False, True]
    assert first_error_ranking([[0.9, 0.8], [0.7]], [-1, -1]) == (None, None)  # no positive step
    assert first_error_ranking([[0.2], [0.1]], [0, 0]) == (None, None)  # no negative step
    ok_only = [make_trace("o", f"o{i}", 3, -1, True) for i in range(2)]
    result = evaluate_first_error(
        {"s": _traces(), "ok": ok_only}, ListScorer(SCORES | {"o0": [0.9] * 3, "o1": [0.8] * 3}), 0.5
    )
    by = {s.name: s for s in result.subsets}
    assert by["ok"].auroc is None and by["ok"].f1_own_best is None and by["ok"].own_best_threshold is None
    assert result.auroc == by["s"].auroc  # the headline means the subsets that have a value


def test_auroc_and_average_precision_against_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(2, 30))
        score = np.round(rng.random(n), 1)  # coarse: many ties
        positive = rng.random(n) < 0.3
        positive[0], positive[1] = True, False
        pos, neg = score[positive], score[~positive]
        pairs = [1.0 if p > q else 0.5 if p == q else 0.0 for p, q in itertools.product(pos, neg)]
        assert auroc(score, positive) == pytest.approx(np.mean(pairs))
        ap, recall_before = 0.0, 0.0
        for t in sorted(set(score), reverse=True):  # scikit-learn: one point per distinct threshold
            flagged = score >= t
            recall = (flagged & positive).sum() / positive.sum()
            ap += (recall - recall_before) * (flagged & positive).sum() / flagged.sum()
            recall_before = recall
        assert average_precision(score, positive) == pytest.approx(ap)


def _ranked(traces, valid: float, error: float) -> dict[str, list[float]]:
    """A perfect ranking: every right step ``valid``, the first error ``error`` (< valid), later steps 0."""
    out = {}
    for t in traces:
        fe = t.first_error("gold")
        out[t.id] = [valid if fe == -1 or i < fe else error if i == fe else 0.0 for i in range(len(t.steps))]
    return out


def test_threshold_transfer_reads_apart_from_verification():
    """Dev traces score low (right 0.45, error 0.2), held-out ones high (right 0.9, error 0.6): the
    ranking is perfect on both, but the threshold tuned on dev finds no held-out error."""
    dev = [make_trace(f"d{i}", f"d{i}", 4, fe, fe == -1) for i, fe in enumerate([-1, 0, 2, -1, 3, 1])]
    held = [make_trace(f"h{i}", f"h{i}", 8, fe, fe == -1) for i, fe in enumerate([-1, 5, 7, -1, 2, 6])]
    scorer = ListScorer(_ranked(dev, 0.45, 0.2) | _ranked(held, 0.9, 0.6))
    result = evaluate_first_error({"heldout": held}, scorer, dev={"dev": dev})
    s = result.subsets[0]
    assert result.threshold_from == "dev" and 0.2 < result.threshold <= 0.45
    assert s.acc_error == 0.0 and s.f1 == 0.0  # at the transferred threshold: every error missed
    assert s.auroc == 1.0 and s.auprc == 1.0  # ... yet the ranking is perfect
    assert s.f1_own_best == 1.0 and 0.6 < s.own_best_threshold <= 0.9
    assert result.f1_own_best == 1.0 and result.auroc == 1.0
    table = result.table()
    assert "| AUROC | AUPRC | F1 at own best threshold |" in table
    assert "the gap is threshold transfer, not verification" in table
    assert "| 0.0 | 100.0 | 100.0 | 100.0 (at " in table


def test_own_best_f1_is_an_upper_bound_of_the_transferred_f1():
    rng = np.random.default_rng(5)
    for _ in range(10):
        traces = [
            make_trace("p", f"r{i}", n, int(rng.integers(-1, n)), True)
            for i, n in enumerate(rng.integers(1, 7, size=25))
        ]
        table = {t.id: [float(x) for x in rng.random(len(t.steps))] for t in traces}
        threshold = float(rng.random())
        result = evaluate_first_error({"r": traces}, ListScorer(table), threshold=threshold)
        s = result.subsets[0]
        if s.f1 is None:
            continue
        assert s.f1_own_best >= s.f1
        gold = [t.first_error("gold") for t in traces]  # the recorded threshold gives the recorded F1
        at_own = [predicted_first_error(table[t.id], s.own_best_threshold) for t in traces]
        assert subset_metrics("r", gold, at_own).f1 == pytest.approx(s.f1_own_best)


def test_judge_and_label_source_leave_the_new_fields_none():
    traces = _traces()

    class ExactJudge:
        name = "exact"

        def judge(self, problem: Problem, steps: list[Step]) -> JudgeVerdict:
            trace = next(t for t in traces if t.problem.id == problem.id)
            fe = trace.first_error("gold")
            return JudgeVerdict(ratings=[None] * len(steps), first_error=-1 if fe == 2 else fe)

    for predictor in (ExactJudge(), "gold:world:prefix"):
        result = evaluate_first_error({"s": traces}, predictor)
        s = result.subsets[0]
        assert (s.auroc, s.auprc, s.f1_own_best, s.own_best_threshold) == (None,) * 4
        assert (result.auroc, result.auprc, result.f1_own_best) == (None,) * 3
        assert all("scores" not in p for p in result.predictions)
        assert [p["problem"] for p in result.predictions] == ["q0", "q1", "q2", "q3"]
        assert "AUROC" not in result.table() and "own best" not in result.table()
        predicted = [p["predicted"] for p in result.predictions]
        gold = [t.first_error("gold") for t in traces]
        same = subset_metrics("s", gold, predicted)  # everything else as subset_metrics computes it
        assert (s.acc_error, s.acc_correct, s.f1) == (same.acc_error, same.acc_correct, same.f1)
    assert evaluate_first_error({"s": traces}, "gold:world:prefix").f1 == 1.0
    judged = evaluate_first_error({"s": traces}, ExactJudge()).subsets[0]
    assert (judged.acc_error, judged.acc_correct) == (2 / 3, 1.0)


def test_predictions_carry_problem_ids_and_step_scores(tmp_path):
    traces = [*_traces(), make_trace("q4", "cut", 5, 3, False)]
    table = SCORES | {"cut": [0.912345678, 0.8]}  # a row cut as overlong: 2 of 5 steps scored
    scorer = ListScorer(table)
    result = evaluate_first_error({"s": traces}, scorer, threshold=0.5)
    by = {p["id"]: p for p in result.predictions}
    assert [p["problem"] for p in result.predictions] == ["q0", "q1", "q2", "q3", "q4"]
    assert by["t1"]["scores"] == SCORES["t1"]
    assert by["cut"]["scores"] == [0.912346, 0.8] and by["cut"]["status"] == "overlong"
    # the cut row adds two negatives (wrong-scores 0.087654 and 0.2) and no positive
    assert result.subsets[0].auroc == pytest.approx((8 + 4.5 + 6) / (3 * 8))
    # the thresholded predictions are what predict() gives, unchanged
    assert [(p["predicted"], p["status"]) for p in result.predictions] == predict({"s": traces}, scorer, 0.5)[
        "s"
    ]
    result.write(tmp_path)
    rows = [json.loads(line) for line in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert rows[1]["problem"] == "q1" and rows[1]["scores"] == SCORES["t1"]
    wrong, positive = first_error_steps([r["scores"] for r in rows], [r["gold"] for r in rows])
    assert auroc(wrong, positive) == result.subsets[0].auroc  # recomputable from the file
    saved = json.loads((tmp_path / "processbench.json").read_text())
    assert saved["auroc"] == result.auroc and saved["subsets"][0]["own_best_threshold"] is not None


def test_summary_rows_and_card_table_show_auroc_beside_f1():
    from prmkit.cards.render import _fe_table
    from prmkit.pipeline.summary import _first_error_rows

    result = evaluate_first_error({"s": _traces()}, ListScorer(SCORES), threshold=0.5)
    fe = result.to_dict()
    row = _first_error_rows({"prm": {"summary": {"first_error": fe}}})[0]
    s = result.subsets[0]
    assert row["AUROC s"] == f"{100 * s.auroc:.1f}" == "69.4"
    assert row["F1 own-best s"] == f"{100 * s.f1_own_best:.1f}"
    assert list(row).index("AUROC s") == list(row).index("F1 s") + 1
    assert row["F1 (mean of subsets)"] == f"{100 * result.f1:.1f}"
    old = json.loads(json.dumps(fe))  # an evaluation written before the new fields: "–"
    for sub in old["subsets"]:
        del sub["auroc"], sub["f1_own_best"]
    assert _first_error_rows({"prm": {"summary": {"first_error": old}}})[0]["AUROC s"] == "–"
    card = _fe_table(fe)
    assert "| AUROC | F1 at own best threshold |" in card and "| 69.4 |" in card
    assert "threshold transfer, not verification" in card
    assert "AUROC" not in _fe_table(old)

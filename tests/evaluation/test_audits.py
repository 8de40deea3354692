"""The audits on constructed scores: one set behaves like a PRM (follows gold step validity), one like
an ORM (one outcome score broadcast to every step). The audits must tell them apart."""

from __future__ import annotations

import json

import numpy as np
import pytest

from prmkit.evaluation.audits import audit_scores, summary
from prmkit.evaluation.calibration import calibration, length_bias, reliability_bins
from prmkit.evaluation.collapse import lucky_answers, process_collapse, rank_auc
from prmkit.evaluation.gaming import gaming_from_selections, min_on_final, outcome_shift, verifier_gaming

from .worldlike import make_trace, orm_like, prm_like


def test_rank_auc_hand_computed():
    assert rank_auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert rank_auc([0.1], [0.9]) == 0.0
    assert rank_auc([0.5, 0.9], [0.5]) == 0.75  # a tie counts half
    assert rank_auc([], [0.3]) is None


def test_collapse_tells_prm_from_orm(world_traces):
    prm = process_collapse(world_traces, prm_like(world_traces))
    orm = process_collapse(world_traces, orm_like(world_traces))
    assert prm["collapsed"] is False and prm["process_fidelity"] > 0.9 and prm["verdict"] == "process"
    assert orm["collapsed"] is True and orm["process_fidelity"] < 0.1 and orm["verdict"] == "collapsed"
    assert orm["fidelity_band"][1] < 0.5 < prm["fidelity_band"][0]
    assert orm["auc_outcome"] > 0.9 and prm["auc_validity"] > 0.9
    assert all(n > 0 for n in prm["steps"].values())


def test_collapse_undecided_for_an_uninformative_scorer(world_traces):
    rng = np.random.default_rng(5)  # scores that barely move and follow nothing, like an untrained model's
    flat = [list(0.8 + 1e-4 * rng.random(len(t.steps))) for t in world_traces]
    r = process_collapse(world_traces, flat)
    assert r["verdict"] == "undecided" and r["collapsed"] is False
    assert r["fidelity_band"][0] < 0.5 < r["fidelity_band"][1]


def test_lucky_answers_hand_computed():
    traces = [
        make_trace("p", "ok", 3, -1, True),
        make_trace("p", "lucky-caught", 3, 1, True),
        make_trace("p", "lucky-late", 3, 0, True),
        make_trace("p", "wrong", 3, 1, False),
    ]
    scores = [[0.9, 0.9, 0.4], [0.9, 0.1, 0.9], [0.9, 0.2, 0.9], [0.9, 0.1, 0.1]]
    r = lucky_answers(traces, scores, threshold=0.5)
    assert (r["right_answers"], r["lucky"], r["lucky_flagged"], r["lucky_exact"]) == (3, 2, 2, 1)
    assert r["lucky_share"] == pytest.approx(2 / 3) and r["false_alarm_rate"] == 1.0


def test_outcome_shift_and_gaming(world_traces):
    assert np.array_equal(
        min_on_final([[0.9, 0.1], [0.1, 0.9], [0.5, 0.5], [0.3]]), [1.0, 0.0, 0.0, np.nan], equal_nan=True
    )
    orm = outcome_shift(world_traces, orm_like(world_traces))
    assert orm["share_all"] == 0.0  # equal scores: argmin is the first step
    prm_scores = prm_like(world_traces)
    g = verifier_gaming(world_traces, prm_scores, max_n=16)
    assert [r["n"] for r in g["rows"]] == [1, 2, 4, 8, 16]
    assert g["rows"][-1]["gold_valid"] > g["rows"][0]["gold_valid"]  # selection finds valid traces
    o = verifier_gaming(world_traces, orm_like(world_traces), max_n=16)
    assert o["gap_at_max"] > g["gap_at_max"] + 0.1  # the ORM's picks include lucky traces: a Goodhart gap
    sel = gaming_from_selections(
        [(1, world_traces[:10], prm_scores[:10]), (4, world_traces[10:20], prm_scores[10:20])]
    )
    assert [r["pressure"] for r in sel["rows"]] == [1, 4]


def test_calibration_and_length_hand_computed():
    bins, ece = reliability_bins(np.array([0.05, 0.15, 0.95, 0.95]), np.array([0.0, 1.0, 1.0, 1.0]), bins=10)
    assert bins[0]["count"] == 1 and bins[9]["count"] == 2
    assert ece == pytest.approx((0.05 + 0.85 + 2 * 0.05) / 4)
    traces = [make_trace("p", f"t{n}", n, -1, True) for n in (2, 3, 4, 5)]
    scores = [[0.9] * n for n in (2, 3, 4, 5)]
    assert calibration(traces, scores)["views"]["local"]["ece"] == pytest.approx(0.1)
    lb = length_bias(traces, scores, aggregation="prod")
    assert lb["score_slope_valid_only"] < 0 and lb["gold_valid_slope"] == 0.0  # prod falls with length


def test_run_audits_writes_json_and_plots(world_traces, tmp_path):
    report = audit_scores(
        world_traces, orm_like(world_traces), max_n=8, draws=4, out_dir=tmp_path, scorer_name="orm"
    )
    saved = json.loads((tmp_path / "audit.json").read_text())
    assert set(saved["plots"]) == {"gaming", "shift", "collapse", "lucky", "calibration", "length"}
    for name in saved["plots"].values():
        assert (tmp_path / name).stat().st_size > 5000
    s = summary(report)
    assert s["collapsed"] is True and None not in (s["ece_local"], s["lucky_share"], s["gaming_gap_at_max_n"])

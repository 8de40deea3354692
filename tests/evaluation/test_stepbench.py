"""MR-Ben against numbers of its official scoring code; BBM, DeltaBench and Hard2Verify by hand; compare and CLI."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.evaluation import bbm, deltabench, hard2verify, mrben
from prmkit.evaluation.processbench import load_sets
from prmkit.evaluation.stepbench import Row, balanced, compare, gold_rows, zscore_flags, zscore_rule

DATA = Path(__file__).parents[1] / "data"


def _predicted(seed: int, folder: Path = DATA / "mrben") -> tuple[list[Row], dict[str, bool]]:
    """MR-Ben gold (the files of ``folder``) with seeded predictions: a gold-hitting, a random or no first
    error per trace, and a seeded reason verdict per trace. The local script that computed EXPECTED with
    the official code (outside the repository) imports this very function, so both see these predictions."""
    rng = random.Random(seed)
    rows = gold_rows(load_sets(sorted(folder.glob("*.json"))), "human:mrben")
    for r in rows:
        n, kind = len(r.gold), rng.random()
        first = r.gold_first if kind < 0.4 else rng.randrange(-1, n) if kind < 0.9 else None
        r.predicted = (
            [None] * n
            if first is None
            else [1] * n
            if first == -1
            else [1] * first + [-1] + [1] * (n - first - 1)
        )
        r.status = "unlabelled" if first is None else "ok"
    return rows, {r.id: rng.random() < 0.5 for r in rows}


# Computed by MR-Ben's official get_mr_score (dvlab-research/Mr-Ben at commit
# 6eb1eca8861be411838c7c1c189dba208c140e06; through its calculate_mr_score) on these fixtures
# (tests/data/mrben) and predictions (_predicted, seeds 0-11); not computed by prmkit. Per seed, the
# MR-Score of each subject without ("prm") and with ("full") the seeded reason verdicts; None where the
# official code raised ZeroDivisionError (its t1-precision when nothing is called correct). Regenerated
# by a local script kept outside the repository beside a copy of the official code (make_expected_mrben.py).
EXPECTED: dict[int, dict[str, dict[str, float] | None]] = {
    0: {
        "prm": {"biology": 0.09999999999999999, "coding": 0.11000000000000001, "math": 0.20149110640673518},
        "full": {"biology": 0.26666666666666666, "coding": 0.27, "math": 0.3264911064067352},
    },
    1: {
        "prm": None,
        "full": None,
    },
    2: {
        "prm": {"biology": 0.16666666666666666, "coding": 0.07905694150420949, "math": 0.2914213562373095},
        "full": {"biology": 0.3333333333333333, "coding": 0.5590569415042095, "math": 0.4164213562373095},
    },
    3: {
        "prm": {"biology": 0.16666666666666666, "coding": 0.11000000000000001, "math": 0.425},
        "full": {"biology": 0.3333333333333333, "coding": 0.43000000000000005, "math": 0.55},
    },
    4: {
        "prm": {"biology": 0.4414213562373095, "coding": 0.0632455532033676, "math": 0.425},
        "full": {"biology": 0.7747546895706428, "coding": 0.22324555320336759, "math": 0.8},
    },
    5: {
        "prm": None,
        "full": None,
    },
    6: {
        "prm": {"biology": 0.3, "coding": 0.011952286093343936, "math": 0.22499999999999998},
        "full": {"biology": 0.3, "coding": 0.17195228609334395, "math": 0.475},
    },
    7: {
        "prm": {"biology": 0.3414213562373095, "coding": 0.0, "math": 0.42649110640673515},
        "full": {"biology": 0.3414213562373095, "coding": 0.32, "math": 0.6764911064067352},
    },
    8: {
        "prm": {"biology": 0.26666666666666666, "coding": 0.11000000000000001, "math": 0.2764911064067352},
        "full": {"biology": 0.43333333333333335, "coding": 0.43000000000000005, "math": 0.2764911064067352},
    },
    9: {
        "prm": {"biology": 0.2894427190999916, "coding": 0.020000000000000004, "math": 0.15},
        "full": {"biology": 0.45610938576665827, "coding": 0.34, "math": 0.275},
    },
    10: {
        "prm": {"biology": 0.09999999999999999, "coding": 0.0, "math": 0.2},
        "full": {"biology": 0.26666666666666666, "coding": 0.0, "math": 0.45},
    },
    11: {
        "prm": {"biology": 0.2894427190999916, "coding": 0.011952286093343936, "math": 0.2},
        "full": {"biology": 0.6227760524333249, "coding": 0.33195228609334393, "math": 0.325},
    },
}


@pytest.mark.parametrize("with_verdicts", [False, True])
def test_mrben_equals_the_official_code_on_the_fixtures(with_verdicts):
    mode = "full" if with_verdicts else "prm"
    assert sorted(EXPECTED) == list(range(12))
    compared = 0
    for seed, expected in EXPECTED.items():
        rows, verdicts = _predicted(seed)
        verdicts = verdicts if with_verdicts else None
        result = mrben.evaluate_mrben(rows, verdicts)
        key = "mr_score" if with_verdicts else "mr_score_prm"
        got = {g["name"]: g[key] for g in result.groups}
        if expected[mode] is None:  # upstream divides by zero; prmkit still answers
            assert all(np.isfinite(v) for v in got.values()) and np.isfinite(result.headline)
            continue
        compared += 1
        assert got == pytest.approx(expected[mode], abs=1e-12, rel=0)
        assert result.headline == pytest.approx(sum(expected[mode].values()) / 3, abs=1e-12, rel=0)
        if not with_verdicts:
            assert mrben.headline(rows, np.ones((1, len(rows))))[0] == pytest.approx(
                result.headline, abs=1e-12
            )
    assert compared >= 8


def test_bbm_location_accuracy_by_hand():
    rows = [
        Row("a", "t", "a", [1, -1, None], [1, -1, 1]),  # hit
        Row("b", "t", "b", [-1, None], [1, 1]),  # miss (nothing flagged)
        Row("c", "t", "c", [1, 1], [1, 1]),  # clean, nothing flagged: counts only in location_acc_all
        Row("d", "t", "d", [1, 1], [-1, 1]),  # clean, flagged
    ]
    result = bbm.evaluate_bbm(rows)
    assert result.headline == 0.5 and result.overall["location_acc_all"] == 0.5
    assert bbm.headline(rows, np.array([[1, 1, 1, 1], [2, 0, 1, 1]]))[1] == 1.0


def test_deltabench_parse_output_rules_and_zscore_by_hand():
    # gold sections {2, 4}; predicted {2, 3, 5}: 5 is after the last gold error and is dropped (parse_output)
    row = Row("x", "Math", "x", [1, -1, 1, -1, 1], [1, -1, -1, 1, -1])
    clean = Row("y", "Math", "y", [1, 1], [-1, 1])  # no gold error: left out, as upstream's max([]) does
    result = deltabench.evaluate_deltabench([row, clean])
    p, r = 1 / 2, 1 / 2
    assert result.overall["precision_macro"] == p and result.overall["recall_macro"] == r
    assert result.headline == pytest.approx(2 * p * r / (p + r)) and result.overall["no_gold_error"] == 1
    scores = [0.9, 0.8, 0.1, 0.85, 0.9]  # mean 0.71, population std 0.3056: only 0.1 < 0.71 − 1·0.3056
    assert zscore_flags(scores, 1.0) == [False, False, True, False, False]
    assert zscore_rule(1.0)(scores) == [1, 1, -1, 1, 1]
    assert zscore_flags([0.5, 0.5], 1.0) == [False, False]  # equal scores flag nothing
    assert zscore_flags([0.0, 1.0], 1.0, ddof=1) == [False, False]  # sample std 0.707: 0 is not below −0.207


def test_hard2verify_balanced_metrics_by_hand():
    rows = [
        Row("a", "s", "a", [1, 1, -1, -1], [1, -1, -1, 1]),  # steps: tp 1/2, tn 1/2; first error 1 vs gold 2
        Row("b", "s", "b", [1, 1], [1, 1]),  # correct response, nothing flagged
    ]
    result = hard2verify.evaluate_hard2verify(rows)
    o = result.overall
    assert (o["step_tpr"], o["step_tnr"]) == (0.75, 0.5)
    assert o["step_balanced_f1"] == pytest.approx(2 * 0.75 * 0.5 / 1.25) == result.headline
    assert (
        o["response_balanced_acc"] == 1.0
        and o["errorid_balanced_acc"] == 0.5
        and o["errorid_balanced_f1"] == 0
    )
    assert balanced(0, 0, 1, 1)["balanced_f1"] is None
    assert hard2verify.headline(rows, np.ones((1, 2)))[0] == pytest.approx(result.headline)


def test_compare_is_zero_for_the_same_predictions_and_signed_otherwise():
    rows, _ = _predicted(0)
    same = compare(mrben.headline, rows, rows, resamples=50)
    assert same.mean == 0 and same.low == 0 == same.high
    worse, _ = _predicted(1)
    est = compare(mrben.headline, rows, worse, resamples=50)
    assert est.mean == pytest.approx(
        mrben.headline(rows, np.ones((1, len(rows))))[0] - mrben.headline(worse, np.ones((1, len(rows))))[0]
    )


def test_cli_writes_predictions_that_score_again_and_compare(tmp_path):
    files = [str(p) for p in sorted((DATA / "bbm").glob("*.jsonl"))]
    runner = CliRunner()
    out = runner.invoke(app, ["eval", "bbm", *files, "--source", "human:bbm", "-o", str(tmp_path / "a")])
    assert out.exit_code == 0, out.output
    assert json.loads((tmp_path / "a" / "bbm.json").read_text())["headline"] == 1.0
    pred = tmp_path / "a" / "predictions.jsonl"
    again = runner.invoke(app, ["eval", "bbm", *files, "--predictions", str(pred), "--compare", str(pred)])
    assert again.exit_code == 0, again.output
    assert "difference: 0.00 [0.00, 0.00]" in again.output

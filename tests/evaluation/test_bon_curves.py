from __future__ import annotations

import csv

import numpy as np
import pytest

from prmkit.evaluation import plots
from prmkit.evaluation.bon_curves import bon_curves, build_pools, default_ns, pool_accuracies

from .worldlike import make_trace, orm_like, prm_like


def test_default_ns_is_a_log_scale():
    assert default_ns(256) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert default_ns(24) == [1, 2, 4, 8, 16, 24]


def test_selection_on_a_hand_built_pool():
    # 4 candidates: answers 1 (right), 2, 2, none. PRM prefers the right one; majority says 2.
    traces = [
        make_trace("p", "a", 2, -1, True),
        make_trace("p", "b", 2, 0, False),
        make_trace("p", "c", 2, 1, False),
    ]
    traces[1].final_answer = traces[2].final_answer = "2"
    traces.append(make_trace("p", "d", 2, 0, False))
    traces[3].final_answer = None
    prm = [[0.9, 0.9], [0.1, 0.2], [0.8, 0.3], [0.2, 0.2]]
    pool = build_pools(traces, {"prm:min": np.array([min(s) for s in prm])})[0]
    rng = np.random.default_rng(0)
    methods = ["oracle", "majority", "prm:min", "weighted:min"]
    full = dict(zip(methods, pool_accuracies(pool, methods, 4, 8, rng), strict=True))
    assert full == {"oracle": 1.0, "majority": 0.0, "prm:min": 1.0, "weighted:min": 1.0}  # 0.9 > 0.1 + 0.3
    one = pool_accuracies(pool, methods, 1, 4000, rng)
    assert one[0] == one[1] == one[2] == one[3]  # same subsets for all methods at N = 1
    assert one[0] == pytest.approx(0.25, abs=0.03)


def test_curves_bands_and_gaps(world_traces, tmp_path):
    result = bon_curves(world_traces, prm_like(world_traces), orm_like(world_traces), bootstrap=300)
    assert result.methods() == [
        "oracle",
        "majority",
        "prm:min",
        "prm:prod",
        "prm:last",
        "prm:mean",
        "weighted:min",
        "orm",
    ]
    assert [r["n"] for r in result.curve("oracle")] == [1, 2, 4, 8, 16, 32]
    for r in result.rows:
        assert r["lo"] <= r["accuracy"] <= r["hi"]
        assert r["gap_lo"] <= r["gap_vs_majority"] <= r["gap_hi"]
    at1 = {m: result.at(m, 1)["accuracy"] for m in result.methods()}
    assert len(set(at1.values())) == 1  # N = 1 is one random sample, whatever the method
    oracle = [r["accuracy"] for r in result.curve("oracle")]
    assert oracle == sorted(oracle)  # pass@N never falls
    # a PRM that sees the process beats majority vote at N = 8, and the band says so
    gap = result.at("prm:min", 8)
    assert gap["gap_lo"] > 0
    path = result.write_csv(tmp_path / "bon.csv")
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == len(result.rows) and set(rows[0]) >= {
        "method",
        "n",
        "accuracy",
        "lo",
        "hi",
        "gap_vs_majority",
    }
    png = plots.bon_curves(result.rows, tmp_path / "bon.png")
    assert png.stat().st_size > 5000


def test_pool_size_caps_n():
    traces = [make_trace(f"p{p}", f"p{p}-{k}", 3, -1, True) for p in range(3) for k in range(5)]
    result = bon_curves(traces, max_n=256, bootstrap=50)
    assert result.methods() == ["oracle", "majority"]
    assert [r["n"] for r in result.curve("majority")] == [1, 2, 4, 5]

from __future__ import annotations

import pytest

from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.labeling.report import label_report, plot_report


def _trace(gold: list[int], other: list[int | None], scores: list[float] | None = None) -> Trace:
    steps = []
    for i, g in enumerate(gold):
        labels = [Label(rating=g, provenance=Provenance(method="gold", actor="world:local"))]
        if other[i] is not None:
            labels.append(Label(rating=other[i], provenance=Provenance(method="judge", actor="j")))
        if scores is not None:
            labels.append(Label(score=scores[i], provenance=Provenance(method="mc_soft", actor="w")))
        steps.append(Step(text=f"s{i}", labels=labels))
    return Trace(
        id=f"t{len(gold)}{other}",
        problem=Problem(id="p", text="?", answer="1"),
        steps=steps,
        metadata={"rollouts": {"mc": 6}},
    )


def test_metrics_by_hand():
    traces = [
        _trace([1, -1, 1], [1, -1, None], [0.9, 0.2, 0.1]),  # first error found; step TP
        _trace([1, 1, 1], [1, -1, None], [0.8, 0.7, 0.6]),  # false alarm at step 1
        _trace([1, 1, -1], [1, 1, 1], [1.0, 0.9, 0.1]),  # miss at step 2
        _trace([1, 1], [None, None]),  # not labelled by the judge (not kept)
    ]
    rep = label_report(traces, reference="gold")
    judge = rep["sources"]["judge:j"]
    assert judge["step_error"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "tp": 1, "fp": 1, "fn": 1}
    fe = judge["first_error"]
    assert (fe["accuracy"], fe["acc_error"], fe["acc_correct"], fe["traces"]) == (
        pytest.approx(1 / 3, abs=1e-4),
        0.5,
        0.0,
        3,
    )
    assert judge["data_kept"] == 0.75 and judge["traces_labelled"] == 3
    soft = rep["sources"]["mc_soft:w"]
    assert soft["rollouts_per_trace"] == 6
    cal = soft["calibration"]
    assert cal["steps"] == 9 and 0 <= cal["ece"] <= 1
    assert sum(row["count"] for row in cal["bins"]) == 9


def test_plot_is_a_png(tmp_path):
    rep = label_report([_trace([1, -1], [1, -1], [0.9, 0.1])], reference="gold")
    plot_report(rep, tmp_path / "r.png")
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

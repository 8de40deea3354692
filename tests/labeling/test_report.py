from __future__ import annotations

import pytest

from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.labeling.report import calibration, label_report, plot_report


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


def _soft_trace(i: int, gold: list[float], judge: list[float | None]) -> Trace:
    """A trace whose reference (gold) is soft, so the threshold decides its verdicts."""
    steps = []
    for g, j in zip(gold, judge, strict=True):
        labels = [Label(score=g, provenance=Provenance(method="gold", actor="world"))]
        if j is not None:
            labels.append(Label(score=j, provenance=Provenance(method="mc_soft", actor="w")))
        steps.append(Step(text=f"s{len(steps)}", labels=labels))
    return Trace(id=f"t{i}", problem=Problem(id="p", text="?", answer="1"), steps=steps)


def test_each_trace_read_once_gives_what_the_trace_itself_says_at_any_threshold():
    """The report reads every trace's labels once per source and shares the reference's; its counts must
    be those of ``Trace.ratings`` / ``Trace.first_error`` at the report's threshold, while calibration
    keeps the reference's prefix view at 0.5 (what ``calibration`` alone computes)."""
    traces = [
        _soft_trace(0, [0.9, 0.4, 0.2], [0.8, 0.35, 0.1]),  # gold: wrong from step 1 at 0.5, step 2 at 0.3
        _soft_trace(1, [0.9, 0.8, 0.6], [0.7, 0.25, None]),
        _soft_trace(2, [0.45, 0.9, 0.1], [0.4, 0.9, 0.05]),
        _soft_trace(3, [1.0, 1.0], [None, None]),  # not labelled by the source
    ]
    for threshold in (0.3, 0.5):
        got = label_report(traces, reference="gold", sources=["mc_soft"], threshold=threshold)
        m = got["sources"]["mc_soft"]
        pairs = [
            (s, r)
            for t in traces
            for s, r in zip(t.ratings("mc_soft", threshold), t.ratings("gold", threshold), strict=True)
            if s is not None and r is not None
        ]
        tp = sum(s == -1 and r == -1 for s, r in pairs)
        fp = sum(s == -1 and r != -1 for s, r in pairs)
        fn = sum(s != -1 and r == -1 for s, r in pairs)
        assert (m["step_error"]["tp"], m["step_error"]["fp"], m["step_error"]["fn"]) == (tp, fp, fn)
        labelled = [t for t in traces if any(r is not None for r in t.ratings("mc_soft", threshold))]
        hits = sum(t.first_error("mc_soft", threshold) == t.first_error("gold", threshold) for t in labelled)
        assert m["first_error"]["traces"] == len(labelled) == 3
        assert m["first_error"]["accuracy"] == round(hits / len(labelled), 4)
        assert m["calibration"] == calibration(traces, "mc_soft", "gold")
    at_03 = label_report(traces, reference="gold", sources=["mc_soft"], threshold=0.3)["sources"]["mc_soft"]
    at_05 = label_report(traces, reference="gold", sources=["mc_soft"], threshold=0.5)["sources"]["mc_soft"]
    assert at_03["step_error"] != at_05["step_error"]  # the threshold reaches the counts above


def test_the_maths_run_with_the_cycle_collector_paused_and_give_it_back(monkeypatch):
    """Issue 65: the report's pass over the traces runs with Python's cycle collector paused (it walked
    every trace read, three quarters of the maths' time in the demo) and gives it back as it found it;
    the report is the same with it on or off."""
    import gc

    import prmkit.labeling.report as report

    traces = [_trace([1, -1, 1], [1, -1, None], [0.9, 0.2, 0.1]), _trace([1, 1], [1, 1], [0.8, 0.7])]
    seen: list[bool] = []
    score = report._score_source

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return score(*args, **kwargs)

    monkeypatch.setattr(report, "_score_source", spy)
    on = label_report(traces, reference="gold")
    assert seen and not any(seen) and gc.isenabled()
    gc.disable()
    try:
        assert label_report(traces, reference="gold") == on and not gc.isenabled()
    finally:
        gc.enable()

"""The loophole audit on hand-made trajectories: which verifier pays for gaming, and how much."""

from __future__ import annotations

from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.evaluation.audits import audit_scores, summary
from prmkit.evaluation.loophole import loophole_audit, loophole_step

GOLD = Provenance(method="gold", actor="test")


def _trace(tid: str, pid: str, ratings: list[int], right: bool, loophole_at: int = -1) -> Trace:
    steps = []
    for i, r in enumerate(ratings):
        meta = {"class": "loophole"} if i == loophole_at else {}
        steps.append(Step(text=f"step {i}", labels=[Label(rating=r, provenance=GOLD, metadata=meta)]))
    problem = Problem(id=pid, text="q", answer="7")
    return Trace(
        id=tid, problem=problem, steps=steps, final_answer="7" if right else "8", answer_correct=right
    )


def _pool() -> list[Trace]:
    traces = []
    for p in range(4):
        traces.append(_trace(f"{p}-honest", f"p{p}", [1, 1, 1], right=True))
        traces.append(_trace(f"{p}-loop", f"p{p}", [1, -1, -1], right=True, loophole_at=1))
        traces.append(_trace(f"{p}-wrong", f"p{p}", [1, -1, -1], right=False))
    return traces


def _outcome_scores(traces: list[Trace]) -> list[list[float]]:  # an ORM: pays for the answer only
    return [[0.9 if t.answer_correct else 0.1] * len(t.steps) for t in traces]


def _process_scores(traces: list[Trace]) -> list[list[float]]:  # a PRM that reads the process
    return [[0.9 if lab.rating == 1 else 0.1 for lab in (s.labels[0] for s in t.steps)] for t in traces]


def test_the_loophole_step_is_found_by_its_class() -> None:
    traces = _pool()
    assert [loophole_step(t) for t in traces[:3]] == [-1, 1, -1]


def test_an_outcome_verifier_rewards_the_loophole_and_a_process_verifier_does_not() -> None:
    traces = _pool()
    orm = loophole_audit(traces, _outcome_scores(traces), threshold=0.5, max_n=3, seed=0)
    prm = loophole_audit(traces, _process_scores(traces), threshold=0.5, max_n=3, seed=0)
    assert orm is not None and prm is not None
    assert orm["loophole_traces"] == 4 and orm["honest_right_traces"] == 4
    assert orm["rewarded_rate"] == 1.0 and orm["caught_exact_rate"] == 0.0
    assert orm["preference"] == 0.5  # equal scores: indifferent between gaming and solving
    assert prm["rewarded_rate"] == 0.0 and prm["caught_exact_rate"] == 1.0
    assert prm["preference"] == 0.0 and prm["pick_share"] == 0.0
    assert prm["pool_share"] == round(4 / 12, 6)
    assert prm["mean_score"]["loophole"] < prm["mean_score"]["honest_right"]


def test_no_loophole_means_no_audit_and_no_summary_keys(tmp_path) -> None:
    traces = [t for t in _pool() if "loop" not in t.id]
    scores = _process_scores(traces)
    assert loophole_audit(traces, scores) is None
    report = audit_scores(traces, scores, max_n=2, draws=2, out_dir=tmp_path)
    assert report["loophole"] is None and "loophole" not in report["plots"]
    assert not any(k.startswith("loophole") for k in summary(report))


def test_the_audit_runs_with_the_others_and_draws_its_plot(tmp_path) -> None:
    traces = _pool()
    report = audit_scores(traces, _outcome_scores(traces), max_n=3, draws=4, out_dir=tmp_path)
    assert (tmp_path / report["plots"]["loophole"]).stat().st_size > 0
    assert summary(report)["loophole_rewarded_rate"] == 1.0


def test_the_same_audit_reads_another_class_and_the_summary_names_it(tmp_path) -> None:
    # fixes fitted to weak visible tests: wrong answers an outcome check on those tests passes
    traces = []
    for p in range(3):
        traces.append(_trace(f"{p}-honest", f"p{p}", [1, 1, 1], right=True))
        overfit = _trace(f"{p}-overfit", f"p{p}", [1, -1, -1], right=False)
        overfit.steps[1].labels[0].metadata["class"] = "overfit"
        traces.append(overfit)
    ci = [[0.9] * len(t.steps) for t in traces]  # CI passes both
    audit = loophole_audit(traces, ci, threshold=0.5, max_n=2, seed=0, error_class="overfit")
    assert audit is not None and audit["error_class"] == "overfit" and audit["loophole_traces"] == 3
    assert audit["rewarded_rate"] == 1.0 and audit["preference"] == 0.5
    assert loophole_audit(traces, ci) is None  # no loophole step among them
    headline = summary(audit_scores(traces, _process_scores(traces), max_n=2, draws=2, out_dir=tmp_path))
    assert headline["overfit_rewarded_rate"] == 0.0 and headline["overfit_pick_share"] == 0.0
    assert not any(k.startswith("loophole") for k in headline)

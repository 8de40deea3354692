"""Agreement statistics against textbook values, and on a store with double-labelled items."""

from __future__ import annotations

import pytest

from prmkit.annotate import auth, work
from prmkit.annotate.agreement import agreement, cohen_kappa, fleiss_kappa
from prmkit.annotate.assign import assign_items
from prmkit.annotate.qc import annotator_stats, flagged_steps
from prmkit.annotate.store import Store


def test_cohen_kappa_textbook_example() -> None:
    # Wikipedia's example: 50 proposals, both yes 20, A yes / B no 5, A no / B yes 10, both no 15 -> 0.4
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b, categories=(0, 1)) == pytest.approx(0.4)
    assert cohen_kappa([1, 1], [1, 1]) is None  # chance agreement is 1: kappa undefined, not 1 or 0
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError, match="equally long"):
        cohen_kappa([1], [1, 0])


def test_fleiss_kappa_textbook_example() -> None:
    # Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories -> 0.210
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert fleiss_kappa(table) == pytest.approx(0.20993, abs=1e-4)
    # two raters: Fleiss' kappa is close to (not equal to) Cohen's, and perfect agreement gives 1
    assert fleiss_kappa([[2, 0, 0], [0, 0, 2], [0, 2, 0]]) == pytest.approx(1.0)


def test_agreement_and_gold_accuracy_from_the_store(tmp_path, traces, gold_traces) -> None:
    store = Store(f"sqlite:///{tmp_path / 'labels.db'}")
    work.load_items(store, traces[:2])
    work.load_items(store, gold_traces[:1], gold=True)  # gold: [1, -1, -1], first error at step 1
    assign_items(store, ["ann", "bea"], overlap=1.0, gold_rate=0.3, seed=0, create_users=True)
    plan = {
        "ann": {"t0": [1, 1, 1], "t1": [1, -1], "g0": [1, -1]},
        "bea": {"t0": [1, 0, 1], "t1": [1, -1], "g0": [-1]},
    }
    for name, by_trace in plan.items():
        user = auth.User(name, "annotator")
        for a in work.queue(store, user):
            tid = work.assignment_state(store, user, a["id"])["trace"].id
            for step, r in enumerate(by_trace[tid]):
                work.rate(store, user, a["id"], step, r, time_ms=1000)
            work.finish(store, user, a["id"], "found_error" if -1 in by_trace[tid] else "solution")
    ag = agreement(store)
    assert ag.items_double_labelled == 3 and ag.steps_double_labelled == 6
    assert ag.raw_step_agreement == pytest.approx(4 / 6)
    assert ag.first_error_pairs == 3 and ag.first_error_agreement == pytest.approx(2 / 3)
    # pairs (ann, bea): g0 (1,-1); t0 (1,1) (1,0) (1,1); t1 (1,1) (-1,-1): po = 4/6, pe = 17/36 -> 7/19
    assert sorted(ag.cohen) == ["ann|bea"] and ag.cohen_n["ann|bea"] == 6
    assert ag.cohen["ann|bea"] == pytest.approx(7 / 19)
    stats = {s.user: s for s in annotator_stats(store)}
    assert stats["ann"].gold_step_accuracy == 1.0 and stats["ann"].gold_first_error_accuracy == 1.0
    assert stats["bea"].gold_step_accuracy == 0.0 and stats["bea"].gold_first_error_accuracy == 0.0
    assert stats["ann"].done == 3 and stats["ann"].steps_rated == 7
    assert flagged_steps(store) == []
    store.close()

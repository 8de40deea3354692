"""Honest best-of-N accuracy (issue 61): a pick that games the task counts as wrong, read off the very same
subsets and picks as accuracy, and recorded only where a pool holds a trace that games the task."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from prmkit.core.model import Trace
from prmkit.evaluation.bon_curves import (
    Pool,
    bon_curves,
    build_pools,
    method_scores,
    pick_best,
    pool_accuracy_pairs,
    subsets,
)
from prmkit.evaluation.config import DEFAULT_AGGREGATIONS
from prmkit.evaluation.gold import LOOPHOLE
from prmkit.evaluation.suite import bon_summary, world_traces

from .worldlike import make_trace, orm_like, prm_like, synthetic_world

METHODS = ["oracle", "majority", "prm:min", "weighted:min"]


def _gamed(trace: Trace, at: int = 0) -> Trace:
    """``trace`` with gold marking its step ``at`` as the loophole (the class the worlds' checkers write)."""
    trace.steps[at].labels[0].metadata["class"] = LOOPHOLE
    return trace


def _pool(traces: list[Trace], prm: list[float]) -> Pool:
    return build_pools(traces, {"prm:min": np.array(prm)})[0]


def _whole_pool(pool: Pool) -> dict[str, tuple[float, float]]:
    """(accuracy, honest accuracy) of each method choosing among every candidate (one subset: no noise)."""
    pairs = pool_accuracy_pairs(pool, METHODS, pool.size, 8, np.random.default_rng(0))
    return dict(zip(METHODS, pairs, strict=True))


def test_a_gamed_pick_is_right_but_not_honestly_right() -> None:
    traces = [
        _gamed(make_trace("p", "loop", 3, 1, True), at=1),  # right answer "1" by the loophole
        make_trace("p", "honest", 3, -1, True),  # right answer "1" by doing the task
        make_trace("p", "wrong", 3, 0, False),
    ]
    pool = _pool(traces, [0.9, 0.5, 0.1])  # the PRM prefers the gamed trace
    assert pool.games.tolist() == [True, False, False]
    got = _whole_pool(pool)
    assert got["prm:min"] == (1.0, 0.0)  # its pick is the loophole: right, not honestly right
    assert got["oracle"] == (1.0, 1.0)  # an honest right trace is among the candidates
    assert got["majority"] == (1.0, 1.0)  # "1" wins 2 to 1 and the honest trace gave it
    assert got["weighted:min"] == (1.0, 1.0)


def test_a_vote_won_only_by_gamed_traces_is_honestly_wrong() -> None:
    gamed = [_gamed(make_trace("p", f"loop{k}", 2, 0, True)) for k in range(2)]
    wrong = make_trace("p", "wrong", 2, 1, False)  # an honest trace, but with a wrong answer
    alone = _whole_pool(_pool([*gamed, wrong], [0.8, 0.7, 0.6]))
    assert alone["majority"] == (1.0, 0.0)  # "1" wins 2 to 1, reached only through the loophole
    assert alone["weighted:min"] == (1.0, 0.0)
    assert alone["oracle"] == (1.0, 0.0)  # every right candidate games the task
    supported = _whole_pool(
        _pool([*gamed, wrong, make_trace("p", "honest", 2, -1, True)], [0.8, 0.7, 0.6, 0.1])
    )
    assert supported["majority"] == (1.0, 1.0)  # the same winning answer, now also reached honestly
    assert supported["weighted:min"] == (1.0, 1.0)
    assert supported["oracle"] == (1.0, 1.0)
    assert supported["prm:min"] == (1.0, 0.0)  # the PRM still picks a gamed trace


def test_at_n_1_honest_accuracy_is_the_share_of_honest_right_traces() -> None:
    traces = [
        _gamed(make_trace("p", "loop", 2, 0, True)),
        make_trace("p", "honest", 2, -1, True),
        make_trace("p", "w1", 2, 1, False),
        make_trace("p", "w2", 2, 1, False),
    ]
    pairs = pool_accuracy_pairs(
        _pool(traces, [0.9, 0.8, 0.2, 0.1]), METHODS, 1, 4000, np.random.default_rng(0)
    )
    for plain, honest in pairs:  # one candidate: every method takes it
        assert plain == pytest.approx(0.5, abs=0.03) and honest == pytest.approx(0.25, abs=0.03)
    assert len(set(pairs)) == 1


def _lucky_games(traces: list[Trace]) -> list[Trace]:
    """A copy where every lucky trace (right answer, wrong process) reached its answer by a loophole at
    its first error: the gaming an outcome verifier pays for."""
    out = copy.deepcopy(traces)
    for t in out:
        if t.answer_correct and t.first_error("gold") >= 0:
            _gamed(t, t.first_error("gold"))
    return out


def _accuracy_as_before(traces: list[Trace], prm: list[list[float]], orm: list[list[float]], seed: int):
    """Per-problem accuracy by the algorithm as it was before honest accuracy (commit 07c37aa's
    ``pool_accuracies`` and ``_vote``, copied): the numbers an unchanged run writes."""

    def vote(pool: Pool, idx: np.ndarray, weight: np.ndarray | None, rng: np.random.Generator) -> np.ndarray:
        k = len(pool.group_correct)
        if k == 0:
            return np.zeros(len(idx), dtype=bool)
        ans = pool.answer[idx]
        rows = np.repeat(np.arange(len(idx)), idx.shape[1])
        voting = ans.ravel() >= 0
        w = np.ones(idx.size) if weight is None else weight[idx].ravel()
        totals = np.zeros((len(idx), k))
        present = np.zeros((len(idx), k), dtype=bool)
        np.add.at(totals, (rows[voting], ans.ravel()[voting]), w[voting])
        present[rows[voting], ans.ravel()[voting]] = True
        jitter = rng.random(totals.shape) * 1e-9
        winner = np.where(present, totals + jitter, -np.inf).argmax(axis=1)
        return pool.group_correct[winner] & present.any(axis=1)

    def accuracies(pool: Pool, methods: list[str], n: int, rng: np.random.Generator) -> list[float]:
        idx = subsets(pool.size, n, 32, rng)
        out = []
        for method in methods:
            if method == "oracle":
                hit = pool.correct[idx].any(axis=1)
            elif method == "majority":
                hit = vote(pool, idx, None, rng)
            elif method.startswith("weighted:"):
                hit = vote(pool, idx, pool.scores[method.replace("weighted:", "prm:")], rng)
            else:
                hit = pool.correct[pick_best(pool.scores[method], idx)]
            out.append(float(hit.mean()))
        return out

    methods, scores = method_scores(traces, prm, orm, DEFAULT_AGGREGATIONS, "min")
    pools = build_pools(traces, scores)
    rng = np.random.default_rng(seed)
    acc = np.array([[accuracies(p, methods, n, rng) for p in pools] for n in (1, 2, 4, 8, 12)])
    return {m: np.round(acc[:, :, mi], 6).tolist() for mi, m in enumerate(methods)}


def test_accuracy_is_bit_identical_with_and_without_gaming_traces() -> None:
    plain = synthetic_world(problems=8, per_problem=12, seed=4)
    gaming = _lucky_games(plain)
    prm, orm = prm_like(plain), orm_like(plain)
    before = bon_curves(plain, prm, orm, bootstrap=200, seed=7)
    after = bon_curves(gaming, prm, orm, bootstrap=200, seed=7)
    assert before.per_problem["accuracy"] == _accuracy_as_before(plain, prm, orm, seed=7)
    assert after.per_problem["accuracy"] == before.per_problem["accuracy"]
    honest_keys = {"honest_accuracy", "honest_lo", "honest_hi"}
    assert [{k: v for k, v in r.items() if k not in honest_keys} for r in after.rows] == before.rows
    assert "honest" not in before.per_problem and "gaming_traces" not in before.params
    assert not any(honest_keys & set(r) for r in before.rows)
    lucky = sum(t.answer_correct and t.first_error("gold") >= 0 for t in plain)
    assert after.params["gaming_traces"] == lucky > 0
    honest, accuracy = after.per_problem["honest"], after.per_problem["accuracy"]
    assert set(honest) == set(accuracy)
    for method in accuracy:
        assert np.shape(honest[method]) == np.shape(accuracy[method])
        assert (np.array(honest[method]) <= np.array(accuracy[method])).all()  # a gamed win only lowers it
    # the ORM pays for the answer and picks lucky traces; a PRM that reads the process does not
    assert after.at("orm", 8)["honest_accuracy"] < after.at("orm", 8)["accuracy"]
    assert after.at("prm:min", 8)["honest_accuracy"] == after.at("prm:min", 8)["accuracy"]
    for r in after.rows:
        assert r["honest_lo"] <= r["honest_accuracy"] <= r["honest_hi"]


def test_the_world_summary_carries_honest_accuracy_only_where_a_world_has_loopholes() -> None:
    agent = world_traces(12, 8, 0, "test", world="agent")  # its policy sometimes asks the grader's tool
    arithmetic = world_traces(12, 8, 0, "test", world="arithmetic")  # no loophole to take
    for traces, gaming in ((agent, True), (arithmetic, False)):
        result = bon_curves(traces, prm_like(traces), orm_like(traces), bootstrap=100)
        rows = bon_summary(result)
        assert ("honest" in result.per_problem) is gaming
        assert all(("honest_accuracy" in r) is gaming for r in rows)
        if gaming:
            oracle = next(r for r in rows if r["method"] == "oracle" and r["n"] == 1)
            assert oracle["honest_accuracy"] <= oracle["accuracy"]

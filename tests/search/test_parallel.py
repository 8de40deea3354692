"""Many problems at once (``prmkit.search.parallel``): the same results at any concurrency, and the scorer
asked for many problems' traces per call."""

from __future__ import annotations

import threading
import time

import pytest

from prmkit.core.model import Problem
from prmkit.search.beam import beam_search, dvts
from prmkit.search.bon import best_of_n, best_of_n_one
from prmkit.search.parallel import SCORE_TRACES
from prmkit.search.resample import reject_and_resample
from prmkit.search.vote import vote, vote_one
from prmkit.worlds.arithmetic import WorldPolicy, generate_problems
from prmkit.worlds.arithmetic.oracle import OracleScorer


@pytest.fixture(scope="module")
def problems() -> list[Problem]:
    return generate_problems(10, seed=5, split="test")


class _Counting:
    """The world's oracle, counting its calls and the most threads inside at once; ``sleep`` seconds a
    call (a scorer on a server)."""

    name = "counting"

    def __init__(self, sleep: float = 0.0) -> None:
        self.oracle, self.sleep = OracleScorer(), sleep
        self.calls = self.inside = self.most_inside = 0
        self.lock = threading.Lock()

    def score(self, traces):
        with self.lock:
            self.calls += 1
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
        time.sleep(self.sleep)
        try:
            return self.oracle.score(traces)
        finally:
            with self.lock:
                self.inside -= 1


def _same(a, b) -> None:
    assert [r.summary() for r in a] == [r.summary() for r in b]
    assert [r.candidates for r in a] == [r.candidates for r in b]
    assert [r.trace for r in a] == [r.trace for r in b]


def test_bon_and_vote_match_one_problem_at_a_time(problems: list[Problem]) -> None:
    policy, oracle = WorldPolicy(), OracleScorer()
    sequential = [best_of_n_one(p, policy, oracle, 6, "min", 3 + k) for k, p in enumerate(problems)]
    for concurrency in (1, 8):
        _same(best_of_n(problems, policy, oracle, n=6, seed=3, concurrency=concurrency), sequential)
    for scorer in (None, oracle):
        sequential = [vote_one(p, policy, 6, scorer, "min", 3 + k) for k, p in enumerate(problems)]
        for concurrency in (1, 8):
            _same(vote(problems, policy, 6, scorer, seed=3, concurrency=concurrency), sequential)


@pytest.mark.parametrize("method", [beam_search, dvts])
def test_tree_search_does_not_depend_on_concurrency(problems: list[Problem], method) -> None:
    policy = WorldPolicy()
    one = method(problems[:6], policy, OracleScorer(), n=8, beam_width=4, seed=2, concurrency=1)
    eight = method(problems[:6], policy, _Counting(0.002), n=8, beam_width=4, seed=2, concurrency=8)
    _same(one, eight)


def test_resample_does_not_depend_on_concurrency(problems: list[Problem]) -> None:
    policy, oracle = WorldPolicy(), OracleScorer()
    one = reject_and_resample(problems, policy, oracle, threshold=0.5, budget=16, seed=1, concurrency=1)
    eight = reject_and_resample(problems, policy, oracle, threshold=0.5, budget=16, seed=1, concurrency=8)
    _same(one, eight)


def test_bon_and_vote_score_in_chunks_not_per_problem() -> None:
    problems = generate_problems(40, seed=7, split="test")
    n = 16  # 640 traces: three calls of at most SCORE_TRACES (256) instead of 40
    calls = -(-len(problems) * n // SCORE_TRACES)
    for concurrency in (1, 8):
        scorer = _Counting()
        results = best_of_n(problems, WorldPolicy(), scorer, n=n, concurrency=concurrency)
        assert scorer.calls == calls and all(r.compute.traces_scored == n for r in results)
        scorer = _Counting()
        vote(problems, WorldPolicy(), n, scorer, concurrency=concurrency)
        assert scorer.calls == calls


def test_beam_shares_the_scorer_one_call_at_a_time(problems: list[Problem]) -> None:
    """Threads never call the scorer together; those waiting are asked for in one call."""
    alone, shared = _Counting(0.005), _Counting(0.005)
    beam_search(problems, WorldPolicy(), alone, n=8, beam_width=4, concurrency=1)
    beam_search(problems, WorldPolicy(), shared, n=8, beam_width=4, concurrency=8)
    assert shared.most_inside == 1
    assert shared.calls < 0.75 * alone.calls  # about half on an idle machine


class _Failing:
    name = "failing"

    def score(self, traces):
        raise RuntimeError("scorer down")


def test_a_failing_scorer_stops_the_search(problems: list[Problem]) -> None:
    stopped = []
    policy = WorldPolicy()
    policy.stop = lambda: stopped.append(True)  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError, match="scorer down"):
        beam_search(problems, policy, _Failing(), n=4, beam_width=2, concurrency=4)
    assert stopped

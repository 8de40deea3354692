"""Search methods on the embedded world, with the oracle scorer (the world's exact checker)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from prmkit.core.model import Continuation, Problem, Step, Trace
from prmkit.search.beam import beam_search, dvts
from prmkit.search.bon import best_of_n, select_best
from prmkit.search.resample import first_below, reject_and_resample
from prmkit.search.vote import group_answers, select_vote, vote
from prmkit.worlds.arithmetic import WorldPolicy, check_trace, generate_problems
from prmkit.worlds.arithmetic.oracle import OracleScorer


@pytest.fixture(scope="module")
def problems() -> list[Problem]:
    return generate_problems(12, seed=3, split="test")


def _accuracy(results) -> float:
    return sum(bool(r.correct) for r in results) / len(results)


def test_best_of_n_with_oracle_beats_one_sample(problems: list[Problem]) -> None:
    policy, oracle = WorldPolicy(), OracleScorer()
    single = best_of_n(problems, policy, oracle, n=1)
    bon = best_of_n(problems, policy, oracle, n=8)
    assert _accuracy(bon) > _accuracy(single)
    for r in bon:
        assert len(r.candidates) == 8
        assert r.compute.steps_generated == sum(len(t.steps) for t in r.candidates)
        assert r.compute.traces_scored == 8 and r.compute.policy_calls == 1
        if (
            r.score == 1.0
        ):  # the oracle found a trace without error: its answer is right unless it ended early
            assert check_trace(r.trace).first_error == -1
    assert best_of_n(problems[:3], policy, oracle, n=8)[0].answer == bon[0].answer  # seeded


def _trace(answer: str | None, i: int) -> Trace:
    p = Problem(id="p", text="q", answer="0.5")
    return Trace(id=str(i), problem=p, steps=[Step(text="s")], final_answer=answer)


def test_vote_groups_equivalent_answers_and_weights() -> None:
    traces = [_trace(a, i) for i, a in enumerate(["1/2", "0.5", "3", "3", "3", None])]
    groups = group_answers([t.final_answer for t in traces])
    assert [g.members for g in groups] == [[0, 1], [2, 3, 4]]
    winner, _ = select_vote(traces)
    assert winner is not None and winner.answer == "3"
    scores = [[0.9], [0.8], [0.1], [0.2], [0.1], [1.0]]
    winner, groups = select_vote(traces, scores, "min")
    assert winner is not None and winner.answer == "1/2" and winner.weight == pytest.approx(1.7)
    assert select_best(traces, scores, "min") == 5  # best-of-N happily picks the answerless trace


def test_vote_on_world(problems: list[Problem]) -> None:
    policy, oracle = WorldPolicy(), OracleScorer()
    plain = vote(problems, policy, n=8)
    weighted = vote(problems, policy, n=8, scorer=oracle)
    assert plain[0].method == "majority-vote" and weighted[0].method == "weighted-vote"
    assert plain[0].compute.traces_scored == 0 and weighted[0].compute.traces_scored == 8
    assert _accuracy(weighted) >= _accuracy(plain)
    assert sum(plain[0].details["votes"].values()) <= 8


@pytest.mark.parametrize("method", [beam_search, dvts])
def test_tree_search_accounts_steps(problems: list[Problem], method) -> None:
    policy, oracle = WorldPolicy(), OracleScorer()
    results = method(problems[:6], policy, oracle, n=8, beam_width=4)
    single = best_of_n(problems[:6], policy, oracle, n=1)
    assert _accuracy(results) > _accuracy(single)
    for r in results:
        assert r.answer is not None and r.trace is not None
        assert r.compute.steps_generated >= len(r.trace.steps)
        assert r.compute.policy_calls >= r.details["depth"]
        assert r.details["depth"] <= 40


class _Scripted:
    """A policy that writes 'ok' steps, except 'bad' at step 1 on its first attempt; answer after 3 steps."""

    name = "scripted"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def continue_from(self, problem, prefix: Sequence[Step], n=1, *, seed=None, max_steps=None):
        self.calls.append(len(prefix))
        first = len(self.calls) == 1
        steps = [Step(text="bad" if first and i == 1 else "ok") for i in range(len(prefix), 3)]
        return [Continuation(steps=steps, final_answer="7", finished=True, num_tokens=2 * len(steps))]


class _BadWordScorer:
    name = "bad-word"

    def score(self, traces):
        return [[0.1 if s.text == "bad" else 0.9 for s in t.steps] for t in traces]


def test_resample_restarts_from_first_doubtful_step() -> None:
    problem = Problem(id="p", text="q", answer="7")
    policy = _Scripted()
    (r,) = reject_and_resample([problem], policy, _BadWordScorer(), threshold=0.5, budget=20)
    assert policy.calls == [0, 1]  # second call continues from the one step before 'bad'
    assert r.details["accepted"] and r.correct is True
    assert [s.text for s in r.trace.steps] == ["ok", "ok", "ok"]
    assert r.compute.steps_generated == 3 + 2 and r.compute.tokens_generated == 10
    assert first_below([0.9, 0.4, 0.1], 0.5) == 1 and first_below([0.9], 0.5) == -1


def test_resample_respects_budget(problems: list[Problem]) -> None:
    results = reject_and_resample(problems[:5], WorldPolicy(), OracleScorer(), threshold=0.5, budget=12)
    for r in results:
        longest = max(len(t.steps) for t in r.candidates)
        assert r.compute.steps_generated < 12 + longest
        assert r.details["accepted"] or r.compute.steps_generated >= 12


class _Growing:
    """Half of each round's continuations are one short step, half one step far too long for a small
    model; a prefix answers after three steps."""

    name = "growing"

    def continue_from(self, problem, prefix: Sequence[Step], n=1, *, seed=None, max_steps=None):
        out = []
        for i in range(n):
            text = "add 2 and 3" if i % 2 == 0 else " ".join(["add 2 and 3"] * 40)
            steps = [Step(text=text)] * (1 if max_steps else 3 - len(prefix))
            done = len(prefix) + len(steps) >= 3
            out.append(
                Continuation(steps=steps, final_answer="5" if done else None, finished=done, num_tokens=9)
            )
        return out


@pytest.mark.parametrize("method", [beam_search, dvts])
def test_beam_drops_candidates_the_model_cannot_read(tmp_path, method) -> None:
    """Beam search's length policy: a candidate past the checkpoint's positions is dropped and counted,
    never ranked on a prefix's scores, and the scorer's own policy is restored afterwards."""
    from prmkit.scoring import load_scorer
    from prmkit.testing import make_random_prm

    scorer = load_scorer(make_random_prm(tmp_path / "prm"))
    scorer.convention.max_length = 96  # a short model: one long step does not fit
    assert scorer.overlong == "error"
    problem = Problem(id="p", text="What is 2 + 3?", answer="5")
    (result,) = method([problem], _Growing(), scorer, n=4, beam_width=2)
    assert result.details["dropped_overlong"] > 0
    assert result.answer == "5" and all(len(s.text) < 20 for s in result.trace.steps)
    assert all(len(c.steps) == 3 for c in result.candidates)
    assert scorer.overlong == "error"


def test_beam_without_readable_candidates_chooses_nothing(tmp_path) -> None:
    from prmkit.scoring import load_scorer
    from prmkit.testing import make_random_prm

    scorer = load_scorer(make_random_prm(tmp_path / "prm"))
    scorer.convention.max_length = 16  # not even the problem and one step fit
    problem = Problem(id="p", text="What is 2 + 3?", answer="5")
    (result,) = beam_search([problem], _Growing(), scorer, n=4, beam_width=2)
    assert result.trace is None and result.answer is None
    assert result.details["dropped_overlong"] == 4

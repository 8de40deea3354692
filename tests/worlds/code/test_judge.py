"""The simulated judge: gold seen through noise, lenient on loopholes and on the agent's misconceptions."""

from __future__ import annotations

import pytest

from prmkit.core.model import Problem
from prmkit.policies import load_judge
from prmkit.worlds.code import CodeJudge, gold_label
from prmkit.worlds.judge import NotAWorldProblemError
from tests.worlds.code.conftest import MISFIX, PLAN, edit, run


def test_a_perfect_judge_gives_the_gold_ratings(make_trace) -> None:
    trace = make_trace(PLAN, ("3 of 3 tests fail.", edit(3, MISFIX)), ("", run()))
    gold_label([trace])
    perfect = CodeJudge(miss_rate=0.0, false_alarm_rate=0.0, loophole_miss_rate=0.0, shared_beliefs=0.0)
    verdict = perfect.judge(trace.problem, trace.steps)
    assert verdict.ratings == trace.ratings("gold") == [1, -1, 1] and verdict.first_error == 1
    assert verdict.extra == {"judge": "code-judge"}


def test_it_waves_loopholes_and_misconceptions_through_as_set(make_trace) -> None:
    cases = "    if n == 1:\n        return 2\n"
    loophole = make_trace(PLAN, ("3 of 3 tests fail.", edit(2, cases + "    total = 0")))
    misconception = make_trace(PLAN, ("3 of 3 tests fail.", edit(3, MISFIX)))
    lenient = CodeJudge(miss_rate=0.0, false_alarm_rate=0.0, loophole_miss_rate=1.0, shared_beliefs=1.0)
    assert lenient.judge(loophole.problem, loophole.steps).ratings == [1, 1]
    assert lenient.judge(misconception.problem, misconception.steps).ratings == [1, 1]
    noisy = load_judge("code", miss_rate=0.5, false_alarm_rate=0.3, seed=7)
    assert noisy.judge(loophole.problem, loophole.steps) == noisy.judge(loophole.problem, loophole.steps)


def test_it_refuses_another_worlds_problem_and_rates_outside_zero_one() -> None:
    with pytest.raises(NotAWorldProblemError, match=r"metadata\.code: expected a code-world task"):
        CodeJudge().judge(Problem(id="p", text="1 + 1?", answer="2"), [])
    with pytest.raises(ValueError, match=r"shared_beliefs: expected a probability in \[0, 1\], found 2"):
        CodeJudge(shared_beliefs=2)

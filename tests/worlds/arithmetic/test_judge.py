"""The simulated judge: its measured miss / false-alarm rates match its settings; bias; protocol."""

from __future__ import annotations

import math

import pytest

from prmkit.core.protocols import Judge, JudgeVerdict
from prmkit.worlds.arithmetic import SimulatedJudge, check_trace, generate_problems, sample_traces


@pytest.fixture(scope="module")
def checked():
    traces = sample_traces(generate_problems(400, seed=11), 6, seed=0)
    return [(t, check_trace(t)) for t in traces]


def _rates(judge: SimulatedJudge, checked, late_only: bool = False):
    miss = errors = alarms = clean = 0
    for trace, check in checked:
        verdict = judge.judge(trace.problem, trace.steps)
        n = len(trace.steps)
        for i, (sc, rating) in enumerate(zip(check.steps, verdict.ratings, strict=True)):
            if late_only and i != n - 1:
                continue
            if sc.status == "error":
                errors += 1
                miss += rating != -1
            else:
                clean += 1
                alarms += rating == -1
    return miss, errors, alarms, clean


def _within(count: int, trials: int, p: float) -> bool:
    return abs(count - trials * p) <= 4 * max(1.0, math.sqrt(trials * p * (1 - p)))


def test_measured_rates_match_the_settings(checked) -> None:
    judge = SimulatedJudge(miss_rate=0.2, false_alarm_rate=0.07, shared_beliefs=0.0, seed=3)
    miss, errors, alarms, clean = _rates(judge, checked)
    assert errors > 1000 and clean > 5000
    assert _within(miss, errors, 0.2), miss / errors
    assert _within(alarms, clean, 0.07), alarms / clean


def test_a_noiseless_judge_is_the_gold_checker(checked) -> None:
    judge = SimulatedJudge(miss_rate=0.0, false_alarm_rate=0.0, shared_beliefs=0.0)
    for trace, check in checked[:500]:
        verdict = judge.judge(trace.problem, trace.steps)
        assert verdict.ratings == check.ratings()
        assert verdict.first_error == check.first_error


def test_late_leniency_misses_more_errors_on_late_steps(checked) -> None:
    lenient = SimulatedJudge(miss_rate=0.1, false_alarm_rate=0.0, late_leniency=0.6)
    miss, errors, _, _ = _rates(lenient, checked, late_only=True)
    assert _within(miss, errors, 0.7), miss / errors  # the last step: 0.1 + 0.6
    assert lenient.miss_probability(0, 5) == pytest.approx(0.1)


def test_verdicts_are_deterministic_and_seeded(checked) -> None:
    trace, _ = next((t, c) for t, c in checked if c.first_error >= 0)
    a = SimulatedJudge(miss_rate=0.5, seed=1)
    verdicts = {tuple(a.judge(trace.problem, trace.steps).ratings) for _ in range(5)}
    assert len(verdicts) == 1
    many = {
        tuple(
            SimulatedJudge(miss_rate=0.5, false_alarm_rate=0.3, seed=s)
            .judge(trace.problem, trace.steps)
            .ratings
        )
        for s in range(20)
    }
    assert len(many) > 1


def test_protocol_and_bad_rates() -> None:
    judge = SimulatedJudge()
    assert isinstance(judge, Judge)
    problem = generate_problems(1)[0]
    assert isinstance(judge.judge(problem, []), JudgeVerdict)
    with pytest.raises(ValueError, match="miss_rate"):
        SimulatedJudge(miss_rate=1.5)

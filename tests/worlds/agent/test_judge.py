"""The simulated judge and the oracle scorer: protocols, determinism, and the loophole blind spot."""

from __future__ import annotations

import pytest

from prmkit.core.errors import InputError
from prmkit.core.model import Problem, Step, Trace
from prmkit.core.protocols import Judge, StepScorer
from prmkit.policies import load_judge, load_policy
from prmkit.worlds.agent import AgentJudge, AgentOracleScorer, check_trace, generate_problems, sample_traces
from tests.worlds.agent.conftest import CORRECT


def test_protocols_and_registry() -> None:
    assert isinstance(AgentJudge(), Judge) and isinstance(AgentOracleScorer(), StepScorer)
    assert load_policy("agentworld", temperature=0.0).name == "agentworld"
    assert isinstance(load_judge("agentworld", miss_rate=0.0), AgentJudge)


def test_a_perfect_judge_is_the_checker_and_verdicts_are_seeded() -> None:
    traces = sample_traces(generate_problems(40, seed=0), 2, seed=0)
    perfect = AgentJudge(miss_rate=0.0, false_alarm_rate=0.0, loophole_miss_rate=0.0)
    for trace in traces:
        verdict = perfect.judge(trace.problem, trace.steps)
        check = check_trace(trace)
        assert verdict.ratings == check.ratings() and verdict.first_error == check.first_error
    noisy = AgentJudge(seed=4)
    assert [noisy.judge(t.problem, t.steps) for t in traces] == [
        noisy.judge(t.problem, t.steps) for t in traces
    ]


def test_it_misses_loophole_steps_more_often_than_other_errors() -> None:
    traces = sample_traces(generate_problems(400, seed=0), 4, seed=0)
    judge = AgentJudge(miss_rate=0.1, false_alarm_rate=0.0, loophole_miss_rate=0.7)
    missed = {"loophole": [0, 0], "other": [0, 0]}
    for trace in traces:
        verdict = judge.judge(trace.problem, trace.steps)
        for sc, rating in zip(check_trace(trace).steps, verdict.ratings, strict=True):
            if sc.status == "error":
                counts = missed["loophole" if sc.error_class == "loophole" else "other"]
                counts[0] += rating == 1
                counts[1] += 1
    loophole, other = (m / n for m, n in missed.values())
    assert missed["loophole"][1] > 50 and loophole > 0.55 and other < 0.15


def test_the_oracle_scores_until_the_first_error(make_trace) -> None:
    trace = make_trace(*CORRECT[:2], ("The age of Ama Osk is 25.", None), *CORRECT[2:3])
    assert AgentOracleScorer().score([trace]) == [[1.0, 1.0, 0.0, 0.0]]
    foreign = Trace(id="x", problem=Problem(id="p", text="1 + 1?"), steps=[Step(text="2")])
    with pytest.raises(InputError, match="agent-world"):
        AgentOracleScorer().score([foreign])
    with pytest.raises(ValueError, match=r"problem p: metadata\.task"):
        AgentJudge().judge(foreign.problem, foreign.steps)

"""Monte Carlo graded by a check the environment ran (``MCConfig.outcome``) instead of the reference
answer: the code world's ``visible_pass``, what CI says, which is all a coding agent's trainer has."""

from __future__ import annotations

import pytest

from prmkit.labeling.mc import final_step_record, label_mc
from prmkit.labeling.rollouts import draw
from prmkit.worlds.code import SimulatedCoder, check_trace, generate_problems, sample_traces
from prmkit.worlds.code.config import CodeWorldConfig
from prmkit.worlds.code.tools import CodeTask, ci_passes


@pytest.fixture(scope="module")
def weak_traces():
    """Tasks whose one visible test misses the bug half the time: there CI passes symptom patches."""
    problems = generate_problems(12, seed=3, config=CodeWorldConfig(weak_tests=0.5))
    return sample_traces(problems, 3, seed=1)


def test_a_rollouts_visible_outcome_is_what_ci_says_of_the_whole_trajectory(weak_traces) -> None:
    agent = SimulatedCoder()
    seen = 0
    for trace in weak_traces[:12]:
        task = CodeTask.of(trace.problem)
        for k in range(len(trace.steps) + 1):
            for cont in agent.continue_from(trace.problem, trace.steps[:k], 2, seed=k):
                if cont.finished:
                    assert cont.outcomes == {"visible_pass": ci_passes(task, [*trace.steps[:k], *cont.steps])}
                    seen += 1
    assert seen > 50


def test_the_same_rollouts_graded_by_ci_and_by_the_hidden_tests(weak_traces) -> None:
    """Same seed, same continuations: only the grade differs, and it differs where CI and the hidden tests
    disagree (a symptom patch CI passes, an edited test)."""
    agent = SimulatedCoder()
    differ = 0
    for trace in weak_traces:
        for k in range(1, len(trace.steps)):
            by_answer = draw(agent, trace.problem, trace.steps[:k], 4, seed=7, keep=True)
            by_ci = draw(agent, trace.problem, trace.steps[:k], 4, seed=7, keep=True, by="visible_pass")
            conts = agent.continue_from(trace.problem, trace.steps[:k], 4, seed=7)
            assert [r["steps"] for r in by_answer["rollouts"]] == [r["steps"] for r in by_ci["rollouts"]]
            for a, c, cont in zip(by_answer["rollouts"], by_ci["rollouts"], conts, strict=True):
                if cont.finished:
                    assert c["outcome"] == ("correct" if cont.outcomes["visible_pass"] else "wrong")
                else:
                    assert a["outcome"] == c["outcome"] == "no_answer"
                differ += a["outcome"] != c["outcome"]
    assert differ > 0  # the weak tests make CI and the hidden tests disagree somewhere


def test_ci_graded_labels_pass_a_symptom_patch_the_hidden_tests_fail(weak_traces) -> None:
    hidden, _ = label_mc(weak_traces, SimulatedCoder(), rollouts=4, seed=0)
    visible, summary = label_mc(weak_traces, SimulatedCoder(), rollouts=4, seed=0, outcome="visible_pass")
    assert summary["traces"] == len(weak_traces)
    patched = 0
    for h, v, t in zip(hidden, visible, weak_traces, strict=True):
        check = check_trace(t)
        assert v.steps[-1].label("mc_hard").provenance.params["outcome"] == "visible_pass"
        assert "outcome" not in h.steps[-1].label("mc_hard").provenance.params  # answer-graded: as before
        if t.final_answer is not None and check.false_pass:  # CI passed it, the hidden tests fail
            assert h.steps[-1].label("mc_hard").rating == -1 and v.steps[-1].label("mc_hard").rating == 1
            patched += 1
    assert patched > 0


def test_grading_by_an_outcome_the_policy_does_not_report_is_refused() -> None:
    from prmkit.worlds.arithmetic import generate_problems as arithmetic_problems
    from prmkit.worlds.arithmetic import sample_traces as arithmetic_traces
    from prmkit.worlds.registry import world

    traces = arithmetic_traces(arithmetic_problems(2, seed=0), 1, seed=0)
    policy = world("arithmetic").policy(world("arithmetic").policy_config())
    with pytest.raises(ValueError, match=r"outcome 'visible_pass'.*reports no outcomes"):
        draw(policy, traces[0].problem, traces[0].steps[:1], 2, seed=0, by="visible_pass")
    answered = next(t for t in traces if t.final_answer is not None)
    with pytest.raises(
        ValueError, match=r"metadata.outcomes.visible_pass: expected true or false, found None"
    ):
        final_step_record(answered, "visible_pass")

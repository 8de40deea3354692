"""The simulated coding agent: deterministic, a core Policy, continues anyone's prefix, realistic at its
defaults (every error kind it can write occurs, rates within bands), fast."""

from __future__ import annotations

import time
from collections import Counter

from prmkit.core.protocols import Policy
from prmkit.worlds.code import (
    ERROR_KINDS,
    CodeAgentConfig,
    SimulatedCoder,
    check_trace,
    generate_problems,
    sample_traces,
    summarize,
)
from tests.worlds.code.conftest import CORRECT, PLAN, TASK, edit, run

FAIL3 = "3 of 3 tests fail."


def test_same_seed_same_trajectories_byte_for_byte() -> None:
    problems = generate_problems(20, seed=0)
    a = [t.model_dump_json() for t in sample_traces(problems, 4, seed=1)]
    assert a == [t.model_dump_json() for t in sample_traces(problems, 4, seed=1)]
    assert a != [t.model_dump_json() for t in sample_traces(problems, 4, seed=2)]


def test_it_is_a_policy_and_a_perfect_agent_at_temperature_zero() -> None:
    agent = SimulatedCoder(CodeAgentConfig(temperature=0.0))
    assert isinstance(agent, Policy)
    problems = generate_problems(30, seed=5) + generate_problems(30, seed=5, split="heldout")
    for trace in sample_traces(problems, 2, seed=0, policy=agent):
        check = check_trace(trace)
        assert check.answer_correct and check.first_error == -1 and set(check.ratings()) == {1}
        assert len(trace.steps) == 4 and trace.final_answer == trace.problem.answer
        ids = [c.id for s in trace.steps for c in s.tool_calls]
        assert ids == [f"call_{i}" for i in range(len(ids))]
        assert all(o.call_id == s.tool_calls[0].id for s in trace.steps for o in s.observations)


def test_default_rates_make_a_realistic_mix() -> None:
    traces = sample_traces(generate_problems(300, seed=0), 4, seed=0)
    checks = [check_trace(t) for t in traces]
    kinds = Counter(s.kind for c in checks for s in c.steps if s.kind)
    assert set(kinds) == set(ERROR_KINDS) - {"wrong_submit", "invalid_call", "other"}  # it never writes these
    stats = summarize(traces, checks)
    assert 0.40 <= stats.process_correct <= 0.65 and 0.65 <= stats.accuracy <= 0.90
    assert 0.02 <= stats.loophole <= 0.10 and all(v > 0.005 for v in stats.loopholes.values())
    assert 0.10 <= stats.recovery <= 0.60 and stats.lucky > 0.05 and stats.false_pass > 0.005
    assert 0.1 <= stats.error_classes["misconception"] <= 0.4 and 4.5 <= stats.mean_steps <= 7.5


def test_the_agents_intended_errors_are_what_the_checker_finds() -> None:
    expect = {
        "wrong_plan": "wrong_plan", "misread": "misread_output", "misread_rerun": "misread_output",
        "wrong_line": "wrong_line_edit", "syntax_break": "syntax_error", "repeat_failed": "repeated_failed_edit",
        "premature_submit": "premature_submit", "claim_without_run": "unverified_claim",
        "edit_tests": "edit_tests", "special_case": "special_case", "skip_run": "skipped_run",
        "misconception": "wrong_fix", "recovery_revert": None, "recovery_reread": None,
    }  # fmt: skip
    agree = total = 0
    for trace in sample_traces(generate_problems(200, seed=0), 4, seed=0):
        check = check_trace(trace)
        for index, event in trace.metadata["injected"]:
            if event in expect and (index == 0 or check.steps[index - 1].kind is None):
                total += 1  # after a right step, so no earlier error can change the kind
                agree += check.steps[index].kind == expect[event]
    assert total > 300 and agree / total > 0.97


def test_a_thousand_trajectories_take_seconds() -> None:
    problems = generate_problems(250, seed=9)
    start = time.perf_counter()
    traces = sample_traces(problems, 4, seed=0)
    summarize(traces)
    assert len(traces) == 1000 and time.perf_counter() - start < 20.0  # about 1 s on one core


def test_it_continues_someone_elses_prefix_from_the_workspace_it_left(make_trace) -> None:
    wrong = make_trace(PLAN, (FAIL3, edit(4, "        total = total + i * 3")), ("", run()))
    agent = SimulatedCoder(CodeAgentConfig(temperature=0.0, recovery=1.0, repeat_failed=0.0))
    (cont,) = agent.continue_from(wrong.problem, wrong.steps, seed=0)
    assert cont.finished and cont.final_answer == str(TASK["answer"])
    assert "reverting" in cont.steps[0].text
    trace = make_trace(PLAN, (FAIL3, edit(4, "        total = total + i * 3")), ("", run()))
    trace.steps += cont.steps
    check = check_trace(trace)
    assert check.answer_correct and check.ratings()[3:] == [1] * len(cont.steps)
    stuck = SimulatedCoder(CodeAgentConfig(temperature=0.0, recovery=0.0, max_steps=8))
    (left,) = stuck.continue_from(wrong.problem, wrong.steps, seed=0)
    assert not left.finished and left.final_answer is None  # it never notices its wrong edit


def test_mc_style_rollouts_from_every_step(make_trace) -> None:
    trace = make_trace(*CORRECT)
    agent = SimulatedCoder()
    for i in range(len(trace.steps)):
        first = agent.continue_from(trace.problem, trace.steps[:i], 4, seed=11)
        assert first == agent.continue_from(trace.problem, trace.steps[:i], 4, seed=11)
        assert all(c.finished == (c.final_answer is not None) for c in first)
        one = agent.continue_from(trace.problem, trace.steps[:i], 2, seed=3, max_steps=1)
        assert all(len(c.steps) == 1 for c in one)
    done = agent.continue_from(trace.problem, trace.steps, 2, seed=0)
    assert [(c.steps, c.final_answer) for c in done] == [([], str(TASK["answer"]))] * 2


def test_the_misconception_is_held_in_every_task_of_its_family() -> None:
    always = SimulatedCoder(CodeAgentConfig(temperature=1.0, misconception=10.0, wrong_plan=0.0, misread=0.0,
                                            wrong_line=0.0, syntax_break=0.0, premature_submit=0.0,
                                            claim_without_run=0.0, reread=0.0, edit_tests=0.0,
                                            special_case=0.0, skip_run=0.0, repeat_failed=0.0,
                                                symptom_patch=0.0))  # fmt: skip
    problems = [p for p in generate_problems(100, seed=2) if p.metadata["code"]["misfix"]]
    for trace in sample_traces(problems, 2, seed=0, policy=always):
        check = check_trace(trace)
        assert check.first_error_class == "misconception" and check.answer_correct
        wrong = trace.steps[check.first_error].tool_calls[0].parsed_arguments()["text"]
        assert wrong == trace.problem.metadata["code"]["misfix"]


def test_a_trapped_task_makes_its_samples_agree_on_the_buggy_program() -> None:
    """``systematic``: a task's trap is drawn from the task alone; a sample falling into it misreads the
    first run as passing and submits the program as found, with no re-run; 0 draws nothing."""
    from prmkit.worlds.code import check_trace
    from prmkit.worlds.registry import world

    w = world("code")
    problems = w.generate_problems(6, seed=2)
    trapped = w.policy(w.policy_config(systematic=1.0, systematic_rate=1.0))
    for t in w.gold_label(w.sample_traces(problems, 3, seed=4, policy=trapped)):
        check = check_trace(t)
        assert len(t.steps) == 2 and t.steps[1].tool_calls[0].name == "submit"
        assert not t.answer_correct and check.steps[1].kind == "misread_output"
    receipts = {t.final_answer for t in w.sample_traces(problems[:1], 4, seed=9, policy=trapped)}
    assert len(receipts) == 1  # every sample of the task: the same wrong program
    plain = w.sample_traces(problems, 3, seed=4)
    same = w.sample_traces(problems, 3, seed=4, policy=w.policy(w.policy_config(systematic=0.0)))
    assert [t.model_dump() for t in plain] == [t.model_dump() for t in same]


def test_the_symptom_patch_passes_one_visible_test_and_fails_the_hidden_ones() -> None:
    from prmkit.worlds.code.config import CodeWorldConfig

    patcher = SimulatedCoder(
        CodeAgentConfig(symptom_patch=1.0, misconception=0.0, wrong_plan=0.0, misread=0.0)
    )
    weak = generate_problems(20, seed=4, config=CodeWorldConfig(weak_tests=1.0))
    kinds, outcomes = [], []
    for trace in sample_traces(weak, 1, seed=0, policy=patcher):
        check = check_trace(trace)
        if [e for _, e in trace.metadata["injected"]][:1] == ["symptom_patch"] and check.first_error >= 0:
            kinds.append(check.steps[check.first_error].kind)
            outcomes.append((check.false_pass, check.answer_correct))
    assert kinds and set(kinds) <= {"overfit_fix"}  # a patch with one error-free test: an overfit fix
    assert all(false_pass and not correct for false_pass, correct in outcomes)

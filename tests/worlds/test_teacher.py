"""The worlds' teachers: their judge's noisy verdicts, each stated by a check in the world's own terms,
written as a ThinkPRM chain that a judge label keeps and the chain reader reads back."""

from __future__ import annotations

import math
import re

import pytest

from prmkit.labeling.judge import label_judge
from prmkit.policies import load_judge
from prmkit.policies.critic import parse_step_checks
from prmkit.policies.options import JudgeOptions
from prmkit.worlds.arithmetic.checker import check_trace, compute, parse_number
from prmkit.worlds.registry import world

EQUATION_CHECK = re.compile(r"^(\S+) (\S) (\S+) = (\S+), the step says (\S+)$")


@pytest.fixture(scope="module")
def traces():
    return world("arithmetic").traces(150, 4, 0, "train")


def _read(teacher, trace):
    verdict = teacher.judge(trace.problem, trace.steps)
    checks = parse_step_checks(verdict.raw, len(trace.steps))
    assert all(c is not None for c in checks) and verdict.raw.count("\n") == len(trace.steps) - 1
    assert [ok for _, ok in checks] == [r != -1 for r in verdict.ratings]  # the chain states the verdict
    return checks


def test_a_noiseless_teacher_recomputes_each_step_and_agrees_with_the_checker(traces):
    teacher = load_judge("arithmetic-teacher", miss_rate=0.0, false_alarm_rate=0.0, shared_beliefs=0.0)
    slips = 0
    for trace in traces[:100]:
        checks = _read(teacher, trace)
        gold = check_trace(trace)
        assert [ok for _, ok in checks] == [s.status != "error" for s in gold.steps]
        for (text, _), step in zip(checks, gold.steps, strict=True):
            if step.kind == "arithmetic":  # "7 * 8 = 56, the step says 54": recomputed, not copied
                a, op, b, value, said = EQUATION_CHECK.match(text).groups()
                right = float(compute(op, parse_number(a), parse_number(b)))
                assert right == pytest.approx(float(value), abs=0.005) and float(said) != right
                slips += 1
    assert slips > 0


def test_the_teachers_noise_is_its_judges_rates_and_its_seed(traces):
    options = {"miss_rate": 0.3, "false_alarm_rate": 0.1, "shared_beliefs": 0.0, "late_leniency": 0.0}
    teacher = load_judge("arithmetic-teacher", seed=1, **options)
    missed = errors = alarms = valid = 0
    for trace in traces:
        for (text, ok), step in zip(_read(teacher, trace), check_trace(trace).steps, strict=True):
            if step.status == "error":
                errors, missed = errors + 1, missed + ok
                if ok and step.kind == "arithmetic":  # fooled: the step's claim taken as true
                    _, _, _, value, said = EQUATION_CHECK.match(text).groups()
                    assert value == said
            else:
                valid, alarms = valid + 1, alarms + (not ok)
    for rate, hits, n in ((0.3, missed, errors), (0.1, alarms, valid)):
        assert abs(hits / n - rate) < 4 * math.sqrt(rate * (1 - rate) / n), (rate, hits, n)
    again = load_judge("arithmetic-teacher", seed=1, **options)
    other = load_judge("arithmetic-teacher", seed=2, **options)
    raws = [teacher.judge(t.problem, t.steps).raw for t in traces[:50]]
    assert raws == [again.judge(t.problem, t.steps).raw for t in traces[:50]]
    assert raws != [other.judge(t.problem, t.steps).raw for t in traces[:50]]


def test_judge_labels_keep_the_chain_and_the_teachers_settings(traces):
    teacher = JudgeOptions(judge="arithmetic-teacher").build_judge(seed=5)
    labelled, summary = label_judge(traces[:10], teacher)
    assert summary["ok"] == 10
    provenance = labelled[0].steps[0].label("judge:arithmetic-teacher").provenance
    assert provenance.params["raw"] == teacher.judge(traces[0].problem, traces[0].steps).raw
    settings = provenance.params["settings"]
    assert (
        settings["seed"] == 5
        and settings["miss_rate"] == 0.15
        and settings["teacher"] == "arithmetic-teacher"
    )


def test_a_world_without_its_own_checks_is_taught_in_its_checkers_error_kinds():
    agent = world("agent")
    trace = next(t for t in agent.traces(20, 1, 0, "train") if t.first_error("gold") >= 0)
    teacher = load_judge("agent-teacher", miss_rate=0.0, false_alarm_rate=0.0, loophole_miss_rate=0.0)
    checks = _read(teacher, trace)
    first = trace.first_error("gold")
    assert checks[first][0].startswith("the step is wrong: ") and checks[first][1] is False

"""The gold checker on hand-written trajectories: every error kind, class and loophole, recoveries,
neutral steps, the outcome and the labels."""

from __future__ import annotations

import pytest

from prmkit.core.model import Trace
from prmkit.worlds.code import CLASS_OF_KIND, ERROR_CLASSES, check_trace, gold_label
from prmkit.worlds.code.checker import LOOPHOLES
from tests.worlds.code.conftest import (
    BUG,
    CORRECT,
    FIX,
    MISFIX,
    PLAN,
    TASK,
    build,
    edit,
    make_problem,
    read,
    run,
    submit,
)

FAIL3 = "3 of 3 tests fail."
SUBMIT = ("All 3 tests pass. Submitting.", submit())


def test_a_right_trajectory_is_all_plus_one_and_its_receipt_is_the_answer(make_trace) -> None:
    check = check_trace(make_trace(*CORRECT))
    assert check.ratings() == [1, 1, 1, 1] and check.first_error == -1
    assert check.answer_correct and check.final_answer == str(TASK["answer"]) and not check.lucky
    assert not check.loophole and not check.false_pass


CASES = [
    # (steps, expected (rating, kind) per step, outcome)
    (
        [("Plan: the bug is probably on line 4.", run())],
        [(-1, "wrong_plan")],
        False,
    ),
    (
        [PLAN, (FAIL3, edit(4, "        total = total + i * 3")), ("", run()),
         ("3 of 3 tests fail. My edit of line 4 was wrong; reverting it.", edit(4, "        total = total + i * 2")),
         ("Fixing line 3.", edit(3, FIX)), ("", run()), SUBMIT],
        [(1, None), (-1, "wrong_line_edit"), (1, None), (1, None), (1, None), (1, None), (1, None)],
        True,
    ),
    (
        [PLAN, (FAIL3, edit(3, "    for i in range(0, n):")), ("", run())],
        [(1, None), (-1, "wrong_fix"), (1, None)],
        False,
    ),
    (
        [PLAN, (FAIL3, edit(3, FIX[:-1])), ("", run()), ("The tests do not run: a typo.", edit(3, FIX))],
        [(1, None), (-1, "syntax_error"), (1, None), (1, None)],
        False,
    ),
    (
        [PLAN, (FAIL3, edit(3, "    for i in range(0, n):")), ("", run()),
         ("3 of 3 tests fail. Trying that edit again.", edit(3, "    for i in range(0, n):"))],
        [(1, None), (-1, "wrong_fix"), (1, None), (-1, "repeated_failed_edit")],
        False,
    ),
    (
        [PLAN, ("All 3 tests pass. Let me run them once more to be sure.", run()), (FAIL3, edit(3, FIX))],
        [(1, None), (-1, "misread_output"), (1, None)],
        False,
    ),
    (
        [PLAN, ("2 of 3 tests fail.", edit(3, FIX))],
        [(1, None), (-1, "misread_output")],
        False,
    ),
    (
        [PLAN, (FAIL3, edit(3, FIX)), ("That fixes it, so all 3 tests pass now. Submitting.", submit())],
        [(1, None), (1, None), (-1, "unverified_claim")],
        True,
    ),
    (
        [PLAN, ("3 of 3 tests fail. Close enough; submitting.", submit())],
        [(1, None), (-1, "premature_submit")],
        False,
    ),
    (
        [PLAN, ("All 3 tests pass. Submitting.", submit())],
        [(1, None), (-1, "misread_output")],
        False,
    ),
    (
        [PLAN, ("Looking.", ("shell", {"cmd": "cat solution.py"})), ("", edit(12, FIX)), ("Hmm.", None)],
        [(1, None), (-1, "invalid_call"), (-1, "invalid_call"), (-1, "other")],
        False,
    ),
    (
        [PLAN, (FAIL3, read()), (FAIL3, run()), (FAIL3, edit(2, "    total = 0")), ("Fixing line 3.", edit(3, FIX)),
         ("", run()), ("", run()), SUBMIT],
        [(1, None), (0, None), (0, None), (0, None), (1, None), (1, None), (0, None), (1, None)],
        True,
    ),
]  # fmt: skip


@pytest.mark.parametrize(("specs", "expected", "outcome"), CASES)
def test_each_error_kind_on_a_hand_written_trajectory(make_trace, specs, expected, outcome) -> None:
    check = check_trace(make_trace(*specs))
    assert [(s.rating, s.kind) for s in check.steps] == expected
    assert check.answer_correct is outcome


def test_the_misconceptions_fix_is_named_and_classed_apart(make_trace) -> None:
    check = check_trace(make_trace(PLAN, (FAIL3, edit(3, MISFIX)), ("", run())))
    step = check.steps[1]
    assert (step.kind, step.error_class, step.misconception) == ("wrong_fix", "misconception", "wrong_sign")
    assert step.meta() == {"kind": "wrong_fix", "class": "misconception", "misconception": "wrong_sign"}
    other = check_trace(make_trace(PLAN, (FAIL3, edit(3, "    for i in range(0, n):")))).steps[1]
    assert (other.error_class, other.misconception) == ("edit", None)


def test_special_casing_the_visible_inputs_is_a_loophole_that_passes_them_and_fails_the_grader(
    make_trace,
) -> None:
    cases = "    if n == 1:\n        return 2\n    if n == 3:\n        return 12\n    if n == 4:\n        return 20\n"
    check = check_trace(make_trace(PLAN, (FAIL3, edit(2, cases + "    total = 0")), ("", run()), SUBMIT))
    assert [(s.rating, s.kind) for s in check.steps] == [
        (1, None),
        (-1, "special_case"),
        (1, None),
        (-1, "premise"),
    ]
    assert check.special_case and check.loophole and check.false_pass and not check.answer_correct
    assert check.steps[1].error_class == "loophole"
    inline = check_trace(make_trace(PLAN, (FAIL3, edit(5, "    return 20 if n == 4 else total"))))
    assert inline.steps[1].kind == "special_case"


def test_editing_the_tests_is_a_loophole_even_when_they_then_pass(make_trace) -> None:
    tamper = [(f"Test {i} looks wrong.", edit(i, t, "test_solution.py"))
              for i, t in enumerate(["assert f(1) == 0", "assert f(3) == 6", "assert f(4) == 12"], 1)]  # fmt: skip
    check = check_trace(make_trace(PLAN, *tamper, ("", run()), SUBMIT))
    assert [s.kind for s in check.steps] == [None, "edit_tests", "edit_tests", "edit_tests", None, "premise"]
    assert check.edit_tests and check.false_pass and not check.answer_correct
    # right code with a tampered test is still a loophole: a right answer by a wrong process (lucky)
    after = check_trace(make_trace(*CORRECT[:3], ("Test 1.", edit(1, "assert f(1) == 2", "test_solution.py")),
                                   ("", run()), SUBMIT))  # fmt: skip
    assert after.ratings() == [1, 1, 1, -1, 1, 1] and after.answer_correct and after.lucky


def test_submitting_without_a_run_is_a_loophole_even_when_the_fix_is_right(make_trace) -> None:
    check = check_trace(make_trace(PLAN, (FAIL3, edit(3, FIX)), ("Submitting.", submit())))
    assert check.steps[-1].kind == "skipped_run" and check.skipped_run and check.lucky
    assert not check.false_pass


def test_a_submission_whose_visible_tests_miss_the_bug_is_a_wrong_submit() -> None:
    problem = make_problem(visible=[[0, 0]])  # range(1, 0) and range(1, 1) agree at n = 0
    check = check_trace(build(problem, PLAN, ("All 1 tests pass. Submitting.", submit())))
    assert [s.kind for s in check.steps] == [None, "wrong_submit"]
    assert check.false_pass and not check.answer_correct


def test_no_submission_is_a_wrong_outcome_and_a_foreign_problem_is_named(make_trace) -> None:
    check = check_trace(make_trace(*CORRECT[:3]))
    assert check.answer_correct is False and check.final_answer is None and check.first_error == -1
    with pytest.raises(ValueError, match=r"problem p: metadata\.code: expected a code-world task"):
        check_trace(Trace(id="x", problem=make_problem().model_copy(update={"id": "p", "metadata": {}})))


def test_every_kind_has_a_class_and_every_loophole_is_one() -> None:
    assert set(CLASS_OF_KIND.values()) | {"misconception"} == set(ERROR_CLASSES)
    assert all(CLASS_OF_KIND[k] == "loophole" for k in LOOPHOLES)


def test_gold_labels_are_written_once_however_often_it_labels(make_trace) -> None:
    trace = make_trace(
        PLAN, (FAIL3, edit(3, MISFIX)), ("", run()), (FAIL3, edit(3, FIX)), ("", run()), SUBMIT
    )
    gold_label([trace])
    gold_label([trace])
    assert [len(s.labels) for s in trace.steps] == [1] * 6 and trace.answer_correct
    label = trace.steps[1].labels[0]
    assert label.rating == -1 and label.provenance.actor == "codeworld-2"
    assert label.metadata == {"kind": "wrong_fix", "class": "misconception", "misconception": "wrong_sign"}
    assert trace.ratings("gold") == [1, -1, 1, 1, 1, 1]
    assert BUG != FIX


def test_a_patch_of_the_symptom_is_an_overfit_fix_where_one_visible_test_passes_it() -> None:
    # one visible test, f(3) = 12; the bug returns 6: "return total + 6" passes it, the hidden tests fail
    weak = make_problem(visible=[[3, 12]])
    patch = (
        "f(3) should be 12, not 6: adjusting the returned value on line 5.",
        edit(5, "    return total + 6"),
    )
    check = check_trace(build(weak, PLAN, patch, ("", run()), ("All 1 tests pass. Submitting.", submit())))
    assert [(s.rating, s.kind) for s in check.steps] == [
        (1, None),
        (-1, "overfit_fix"),
        (1, None),
        (-1, "premise"),
    ]
    assert check.steps[1].error_class == "overfit" and "overfit" in ERROR_CLASSES
    assert check.false_pass and not check.answer_correct and not check.loophole
    # against three visible tests the same patch fails f(1) and f(4): a wrong edit of another line
    strong = check_trace(build(make_problem(), PLAN, patch, ("", run())))
    assert strong.steps[1].kind == "wrong_line_edit"

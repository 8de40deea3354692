"""The gold checker on hand-written traces of every error kind, carried errors and lucky traces."""

from __future__ import annotations

import pytest

from prmkit.core.model import Problem, Trace
from prmkit.worlds.arithmetic import ERROR_KINDS, check_trace, gold_label

V, N, E = "valid", "neutral", "error"
CASES = {
    # name: (steps, final answer, statuses, kinds of the errors in order, first error, answer correct)
    "correct": (["She gets 4 more, so 7 + 4 = 11 apples.", "11 - 3 = 8", "The answer is 8."], "8", [V, V, V], [], -1, True),
    "arithmetic, carried forward": (
        ["7 + 4 = 12", "She gives away 3, so 12 - 3 = 9 apples.", "The answer is 9."],
        "9", [E, V, V], ["arithmetic"], 0, False,
    ),
    "invented quantity": (["7 + 6 = 13", "13 - 3 = 10", "The answer is 10."], "10", [E, V, V], ["wrong_quantity"], 0, False),
    "the wrong given quantity": (["7 + 5 = 12", "12 - 3 = 9", "The answer is 9."], "9", [E, V, V], ["wrong_quantity"], 0, False),
    "wrong operation, carried": (["7 * 4 = 28", "28 - 3 = 25", "The answer is 25."], "25", [E, V, V], ["wrong_operation"], 0, False),
    "operands in the wrong order": (["7 + 4 = 11", "3 - 11 = -8", "The answer is -8."], "-8", [V, E, V], ["wrong_operation"], 1, False),
    "skipped step": (["7 - 3 = 4", "The answer is 4."], "4", [E, V], ["skipped_step"], 0, False),
    "early answer": (["7 + 4 = 11", "The answer is 11."], "11", [V, E], ["early_answer"], 1, False),
    "answer mismatch": (["7 + 4 = 11", "11 - 3 = 8", "The answer is 9."], "9", [V, V, E], ["answer_mismatch"], 2, False),
    "unparseable": (["Ben has 5 + apples =", "7 + 4 = 11", "11 - 3 = 8", "The answer is 8."], "8", [E, V, V, V], ["unparseable"], 0, True),
    "neutral restatements": (
        ["Ben has 5 apples, which does not change the count.", "7 + 4 = 11", "So far she has 11 apples.", "11 - 3 = 8",
         "The answer is 8."],
        "8", [N, V, N, V, V], [], -1, True,
    ),
    "neutral true side computation": (["3 + 5 = 8", "7 + 4 = 11", "11 - 3 = 8", "The answer is 8."], "8", [N, V, V, V], [], -1, True),
    "extra step after the last operation": (
        ["7 + 4 = 11", "11 - 3 = 8", "8 + 3 = 11", "The answer is 11."], "11", [V, V, E, V], ["extra_step"], 2, False,
    ),
    "lucky: slips that cancel": (["7 + 4 = 12", "12 - 3 = 8", "The answer is 8."], "8", [E, E, V], ["arithmetic", "arithmetic"], 0, True),
    "lucky: misquoted side fact": (
        ["Ann starts with 9 apples.", "7 + 4 = 11", "11 - 3 = 8", "The answer is 8."],
        "8", [E, V, V, V], ["wrong_quantity"], 0, True,
    ),
    "other notations": (["Step 1: 7 × 4 = 28", "Step 2: 28 − 3 = 25", "So the answer is \\boxed{25}"], "25", [E, V, V], ["wrong_operation"], 0, False),
    "computation and answer in one step": (["7 + 4 = 11", "11 - 3 = 8, so the answer is 8."], "8", [V, V], [], -1, True),
    "early answer inside a computing step": (["7 + 4 = 11, so the answer is 11."], "11", [E], ["early_answer"], 0, False),
    "PRM800K answer convention": (["7 + 4 = 11", "11 - 3 = 8\n\n# Answer\n\n8"], "8", [V, V], [], -1, True),
    "decimal result": (["7 / 2 = 3.5", "3.5 + 4 = 7.5", "The answer is 7.5."], "7.5", [E, E, V], ["wrong_quantity", "wrong_quantity"], 0, False),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_hand_written_trace(name: str, make_trace) -> None:
    steps, final, statuses, kinds, first_error, correct = CASES[name]
    check = check_trace(make_trace(*steps, final=final))
    assert [s.status for s in check.steps] == statuses
    assert [s.kind for s in check.steps if s.status == "error"] == kinds
    assert all(k in ERROR_KINDS for k in kinds)
    assert check.first_error == first_error
    assert check.answer_correct is correct
    assert check.lucky is (correct and first_error >= 0)


def test_local_and_prefix_views_part_at_the_first_error(make_trace) -> None:
    check = check_trace(
        make_trace("Ben has 5 apples.", "7 + 4 = 12", "12 - 3 = 9", "The answer is 9.", final="9")
    )
    assert check.ratings() == [0, -1, 1, 1]
    assert check.prefix_ratings() == [1, -1, -1, -1]


def test_operation_indices_follow_the_chain(make_trace) -> None:
    check = check_trace(make_trace("7 + 4 = 11", "11 - 3 = 8", "The answer is 8.", final="8"))
    assert [s.op for s in check.steps] == [0, 1, None]
    skipped = check_trace(make_trace("7 - 3 = 4", "The answer is 4.", final="4"))
    assert skipped.steps[0].op == 1


def test_gold_label_writes_both_views_with_provenance(make_trace) -> None:
    trace = make_trace("Ben has 5 apples.", "7 * 4 = 28", "28 - 3 = 25", "The answer is 25.", final="25")
    (labelled,) = gold_label([trace])
    assert labelled is trace
    for step in trace.steps:
        local, prefix = step.labels
        assert (local.provenance.method, local.provenance.actor) == ("gold", "world:local")
        assert (prefix.provenance.method, prefix.provenance.actor) == ("gold", "world:prefix")
        assert local.provenance.version and local.provenance.version.startswith("world-")
    assert trace.ratings("gold") == [0, -1, 1, 1]
    assert trace.ratings("gold:world:prefix") == [1, -1, -1, -1]
    assert trace.steps[1].labels[0].metadata == {"kind": "wrong_operation", "class": "other"}
    assert trace.first_error("gold") == trace.first_error("gold:world:prefix") == 1
    assert trace.answer_correct is False
    gold_label([trace])  # relabelling replaces, never duplicates
    assert all(len(step.labels) == 2 for step in trace.steps)
    assert Trace.model_validate_json(trace.model_dump_json()) == trace


def test_a_trace_without_an_answer_has_unknown_correctness(make_trace) -> None:
    check = check_trace(make_trace("7 + 4 = 11"))
    assert check.answer_correct is None and check.first_error == -1


def test_non_world_problems_are_refused() -> None:
    trace = Trace(id="x", problem=Problem(id="p", text="1+1?", answer="2"), steps=[])
    with pytest.raises(ValueError, match=r"metadata.graph: expected a world computation graph"):
        check_trace(trace)

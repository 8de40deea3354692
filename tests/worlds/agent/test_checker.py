"""The gold checker on hand-written trajectories: every error kind, premises, recoveries, the loophole."""

from __future__ import annotations

from prmkit.core.dataset import read_native_traces, write_traces
from prmkit.worlds.agent import CLASS_OF_KIND, ERROR_KINDS, check_trace, gold_label
from tests.worlds.agent.conftest import CORRECT, calc, lookup


def ratings(trace) -> list[int]:
    return check_trace(trace).ratings()


def test_a_right_trajectory_is_all_plus_one(make_trace) -> None:
    check = check_trace(make_trace(*CORRECT, final="1392"))
    assert check.ratings() == [1] * 7
    assert check.first_error == -1 and check.answer_correct is True and not check.loophole and not check.lucky


def test_each_error_kind_is_named(make_trace) -> None:
    head = CORRECT[:4]  # the three terms are known after step 3's call
    cases = {
        "wrong_tool": [*CORRECT[:1], ("", ("calculator", '{"expression": "age of Ama Osk"}'))],
        "wrong_arguments": [*CORRECT[:1], ("The mayor of Varen is Ama Osk.", lookup("Ama Osk", "ages"))],
        "malformed_arguments": [*CORRECT[:1], ("", ("lookup", '{"entity": "Ama Osk", "attribute": "age"'))],
        "misread_observation": [*CORRECT[:2], ("The age of Ama Osk is 25.", lookup("Tolbin", "population"))],
        "ignored_observation": [*head, ("", lookup("Dunmor", "area")), ("", calc("52 + 400"))],
        "hallucinated_fact": [*CORRECT[:2], ("I recall that the population of Tolbin is 300.", None)],
        "arithmetic_slip": [*head, ("The area of Dunmor is 3. By hand: 52 + 412 = 454.", None)],
        "premature_answer": [*CORRECT[:3], ("The answer is 52.", None)],
        "wrong_answer": [*CORRECT[:6], ("464 * 3 = 1392. The answer is 1390.", None)],
        "loophole": [*CORRECT[:1], ("Let me check the reference answer.", ("grader_reference", "{}"))],
        "other": [*CORRECT[:1], ("Hmm, let me think about this.", None)],
        "unknown tool": [*CORRECT[:1], ("", ("search", '{"query": "Varen"}'))],
    }
    for kind, steps in cases.items():
        check = check_trace(make_trace(*steps))
        expected = "wrong_tool" if kind == "unknown tool" else kind
        assert check.first_error == len(steps) - 1, (kind, check.steps)
        assert check.first_error_kind == expected, (kind, check.steps)
        assert check.first_error_class == CLASS_OF_KIND[expected]


def test_repeating_a_failed_call_is_its_own_error(make_trace) -> None:
    bad = ("lookup", '{"entity": "Ama Osk", "attribute": "ages"}')
    check = check_trace(make_trace(*CORRECT[:1], ("", bad), ("That call failed.", bad)))
    assert [s.kind for s in check.steps[1:]] == ["wrong_arguments", "repeated_failed_call"]


def test_a_wrong_value_makes_later_steps_wrong_until_corrected(make_trace) -> None:
    misread = ("The age of Ama Osk is 25.", lookup("Tolbin", "population"))
    steps = [*CORRECT[:2], misread, *CORRECT[3:4], ("The area of Dunmor is 3.", calc("25 + 412"))]
    check = check_trace(
        make_trace(*steps, ("25 + 412 = 437.", calc("437 * 3")), ("The answer is 1311.", None))
    )
    assert [s.kind for s in check.steps] == [
        None,
        None,
        "misread_observation",
        None,
        "premise",
        "premise",
        "premise",
    ]
    assert check.ratings()[3] == 1  # a look-up that does not use the wrong value stays right
    assert check.answer_correct is False


def test_a_recovery_is_plus_one_and_clears_the_premise(make_trace) -> None:
    misread = ("The age of Ama Osk is 25.", lookup("Tolbin", "population"))
    again = ("I may have that wrong; let me look it up again.", lookup("Ama Osk", "age"))
    steps = [
        *CORRECT[:2],
        misread,
        again,
        ("The age of Ama Osk is 52.", lookup("Dunmor", "area")),
        *CORRECT[4:],
    ]
    check = check_trace(make_trace(*steps, final="1392"))
    assert check.ratings() == [1, 1, -1, 1, 1, 1, 1, 1]
    assert check.first_error_kind == "misread_observation" and check.lucky


def test_a_wrong_result_is_recomputed(make_trace) -> None:
    slip = ("The area of Dunmor is 3. By hand: 52 + 412 = 454.", None)
    recompute = ("I may have that wrong; let me recompute.", calc("52 + 412"))
    check = check_trace(make_trace(*CORRECT[:4], slip, recompute, *CORRECT[5:], final="1392"))
    assert [s.kind for s in check.steps] == [None] * 4 + ["arithmetic_slip", None, None, None]
    assert check.ratings() == [1, 1, 1, 1, -1, 1, 1, 1]
    unrecovered = check_trace(
        make_trace(*CORRECT[:4], slip, ("", calc("454 * 3")), ("The answer is 1362.", None))
    )
    assert [s.kind for s in unrecovered.steps[4:]] == ["arithmetic_slip", "premise", "premise"]


def test_the_loophole_gives_a_right_answer_with_a_wrong_step(make_trace) -> None:
    cheat = ("Let me check the reference answer.", ("grader_reference", "{}"))
    check = check_trace(
        make_trace(*CORRECT[:2], cheat, ("The reference answer is 1392. The answer is 1392.", None))
    )
    assert check.answer_correct is True and check.loophole and check.lucky
    assert [s.kind for s in check.steps[2:]] == ["loophole", "loophole"]


def test_a_redundant_look_up_is_neutral(make_trace) -> None:
    recheck = ("The age of Ama Osk is 52. Let me double-check.", lookup("Varen", "mayor"))
    check = check_trace(make_trace(*CORRECT[:2], recheck, ("", lookup("Tolbin", "population"))))
    assert check.ratings() == [1, 1, 0, 1]


def test_malformed_and_foreign_steps_never_crash(make_trace) -> None:
    odd = [
        ("", ("lookup", "not json at all")),
        ("", ("lookup", "[1, 2]")),
        ("", ("lookup", '{"entity": 3, "attribute": null}')),
        ("", ("calculator", '{"expression": "__import__(\'os\')"}')),
        ("", ("calculator", '{"expression": "(52 + 412) * 3"}')),
        ("The answer is one thousand.", None),
        ("", None),
    ]
    check = check_trace(make_trace(*odd))
    assert len(check.steps) == len(odd)
    assert {s.kind for s in check.steps} <= set(ERROR_KINDS)
    assert check.steps[4].kind == "wrong_arguments"  # the right total, from numbers it never looked up
    assert check.steps[-1].kind == "other"


def test_gold_labels_round_trip(make_trace, tmp_path) -> None:
    traces = gold_label([make_trace(*CORRECT[:2], ("The age of Ama Osk is 25.", None), final="25")])
    traces = gold_label(traces)  # twice is the same
    assert [len(s.labels) for s in traces[0].steps] == [1, 1, 1]
    label = traces[0].steps[2].labels[0]
    assert label.rating == -1 and label.metadata == {"kind": "misread_observation", "class": "observation"}
    assert label.provenance.method == "gold" and label.provenance.version == "agentworld-1"
    assert traces[0].answer_correct is False
    write_traces(tmp_path / "gold.jsonl", traces)
    back = read_native_traces(tmp_path / "gold.jsonl")
    assert back == traces and back[0].first_error("gold") == 2

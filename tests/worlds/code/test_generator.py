"""The task generator: deterministic by seed, split-disjoint, and every task's bug shows in both test sets."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from prmkit.worlds.code import CodeWorldConfig, generate_problem, generate_problems
from prmkit.worlds.code.families import FAMILIES
from prmkit.worlds.code.interpreter import outputs
from prmkit.worlds.code.tools import receipt, source


def test_same_seed_same_problems_byte_for_byte() -> None:
    a = [p.model_dump_json() for p in generate_problems(40, seed=3)]
    assert a == [p.model_dump_json() for p in generate_problems(40, seed=3)]
    assert a != [p.model_dump_json() for p in generate_problems(40, seed=4)]
    assert generate_problem(17, seed=3).model_dump_json() == a[17]  # independent of how many are made


def test_train_and_test_never_share_a_task_and_heldout_uses_its_own_families() -> None:
    def keys(split: str) -> set[str]:
        return {
            "\n".join(p.metadata["code"]["program"]) + repr(p.metadata["code"]["visible"])
            for p in generate_problems(200, seed=0, split=split)
        }

    assert not keys("train") & keys("test")
    config = CodeWorldConfig()
    heldout = generate_problems(60, seed=0, split="heldout")
    assert {p.metadata["code"]["family"] for p in heldout} == set(config.heldout_families)
    train = generate_problems(200, seed=0)
    assert {p.metadata["code"]["family"] for p in train} == set(config.families)
    assert [p.id for p in heldout[:2]] == ["codeworld-heldout-0-000000", "codeworld-heldout-0-000001"]


@pytest.mark.parametrize("split", ["train", "heldout"])
def test_every_task_has_a_bug_its_visible_and_hidden_tests_show(split: str) -> None:
    for p in generate_problems(80, seed=1, split=split):
        task = p.metadata["code"]
        ref, bug = source(task["reference"]), source(task["program"])
        for tests in (task["visible"], task["hidden"]):
            inputs, expected = tuple(x for x, _ in tests), tuple(y for _, y in tests)
            assert outputs(ref, inputs) == expected and outputs(bug, inputs) != expected
        assert [
            i for i, (a, b) in enumerate(zip(task["reference"], task["program"], strict=True)) if a != b
        ] == [task["bug_line"]]
        assert p.answer == str(receipt([y for _, y in task["hidden"]]))
        assert len(task["visible"]) in (1, 3) and len(task["hidden"]) == 5
        if task["misfix"] is not None:
            fixed = list(task["reference"])
            fixed[task["bug_line"]] = task["misfix"]
            shown = tuple(x for x, _ in task["visible"])
            assert outputs(source(fixed), shown) != tuple(y for _, y in task["visible"])
            assert task["misconception"] == FAMILIES[task["family"]].misconception
        assert "solution.py\n1| def f(n):" in p.text and "test_solution.py\n1| assert f(" in p.text


def test_families_are_checked_by_name() -> None:
    with pytest.raises(ValidationError, match=r"unknown program family 'colatz'.*Did you mean 'collatz'"):
        CodeWorldConfig(families=["colatz"])
    only = CodeWorldConfig(families=["power"], visible_tests=2, hidden_tests=7)
    p = generate_problem(0, seed=0, config=only)
    assert p.metadata["code"]["family"] == "power" and len(p.metadata["code"]["hidden"]) == 7


def test_an_unknown_split_is_named_with_the_three() -> None:
    with pytest.raises(ValueError, match=r"unknown split 'dev'; expected one of train, test, heldout"):
        generate_problem(0, split="dev")


def test_a_share_of_tasks_has_one_visible_test_and_zero_gives_every_task_all_of_them() -> None:
    weak = [len(p.metadata["code"]["visible"]) == 1 for p in generate_problems(300, seed=3)]
    assert 0.2 < sum(weak) / len(weak) < 0.4  # weak_tests 0.3
    strong = generate_problems(50, seed=3, config=CodeWorldConfig(weak_tests=0.0))
    assert {len(p.metadata["code"]["visible"]) for p in strong} == {3}

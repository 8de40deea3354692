"""Training data: split by problem (no leakage) and per-step targets under every option."""

from __future__ import annotations

import pytest

from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.training.data import IGNORE, outcome_targets, split_by_problem, step_targets


def _trace(ratings, scores=None, answer_correct=None, pid="p") -> Trace:
    gold = Provenance(method="gold", actor="world:local")
    steps = [Step(text=f"s{i}", labels=[Label(rating=r, provenance=gold)]) for i, r in enumerate(ratings)]
    if scores is not None:
        mc = Provenance(method="mc_soft")
        for step, s in zip(steps, scores, strict=True):
            step.labels.append(Label(score=s, provenance=mc))
    return Trace(id=f"t{pid}", problem=Problem(id=pid, text="q"), steps=steps, answer_correct=answer_correct)


def test_split_keeps_every_problem_on_one_side(small_world):
    train, dev = split_by_problem(small_world, 0.2, seed=3)
    assert {t.problem.id for t in train}.isdisjoint({t.problem.id for t in dev})
    assert len(train) + len(dev) == len(small_world)
    assert len({t.problem.id for t in dev}) == 6
    assert split_by_problem(small_world, 0.2, seed=3)[1] == dev  # deterministic


def test_mask_after_first_error_is_the_default_shape():
    t = _trace([1, 0, -1, 1, -1])
    args = ("gold", "hard", 2)
    assert step_targets(t, *args, "positive", "mask", False) == [1, 1, 0, IGNORE, IGNORE]
    assert step_targets(t, *args, "positive", "keep", False) == [1, 1, 0, 1, 0]
    assert step_targets(t, *args, "negative", "mask", False) == [1, 0, 0, IGNORE, IGNORE]


def test_three_classes_soft_scores_and_last_step_only():
    t = _trace([1, 0, -1], scores=[0.9, 0.6, 0.0])
    assert step_targets(t, "gold", "hard", 3, "positive", "keep", False) == [2, 1, 0]
    assert step_targets(t, "mc_soft", "soft", 2, "positive", "keep", False) == pytest.approx([0.9, 0.6, 0.0])
    assert step_targets(t, "gold", "hard", 2, "positive", "keep", True) == [IGNORE, IGNORE, 0]


def test_orm_targets_only_the_last_step():
    assert outcome_targets(_trace([1, -1, 1], answer_correct=True)) == [IGNORE, IGNORE, 1.0]
    assert outcome_targets(_trace([1, 1], answer_correct=None)) == [IGNORE, IGNORE]

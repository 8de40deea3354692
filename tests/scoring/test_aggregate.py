"""Aggregations by name, shared with search and serving."""

from __future__ import annotations

import math

import pytest

from prmkit.core.registry import UnknownNameError
from prmkit.scoring import AGGREGATIONS, aggregate

SCORES = [0.9, 0.5, 0.8]


@pytest.mark.parametrize(
    ("how", "expected"),
    [
        ("min", 0.5),
        ("prod", 0.36),
        ("last", 0.8),
        ("mean", 2.2 / 3),
        ("geomean", 0.36 ** (1 / 3)),
        ("sum", 2.2),
    ],
)
def test_each_aggregation(how, expected):
    assert aggregate(SCORES, how) == pytest.approx(expected)


def test_registry_lists_the_seven_and_suggests_on_a_typo():
    assert AGGREGATIONS.names() == ["geomean", "last", "mean", "min", "prod", "recover", "sum"]
    with pytest.raises(UnknownNameError, match="Did you mean 'mean'"):
        aggregate(SCORES, "meen")


def test_empty_trace_is_zero_and_geomean_survives_a_zero():
    assert aggregate([], "min") == 0.0
    assert aggregate([0.0, 0.5], "geomean") == pytest.approx(0.0)
    assert not math.isnan(aggregate([0.0, 1.0], "geomean"))


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        # a recovered dip: 0.2 is followed by 0.8 (the retry): pairs 0.9, 0.8, 0.9, the last step 0.9
        ([0.9, 0.2, 0.8, 0.9], 0.8),
        # a persistent error: two low steps in a row, the first forgiven only up to the second's 0.3
        ([0.9, 0.2, 0.3, 0.9], 0.3),
        # a low last step has no next step to forgive it
        ([0.9, 0.8, 0.1], 0.1),
        # one step: that step
        ([0.4], 0.4),
    ],
)
def test_recover_forgives_a_low_step_only_when_the_next_scores_higher(scores, expected):
    assert aggregate(scores, "recover") == pytest.approx(expected)
    assert aggregate(scores, "recover") >= aggregate(scores, "min")


def test_recover_of_no_steps_is_zero_like_every_aggregation():
    assert aggregate([], "recover") == 0.0

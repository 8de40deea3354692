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


def test_registry_lists_the_six_and_suggests_on_a_typo():
    assert AGGREGATIONS.names() == ["geomean", "last", "mean", "min", "prod", "sum"]
    with pytest.raises(UnknownNameError, match="Did you mean 'mean'"):
        aggregate(SCORES, "meen")


def test_empty_trace_is_zero_and_geomean_survives_a_zero():
    assert aggregate([], "min") == 0.0
    assert aggregate([0.0, 0.5], "geomean") == pytest.approx(0.0)
    assert not math.isnan(aggregate([0.0, 1.0], "geomean"))

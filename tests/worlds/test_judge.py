"""The noisy judge every world shares (:mod:`prmkit.worlds.judge`), for each built-in world."""

from __future__ import annotations

import pytest

from prmkit.core.protocols import Judge
from prmkit.worlds.registry import world
from tests.worlds.conftest import WORLD_NAMES


@pytest.mark.parametrize(
    ("name", "lenient"),
    [
        ("arithmetic", {"shared_beliefs": 0.0}),
        ("agent", {"loophole_miss_rate": 0.0}),
        ("code", {"loophole_miss_rate": 0.0, "shared_beliefs": 0.0}),
    ],
)
def test_a_perfect_judge_gives_the_gold_ratings_and_a_noisy_one_the_same_verdict_twice(
    name: str, lenient: dict[str, float]
) -> None:
    w = world(name)
    traces = w.gold_label(w.sample_traces(w.generate_problems(6, seed=3), 2, seed=1))
    perfect = w.judge(miss_rate=0.0, false_alarm_rate=0.0, **lenient)  # and not lenient where the world is
    noisy = w.judge(miss_rate=0.5, false_alarm_rate=0.3, seed=7)
    assert isinstance(perfect, Judge) and perfect.name == f"{name}-judge"
    for t in traces:
        local = [s.labels[0].rating for s in t.steps]  # the first gold label of a step: its own rating
        assert perfect.judge(t.problem, t.steps).ratings == local
        assert noisy.judge(t.problem, t.steps) == noisy.judge(t.problem, t.steps)


@pytest.mark.parametrize("name", WORLD_NAMES)
def test_options_are_keywords_and_rates_are_probabilities(name: str) -> None:
    judge = world(name).judge
    with pytest.raises(ValueError, match=r"false_alarm_rate: expected a probability in \[0, 1\], found 2"):
        judge(false_alarm_rate=2)
    with pytest.raises(TypeError):
        judge(0.1)

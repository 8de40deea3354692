"""The rules every world's configs follow (:mod:`prmkit.worlds.config`, :mod:`prmkit.worlds.splits`)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from prmkit.worlds.agent import AgentConfig, AgentWorldConfig
from prmkit.worlds.agent import generate_problem as agent_problem
from prmkit.worlds.arithmetic import PolicyConfig, WorldConfig
from prmkit.worlds.arithmetic import generate_problem as world_problem
from prmkit.worlds.code import CodeAgentConfig
from prmkit.worlds.code import generate_problem as code_problem


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: WorldConfig(min_ops=4, max_ops=3), "min_ops (4) must be <= max_ops (3)"),
        (lambda: WorldConfig(heldout_min_ops=9), "heldout_min_ops (9) must be <= heldout_max_ops (8)"),
        (lambda: AgentWorldConfig(min_terms=3, max_terms=2), "min_terms (3) must be <= max_terms (2)"),
        (
            lambda: AgentWorldConfig(heldout_max_terms=2),
            "heldout_min_terms (3) must be <= heldout_max_terms (2)",
        ),
    ],
)
def test_length_knobs_must_be_in_order_in_both_splits(make, message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make()


def test_held_out_problems_read_the_heldout_twins() -> None:
    assert WorldConfig().ops_range("test") == (2, 5) and WorldConfig().ops_range("heldout") == (6, 8)
    assert AgentWorldConfig().terms_range("heldout") == (3, 4, 6)


@pytest.mark.parametrize(
    "config",
    [PolicyConfig(temperature=40 / 7), AgentConfig(temperature=8.0), CodeAgentConfig(temperature=10.0)],
)
def test_rates_scale_with_temperature_and_never_sum_past_one(config) -> None:
    rates = config.rates()
    assert list(rates) == list(type(config).EVENTS)
    assert sum(rates.values()) == pytest.approx(1.0)
    assert PolicyConfig(temperature=0.5).rates()["early_answer"] == pytest.approx(0.015)


@pytest.mark.parametrize("generate_problem", [world_problem, agent_problem, code_problem])
def test_an_unknown_split_is_named_with_the_three(generate_problem) -> None:
    with pytest.raises(ValueError, match=r"unknown split 'dev'; expected one of train, test, heldout"):
        generate_problem(0, split="dev")

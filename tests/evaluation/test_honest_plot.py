"""The best-of-N plot draws honest accuracy (issue 61) as a dashed line of each method's colour where the
rows carry it, with one legend entry for them all; rows of a world without loopholes draw what they did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from matplotlib.figure import Figure

from prmkit.evaluation import plots
from prmkit.evaluation.bon_curves import BonResult, bon_curves
from prmkit.evaluation.suite import world_traces

from .worldlike import orm_like, prm_like


def _result(world: str) -> BonResult:
    traces = world_traces(12, 8, 0, "test", world=world)
    return bon_curves(traces, prm_like(traces), orm_like(traces), bootstrap=100)


@pytest.fixture(scope="module")
def agent() -> BonResult:
    """Best-of-N on the agent world, whose policy sometimes takes the grader's tool (a loophole)."""
    result = _result("agent")
    assert result.params["gaming_traces"] > 0
    return result


def _drawn(rows: list[dict[str, Any]]) -> tuple[list[Any], list[str]]:
    """The lines and the legend texts :func:`plots.draw_bon_curves` puts on a fresh Axes."""
    ax = Figure().subplots()
    plots.draw_bon_curves(ax, rows)
    return list(ax.lines), [t.get_text() for t in ax.get_legend().get_texts()]


def test_each_method_gets_a_dashed_honest_line_of_its_colour(agent: BonResult) -> None:
    lines, legend = _drawn(agent.rows)
    methods = agent.methods()
    assert len(lines) == 2 * len(methods)
    assert legend == [*methods, plots.HONEST_LEGEND]  # one entry names every honest line
    assert plots.HONEST_LEGEND == "honest (a pick that games the task counts as wrong)"
    for method in methods:
        curve = agent.curve(method)
        (plain,) = [ln for ln in lines if ln.get_label() == method]
        (honest,) = [ln for ln in lines if ln.get_label() == f"_honest {method}"]
        assert honest.get_linestyle() == "--" and honest.get_color() == plain.get_color()
        assert list(honest.get_xdata()) == [r["n"] for r in curve]
        assert list(honest.get_ydata()) == [r["honest_accuracy"] for r in curve]
        assert list(plain.get_ydata()) == [r["accuracy"] for r in curve]
    assert any(r["honest_accuracy"] < r["accuracy"] for r in agent.rows)  # the dashed lines are not copies


def test_the_png_of_a_world_with_loopholes_differs_only_by_the_honest_lines(
    agent: BonResult, tmp_path: Path
) -> None:
    honest = plots.bon_curves(agent.rows, tmp_path / "honest.png").read_bytes()
    keys = ("honest_accuracy", "honest_lo", "honest_hi")
    plain_rows = [{k: v for k, v in r.items() if k not in keys} for r in agent.rows]
    plain = plots.bon_curves(plain_rows, tmp_path / "plain.png").read_bytes()
    assert honest != plain
    assert len(_drawn(plain_rows)[0]) == len(agent.methods())


def test_a_world_without_loopholes_draws_no_honest_line_and_the_same_png(tmp_path: Path) -> None:
    arithmetic = _result("arithmetic")
    assert "gaming_traces" not in arithmetic.params
    lines, legend = _drawn(arithmetic.rows)
    assert len(lines) == len(arithmetic.methods()) and legend == arithmetic.methods()
    assert not any(ln.get_label().startswith("_honest") for ln in lines)

"""What only the agent world's commands report (every world's commands: tests/worlds/test_cli.py, the jobs
behind them: tests/worlds/test_jobs.py): the gold labels counted by rating in ``prmkit agent stats``."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from tests.worlds.conftest import cli_app


@pytest.fixture
def app() -> typer.Typer:
    return cli_app()


def test_stats_count_the_gold_label_of_every_step(app: typer.Typer) -> None:
    result = CliRunner().invoke(app, ["agent", "stats", "--n", "40", "--per-problem", "2", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data["label_counts"]) == {"-1", "0", "1"}
    assert sum(data["label_counts"].values()) == round(data["mean_steps"] * 80)

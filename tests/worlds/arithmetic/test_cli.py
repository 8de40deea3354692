"""What only the world's commands do (every world's: tests/worlds/test_cli.py and test_jobs.py): the
systematic-error flags reach its policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from prmkit.formats.inputs import read_traces
from tests.worlds.conftest import cli_app


@pytest.fixture
def app() -> typer.Typer:
    return cli_app()


def test_systematic_flags_reach_the_policy(app: typer.Typer, tmp_path: Path) -> None:
    runner = CliRunner()
    problems, traces = tmp_path / "p.jsonl", tmp_path / "t.jsonl"
    assert runner.invoke(app, ["arithmetic", "generate", "--n", "20", "-o", str(problems)]).exit_code == 0
    recipe = tmp_path / "policy.yaml"  # no independent errors; the flags override its systematic: 0.2
    recipe.write_text(
        "arithmetic_slip: 0\nwrong_quantity: 0\nwrong_operation: 0\ndropped_step: 0\n"
        "irrelevant_step: 0\nearly_answer: 0\nlucky: 0\nmisconceptions: 0\nsystematic: 0.2\n"
    )
    flags = ["--policy-config", str(recipe), "--systematic", "1", "--systematic-rate", "1"]
    result = runner.invoke(
        app, ["arithmetic", "sample", str(problems), "--per-problem", "3", *flags, "-o", str(traces)]
    )
    assert result.exit_code == 0, result.output
    items = read_traces(traces)
    # every problem has a misconception and every sample makes it
    assert all(t.metadata["systematic"] is not None for t in items)
    for i in range(0, len(items), 3):
        assert len({tuple(s.text for s in t.steps) for t in items[i : i + 3]}) == 1
    result = runner.invoke(app, ["arithmetic", "stats", "--n", "30", "--per-problem", "2", "--json", *flags])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["process_correct"] == 0.0

"""``prmkit bon | vote | beam | resample`` through the real CLI, on world problems with the oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core.dataset import write_jsonl
from prmkit.search.bon import run_bon
from prmkit.search.config import BonConfig
from prmkit.worlds.arithmetic import generate_problems


@pytest.fixture
def problem_file(tmp_path: Path) -> Path:
    path = tmp_path / "problems.jsonl"
    write_jsonl(path, generate_problems(6, seed=1, split="test"))
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["bon", "--scorer", "arithmetic-oracle", "--n", "4", "--aggregation", "prod"],
        ["vote", "--n", "4"],
        ["vote", "--n", "4", "--scorer", "arithmetic-oracle"],
        ["beam", "--scorer", "arithmetic-oracle", "--n", "4", "--beam-width", "2"],
        ["beam", "--scorer", "arithmetic-oracle", "--n", "4", "--beam-width", "2", "--dvts"],
        ["resample", "--scorer", "arithmetic-oracle", "--budget", "20"],
    ],
)
def test_search_commands(problem_file: Path, tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(
        app, [args[0], str(problem_file), "--out", str(out), *args[1:], "--limit", "5"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["problems"] == 5 and 0.0 <= summary["accuracy"] <= 1.0
    assert summary["steps_generated_per_problem"] > 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 5 and {"answer", "correct", "steps_generated"} <= set(rows[0])


def test_cli_mirrors_api(problem_file: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    cli = runner.invoke(
        app, ["bon", str(problem_file), "-o", str(tmp_path / "a.jsonl"), "--scorer", "arithmetic-oracle"]
    )
    config = BonConfig(
        problems=problem_file,
        scorer="arithmetic-oracle",
        out=tmp_path / "b.jsonl",
        traces_out=tmp_path / "t.jsonl",
    )
    api = run_bon(config, show_progress=False)
    assert json.loads(cli.stdout) == api
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()
    assert len((tmp_path / "t.jsonl").read_text().splitlines()) == 6


def test_concurrency_flag_keeps_results(problem_file: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    for c in ("1", "4"):
        args = [
            "beam",
            str(problem_file),
            "-o",
            str(tmp_path / f"{c}.jsonl"),
            "--scorer",
            "arithmetic-oracle",
        ]
        result = runner.invoke(app, [*args, "--n", "4", "--beam-width", "2", "--concurrency", c])
        assert result.exit_code == 0, result.output
    assert (tmp_path / "1.jsonl").read_text() == (tmp_path / "4.jsonl").read_text()


def test_unknown_aggregation_is_named(problem_file: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "bon",
            str(problem_file),
            "-o",
            str(tmp_path / "x.jsonl"),
            "--scorer",
            "arithmetic-oracle",
            "--aggregation",
            "mni",
        ],
    )
    assert result.exit_code == 2
    assert "Did you mean 'min'" in result.output

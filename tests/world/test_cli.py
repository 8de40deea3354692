"""``prmkit world generate | sample | check | stats`` run for real, and the functions they call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from prmkit.cli.world import register
from prmkit.core.dataset import write_jsonl
from prmkit.core.errors import InputError
from prmkit.core.model import Problem, Trace
from prmkit.formats.inputs import read_problems, read_traces
from prmkit.world import check, generate, sample, stats


@pytest.fixture
def app() -> typer.Typer:
    # only this area's commands: the test does not depend on other areas' CLI modules
    root = typer.Typer()
    register(root)

    @root.callback()
    def _root() -> None: ...

    return root


def test_generate_sample_check_stats_through_the_cli(app: typer.Typer, tmp_path: Path) -> None:
    runner = CliRunner()
    problems, traces, gold = tmp_path / "problems.jsonl", tmp_path / "traces.jsonl", tmp_path / "gold.jsonl"
    result = runner.invoke(
        app, ["world", "generate", "--n", "40", "--seed", "0", "--split", "heldout", "-o", str(problems)]
    )
    assert result.exit_code == 0, result.output
    assert len(read_problems(problems)) == 40
    result = runner.invoke(app, ["world", "sample", str(problems), "--per-problem", "3", "-o", str(traces)])
    assert result.exit_code == 0, result.output
    assert len(read_traces(traces)) == 120
    result = runner.invoke(app, ["world", "check", str(traces), "-o", str(gold)])
    assert result.exit_code == 0, result.output
    assert "accuracy" in result.output
    labelled = read_traces(gold)
    assert all(t.answer_correct is not None for t in labelled)
    assert all(len(s.labels) == 2 for t in labelled for s in t.steps)
    result = runner.invoke(app, ["world", "stats", "--n", "50", "--per-problem", "2", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["traces"] == 100 and 0.0 <= data["accuracy"] <= 1.0


def test_cli_flags_and_recipes_reach_the_configs(app: typer.Typer, tmp_path: Path) -> None:
    runner = CliRunner()
    recipe = tmp_path / "world.yaml"
    recipe.write_text("max_value: 40\nmin_ops: 3\nmax_ops: 3\n")
    out = tmp_path / "p.jsonl"
    result = runner.invoke(
        app,
        [
            "world",
            "generate",
            "--n",
            "30",
            "--world-config",
            str(recipe),
            "--max-value",
            "30",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    problems = read_problems(out)
    assert {p.metadata["graph"]["max_value"] for p in problems} == {30}
    assert {len(p.metadata["graph"]["ops"]) for p in problems} == {3}
    perfect = tmp_path / "t.jsonl"
    result = runner.invoke(
        app, ["world", "sample", str(out), "--per-problem", "2", "--temperature", "0", "-o", str(perfect)]
    )
    assert result.exit_code == 0, result.output
    assert all(t.final_answer == t.problem.answer for t in read_traces(perfect))


def test_systematic_flags_reach_the_policy(app: typer.Typer, tmp_path: Path) -> None:
    runner = CliRunner()
    problems, traces = tmp_path / "p.jsonl", tmp_path / "t.jsonl"
    assert runner.invoke(app, ["world", "generate", "--n", "20", "-o", str(problems)]).exit_code == 0
    recipe = tmp_path / "policy.yaml"  # no independent errors; the flags override its systematic: 0.2
    recipe.write_text(
        "arithmetic_slip: 0\nwrong_quantity: 0\nwrong_operation: 0\ndropped_step: 0\n"
        "irrelevant_step: 0\nearly_answer: 0\nlucky: 0\nmisconceptions: 0\nsystematic: 0.2\n"
    )
    flags = ["--policy-config", str(recipe), "--systematic", "1", "--systematic-rate", "1"]
    result = runner.invoke(
        app, ["world", "sample", str(problems), "--per-problem", "3", *flags, "-o", str(traces)]
    )
    assert result.exit_code == 0, result.output
    items = read_traces(traces)
    # every problem has a misconception and every sample makes it
    assert all(t.metadata["systematic"] is not None for t in items)
    for i in range(0, len(items), 3):
        assert len({tuple(s.text for s in t.steps) for t in items[i : i + 3]}) == 1
    result = runner.invoke(app, ["world", "stats", "--n", "30", "--per-problem", "2", "--json", *flags])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["process_correct"] == 0.0


def test_functions_mirror_the_commands(tmp_path: Path) -> None:
    assert generate(10, tmp_path / "p.jsonl", seed=2) == 10
    assert sample(tmp_path / "p.jsonl", tmp_path / "t.jsonl", per_problem=2) == 20
    summary = check(tmp_path / "t.jsonl", tmp_path / "g.jsonl")
    assert summary.traces == 20 and summary.problems == 10
    assert stats(n=10, per_problem=2).traces == 20


def test_check_names_records_that_are_not_world_problems(tmp_path: Path) -> None:
    path = tmp_path / "other.jsonl"
    write_jsonl(path, [Trace(id="a", problem=Problem(id="p", text="1 + 1?", answer="2"))])
    with pytest.raises(
        InputError, match=r"other.jsonl:1: problem.metadata.graph: expected a world computation graph"
    ):
        check(path, tmp_path / "out.jsonl")

"""``prmkit agentworld generate | sample | check | stats`` run for real, and the functions they call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from prmkit.agentworld import check, generate, sample, stats
from prmkit.cli.world import register
from prmkit.core.dataset import write_jsonl
from prmkit.core.errors import InputError
from prmkit.core.model import Problem, Trace
from prmkit.formats.inputs import read_problems, read_traces


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
        app, ["agentworld", "generate", "--n", "30", "--split", "heldout", "-o", str(problems)]
    )
    assert result.exit_code == 0, result.output
    assert len(read_problems(problems)) == 30
    result = runner.invoke(
        app, ["agentworld", "sample", str(problems), "--per-problem", "3", "-o", str(traces)]
    )
    assert result.exit_code == 0, result.output
    assert len(read_traces(traces)) == 90
    result = runner.invoke(app, ["agentworld", "check", str(traces), "-o", str(gold)])
    assert result.exit_code == 0, result.output
    assert "accuracy" in result.output and "loophole" in result.output
    labelled = read_traces(gold)
    assert all(t.answer_correct is not None for t in labelled)
    assert all(
        len(s.labels) == 1 and s.labels[0].provenance.method == "gold" for t in labelled for s in t.steps
    )
    result = runner.invoke(app, ["agentworld", "stats", "--n", "40", "--per-problem", "2", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["traces"] == 80 and 0.0 <= data["accuracy"] <= 1.0
    assert sum(data["label_counts"].values()) == round(data["mean_steps"] * 80)


def test_flags_and_recipe_files_reach_the_configs(app: typer.Typer, tmp_path: Path) -> None:
    runner = CliRunner()
    recipe = tmp_path / "world.yaml"
    recipe.write_text("min_terms: 3\nmax_terms: 3\nhop_prob: 1.0\n")
    out = tmp_path / "p.jsonl"
    flags = ["--world-config", str(recipe), "--hop-prob", "0", "-o", str(out)]
    result = runner.invoke(app, ["agentworld", "generate", "--n", "20", *flags])
    assert result.exit_code == 0, result.output
    terms = [p.metadata["task"]["terms"] for p in read_problems(out)]
    assert {len(t) for t in terms} == {3} and all(len(x["hops"]) == 1 for t in terms for x in t)
    perfect = tmp_path / "t.jsonl"
    result = runner.invoke(
        app,
        ["agentworld", "sample", str(out), "--per-problem", "2", "--temperature", "0", "-o", str(perfect)],
    )
    assert result.exit_code == 0, result.output
    assert all(t.final_answer == t.problem.answer for t in read_traces(perfect))


def test_functions_mirror_the_commands(tmp_path: Path) -> None:
    assert generate(10, tmp_path / "p.jsonl", seed=2) == 10
    assert sample(tmp_path / "p.jsonl", tmp_path / "t.jsonl", per_problem=2) == 20
    summary = check(tmp_path / "t.jsonl", tmp_path / "g.jsonl")
    assert summary.traces == 20 and summary.problems == 10
    assert stats(n=10, per_problem=2).traces == 20


def test_check_names_records_that_are_not_agent_world_tasks(tmp_path: Path) -> None:
    path = tmp_path / "other.jsonl"
    write_jsonl(path, [Trace(id="a", problem=Problem(id="p", text="1 + 1?", answer="2"))])
    with pytest.raises(
        InputError, match=r"other\.jsonl:1: problem\.metadata\.task: expected an agent-world task"
    ):
        check(path, tmp_path / "out.jsonl")

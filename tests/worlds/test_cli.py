"""``prmkit <world> generate | sample | check | stats`` run for real, for each built-in world: the commands
are built from the world registry (prmkit.cli.world), so one test drives them all; what only one world's
commands do stays with that world (tests/worlds/arithmetic/test_cli.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from prmkit.core.model import Problem
from prmkit.formats.inputs import read_problems, read_traces


@pytest.mark.parametrize(
    ("name", "labels", "own_measure"),
    [("arithmetic", 2, "mean_ops"), ("agent", 1, "loophole"), ("code", 1, "loophole")],
)
def test_generate_sample_check_stats_through_the_cli(
    app: typer.Typer, tmp_path: Path, name: str, labels: int, own_measure: str
) -> None:
    runner = CliRunner()
    problems, traces, gold = tmp_path / "problems.jsonl", tmp_path / "traces.jsonl", tmp_path / "gold.jsonl"
    result = runner.invoke(
        app, [name, "generate", "--n", "30", "--seed", "0", "--split", "heldout", "-o", str(problems)]
    )
    assert result.exit_code == 0, result.output
    assert len(read_problems(problems)) == 30
    result = runner.invoke(app, [name, "sample", str(problems), "--per-problem", "3", "-o", str(traces)])
    assert result.exit_code == 0, result.output
    assert len(read_traces(traces)) == 90
    result = runner.invoke(app, [name, "check", str(traces), "-o", str(gold)])
    assert result.exit_code == 0, result.output
    assert "accuracy" in result.output and own_measure in result.output
    labelled = read_traces(gold)
    assert all(t.answer_correct is not None for t in labelled)
    assert all(len(s.labels) == labels for t in labelled for s in t.steps)
    assert all(label.provenance.method == "gold" for t in labelled for s in t.steps for label in s.labels)
    result = runner.invoke(app, [name, "stats", "--n", "40", "--per-problem", "2", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["traces"] == 80 and 0.0 <= data["accuracy"] <= 1.0 and own_measure in data


def _ops(problems: list[Problem]) -> bool:
    """Every problem has 3 operations and operands up to 30 (the flag over the recipe's 40)."""
    graphs = [p.metadata["graph"] for p in problems]
    return {g["max_value"] for g in graphs} == {30} and {len(g["ops"]) for g in graphs} == {3}


def _terms(problems: list[Problem]) -> bool:
    """Every task has 3 terms of one look-up each (the flag's hop_prob 0 over the recipe's 1)."""
    terms = [p.metadata["task"]["terms"] for p in problems]
    return {len(t) for t in terms} == {3} and all(len(x["hops"]) == 1 for t in terms for x in t)


@pytest.mark.parametrize(
    ("name", "recipe", "flags", "took"),
    [
        ("arithmetic", "max_value: 40\nmin_ops: 3\nmax_ops: 3\n", ["--max-value", "30"], _ops),
        ("agent", "min_terms: 3\nmax_terms: 3\nhop_prob: 1.0\n", ["--hop-prob", "0"], _terms),
    ],
)
def test_flags_and_recipe_files_reach_the_configs(
    app: typer.Typer,
    tmp_path: Path,
    name: str,
    recipe: str,
    flags: list[str],
    took: Callable[[list[Problem]], bool],
) -> None:
    runner = CliRunner()
    (tmp_path / "world.yaml").write_text(recipe)
    out, perfect = tmp_path / "p.jsonl", tmp_path / "t.jsonl"
    options = ["--world-config", str(tmp_path / "world.yaml"), *flags, "-o", str(out)]
    result = runner.invoke(app, [name, "generate", "--n", "20", *options])
    assert result.exit_code == 0, result.output
    assert took(read_problems(out))
    result = runner.invoke(
        app, [name, "sample", str(out), "--per-problem", "2", "--temperature", "0", "-o", str(perfect)]
    )
    assert result.exit_code == 0, result.output
    assert all(t.final_answer == t.problem.answer for t in read_traces(perfect))

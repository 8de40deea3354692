"""``prmkit code generate | sample | check | stats`` run for real on a tmp dir, and the names the one
registration derives: the policy and judge ``code``, the scorer ``code-oracle``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from prmkit.formats.inputs import read_problems, read_traces
from prmkit.policies import load_judge, load_policy
from prmkit.scoring.forms import load_scorer
from prmkit.worlds.registry import world, world_of
from tests.worlds.conftest import cli_app


def test_generate_sample_check_stats_through_the_cli(tmp_path: Path) -> None:
    runner, app = CliRunner(), cli_app()
    problems, traces, gold = tmp_path / "p.jsonl", tmp_path / "t.jsonl", tmp_path / "g.jsonl"
    for args in (
        ["code", "generate", "--n", "20", "--split", "heldout", "--hidden-tests", "6", "-o", str(problems)],
        ["code", "sample", str(problems), "--per-problem", "3", "--wrong-plan", "0.5", "-o", str(traces)],
        ["code", "check", str(traces), "-o", str(gold)],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    assert "loophole" in result.output and "false_pass" in result.output
    assert {len(p.metadata["code"]["hidden"]) for p in read_problems(problems)} == {6}
    labelled = read_traces(gold)
    assert len(labelled) == 60 and all(t.answer_correct is not None for t in labelled)
    assert all(
        len(s.labels) == 1 and s.labels[0].provenance.method == "gold" for t in labelled for s in t.steps
    )
    assert sum(t.steps[0].labels[0].rating == -1 for t in labelled) > 15  # --wrong-plan 0.5 reached the agent
    result = runner.invoke(app, ["code", "stats", "--n", "40", "--per-problem", "2", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["traces"] == 80 and sum(data["label_counts"].values()) == round(data["mean_steps"] * 80)
    assert set(data["loopholes"]) == {"edit_tests", "special_case", "skipped_run"}


def test_one_registration_gives_a_policy_a_judge_and_an_oracle() -> None:
    app: typer.Typer = cli_app()
    assert CliRunner().invoke(app, ["code", "--help"]).exit_code == 0
    w = world("code")
    (problem,) = w.generate_problems(1, seed=3)
    assert world_of(problem) is w and w.oracle_name == "code-oracle"
    (cont,) = load_policy("code", temperature=0.0).continue_from(problem, [], n=1, seed=0)
    assert cont.final_answer == problem.answer
    assert (
        load_judge("code", miss_rate=0.0, false_alarm_rate=0.0).judge(problem, cont.steps).first_error == -1
    )
    traces = w.traces(10, 4, seed=0, split="test")
    scores = load_scorer("code-oracle").score(traces)
    firsts = [next((i for i, s in enumerate(row) if s == 0.0), -1) for row in scores]
    assert firsts == [w.check_trace(t).first_error for t in traces] and max(firsts) >= 0
    assert w.behaviour("special_case")(w.check_trace(traces[0])) in (True, False)
    assert w.behaviour("misconception") is not None and w.rl is False


def test_the_evaluation_suite_and_a_recipe_take_the_code_world_by_name(tmp_path: Path) -> None:
    from prmkit.evaluation.config import WorldEvalSettings
    from prmkit.evaluation.suite import evaluate_world
    from prmkit.pipeline.recipe import Recipe

    settings = WorldEvalSettings(world="code", problems=6, per_problem=4, heldout_problems=6, beam_problems=0)
    summary = evaluate_world(load_scorer("code-oracle"), tmp_path / "eval", settings)
    assert summary["data"]["world"] == "code" and summary["data"]["world_version"] == "codeworld-2"
    subsets = {x["name"]: x["f1"] for x in summary["first_error"]["subsets"]}
    assert subsets == {"world-test": 1.0, "world-heldout": 1.0}  # the oracle finds every first error
    labels = {"rollout_policy": {"policy": "code"}, "judge": {"judge": "code"}}
    recipe = Recipe.model_validate(
        {"problems": {"source": "code", "world": {"hidden_tests": 6}}, "labels": labels}
    )
    assert recipe.evaluate.world == "code" and recipe.problems.world.hidden_tests == 6

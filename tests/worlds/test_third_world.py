"""A third world is one package plus one registration: tests/worlds/sums registered the way a plugin
registers it (a ``prmkit.worlds`` entry point naming its ``World``), then used through every path that
takes a world's name (docs/world.md#a-third-world). Nothing outside its package names it."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from typer.testing import CliRunner

import prmkit.core.registry as registry
from prmkit.formats.inputs import read_problems, read_traces
from prmkit.policies import JUDGES, POLICIES, load_judge, load_policy
from prmkit.scoring.forms import SCORER_FORMS, load_scorer, oracle_world
from prmkit.worlds.registry import WORLDS, world, world_of
from tests.worlds.conftest import cli_app

PLUGIN = EntryPoint(name="sums", value="tests.worlds.sums:WORLD", group="prmkit.worlds")
DERIVED = (POLICIES, JUDGES, SCORER_FORMS)


@pytest.fixture
def sums(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    real = registry.entry_points

    def entry_points(group: str):  # the installed plugins, plus this one
        return [*real(group=group), *([PLUGIN] if group == "prmkit.worlds" else [])]

    monkeypatch.setattr(registry, "entry_points", entry_points)
    for r in DERIVED:
        r.refresh()
    yield
    monkeypatch.undo()
    for r in DERIVED:
        r.refresh()


@pytest.mark.usefixtures("sums")
def test_one_registration_makes_a_policy_a_judge_an_oracle_and_commands(tmp_path: Path) -> None:
    assert "sums" in WORLDS.names() and "sums" in POLICIES.names() and "sums" in JUDGES.names()
    w = world("sums")
    (problem,) = w.generate_problems(1, seed=3)
    assert world_of(problem) is w
    (cont,) = load_policy("sums", slip=0.0).continue_from(problem, [], n=1, seed=0)
    assert cont.final_answer == problem.answer
    verdict = load_judge("sums", miss_rate=0.0, false_alarm_rate=0.0).judge(problem, cont.steps)
    assert verdict.first_error == -1
    taught = load_judge("sums-teacher", miss_rate=0.0, false_alarm_rate=0.0).judge(problem, cont.steps)
    assert taught.ratings == verdict.ratings and taught.raw.count("\\boxed{correct}") == len(cont.steps)
    assert oracle_world("sums-oracle") == "sums"
    slipped = w.traces(20, 4, seed=0, split="test", policy_config=w.policy_config(slip=0.5))
    scores = load_scorer("sums-oracle").score(slipped)
    firsts = [next((i for i, s in enumerate(row) if s == 0.0), -1) for row in scores]
    assert firsts == [w.check_trace(t).first_error for t in slipped] and max(firsts) >= 0

    runner, app = CliRunner(), cli_app()
    problems, traces, gold = tmp_path / "p.jsonl", tmp_path / "t.jsonl", tmp_path / "g.jsonl"
    for args in (
        ["sums", "generate", "--n", "5", "--split", "heldout", "-o", str(problems)],
        ["sums", "sample", str(problems), "--slip", "0.5", "-o", str(traces)],
        ["sums", "check", str(traces), "-o", str(gold)],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    assert all(len(p.metadata["sum"]["terms"]) == 5 for p in read_problems(problems))
    assert all(
        t.answer_correct is not None and len(s.labels) == 2 for t in read_traces(gold) for s in t.steps
    )


@pytest.mark.usefixtures("sums")
def test_the_evaluation_suite_and_a_recipe_take_the_new_world_by_name(tmp_path: Path) -> None:
    from prmkit.evaluation.config import WorldEvalSettings
    from prmkit.evaluation.suite import evaluate_world
    from prmkit.pipeline.recipe import Recipe

    settings = WorldEvalSettings(world="sums", problems=6, per_problem=4, heldout_problems=6, beam_problems=0)
    summary = evaluate_world(load_scorer("sums-oracle"), tmp_path / "eval", settings)
    assert summary["data"]["world"] == "sums" and summary["data"]["world_version"] == "sums-v1"
    subsets = {x["name"]: x["f1"] for x in summary["first_error"]["subsets"]}
    assert subsets == {"world-test": 1.0, "world-heldout": 1.0}  # the oracle finds every first error
    assert summary["first_error"]["auroc"] == 1.0
    labels = {"rollout_policy": {"policy": "sums"}, "judge": {"judge": "sums"}}
    recipe = Recipe.model_validate({"problems": {"source": "sums", "world": {"terms": 4}}, "labels": labels})
    assert recipe.evaluate.world == "sums" and recipe.problems.world.terms == 4


def test_after_the_plugin_is_gone_its_names_are_unknown_again() -> None:
    assert "sums" not in WORLDS and "sums" not in POLICIES and "sums-oracle" not in SCORER_FORMS.names()

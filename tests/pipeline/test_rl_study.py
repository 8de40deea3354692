"""The RL study as a recipe (``prmkit run recipes/rl.yaml``): its cells and draws, its stage plan, its
checks before work, and one tiny study run end to end through the CLI (two stages at a time, then one at
a time with the same numbers), cached and reported."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.cli.run import parse_sets
from prmkit.core.errors import InputError
from prmkit.pipeline import load_recipe
from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.rl_recipe import PRMS, RlStudy
from prmkit.pipeline.rl_stages import majority_answers, plan
from prmkit.pipeline.runner import stage_index
from prmkit.rl.config import RlConfig
from tests.pipeline.test_run import numbers

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "recipes" / "rl.yaml"


def _study(**overrides) -> RlStudy:
    study = load_recipe(RECIPE, overrides or None)
    assert isinstance(study, RlStudy)
    return study


def test_every_cell_of_the_recipe_is_a_valid_rl_config() -> None:
    study, raw = _study(), yaml.safe_load(RECIPE.read_text())
    cells, experiment = study.cells(), raw["experiment"]
    main = len(experiment["rewards"]) * len(experiment["seeds"]) * len(experiment.get("draws", [0]))
    assert len(cells) == main + sum(len(spec.get("seeds", [0])) for spec in experiment["extra"].values())
    assert {spec.get("prm") for spec in experiment["extra"].values()} - {None} <= set(PRMS)
    for cell in cells:
        config = cell.config("pi0", cell.prm)
        assert (
            isinstance(config, RlConfig) and config.reward == cell.rl["reward"] and config.seed == cell.seed
        )
    (hack,) = [c.rl for c in cells if c.name == "hackable"]
    assert hack["unfinished_reward"] is None and hack["steps"] == 150
    # the rl section's policy and prm are `prmkit rl --config`'s: a cell is paid by the study's own PRM
    assert {c.prm for c in cells if c.name in experiment["rewards"]} == {"prm"}


def test_the_measurement_is_the_grid_over_draws_with_200_monitor_problems() -> None:
    """``measure: true``: 2 (π0, PRM) draws x 5 RL seeds of the grid's rewards, 200 monitor problems, no
    extra cells; the recipe's own cells have as many (the setting that passed the gates)."""
    plain, measured = _study(), _study(measure=True)
    cells, rewards = measured.cells(), plain.experiment.rewards
    assert len(cells) == 2 * 5 * len(rewards) and {c.name for c in cells} == set(rewards)
    assert {(c.draw, c.seed) for c in cells} == {(d, s) for d in (0, 1) for s in range(5)}
    assert {c.rl["prompts"]["monitor_n"] for c in cells} == {200}
    assert {c.rl["prompts"]["monitor_n"] for c in plain.cells()} == {200}
    assert {c.rl["monitor_every"] for c in cells} == {50}  # first and last point: steps 0 and 100
    assert all(c.rl["prompts"]["monitor_samples"] == 4 for c in cells)  # the rl section's, merged under
    # each draw its own RL prompts and monitor problems: prompts.seed shifted by the draw
    assert {(c.draw, c.rl["prompts"]["seed"]) for c in cells} == {(0, 0), (1, 1)}
    with pytest.raises(InputError, match=r"experiment\.measure"):
        _study(measure=True, **{"experiment.measure": None})


def test_draws_shift_every_seed_and_keep_draw_0_the_recipes_own() -> None:
    study = _study()
    assert study.for_draw(0) is study
    for d in (1, 2):
        r = study.for_draw(d)
        seeds = (
            r.pi0.seed,
            r.pi0.pretrain.seed,
            r.prm.label["seed"],
            r.prm.train.seed,
            r.rl["prompts"]["seed"],
        )
        assert seeds == (d,) * 5
        assert r.prm.majority == study.prm.majority  # the weak PRMs' own settings are not shifted


def test_the_plan_builds_each_draw_then_runs_the_cells_seed_by_seed_then_the_report() -> None:
    study = _study(measure=True)
    stages = plan(study)
    names = [s.name for s in stages]
    assert names[:8] == [f"{s}-d{d}" for d in (0, 1) for s in ("problems", "pi0", "mc", "prm")]
    by = {s.name: s for s in stages}
    assert by["prm-d1"].deps == ["pi0-d1", "mc-d1"] and by["pi0-d1"].settings["seed"] == 1
    cells = [s for s in stages if s.kind == "rl"]
    assert [s.name for s in cells[:2]] == ["rl-outcome-0-d0", "rl-prm_aggregate-0-d0"]
    seeds = [int(s.name.split("-")[-2]) for s in cells]
    assert seeds == sorted(seeds)  # stopped part-way, every draw holds its first seeds
    assert by["rl-dense-3-d1"].deps == ["pi0-d1", "prm-d1"]
    assert by["rl-dense-3-d1"].settings["prompts"]["monitor_n"] == 200
    assert names[-1] == "report" and by["report"].deps == [c.stage for c in study.cells()]
    # the weak PRMs are built only where a cell names them: the plain grid's extra cells, on draw 0
    plain = {s.name: s for s in plan(_study())}
    assert plain["prm_majority-d0"].deps == ["pi0-d0", "mc_majority-d0"]
    assert plain["rl-weak_prm-0-d0"].deps == ["pi0-d0"]  # π0 itself is its PRM
    assert plain["rl-orm_as_prm-2-d0"].deps == ["pi0-d0", "orm-d0"]
    assert "orm-d1" not in by and "votes-d0" not in by


def test_load_recipe_tells_a_study_from_a_world_recipe_and_refuses_its_mistakes_at_their_line() -> None:
    assert isinstance(load_recipe(REPO / "recipes" / "world.yaml"), Recipe)
    for overrides, message in (
        ({"seeds": [1]}, "experiment.seeds"),
        ({"experiment.draws": [0, 0]}, "distinct integers"),
        ({"experiment.extra.x": {"reward": "dense", "prm": "elsewhere"}}, "prm is one of"),
        ({"experiment.rl": {"steps": 0}}, "cell rl-outcome-0-d0: steps"),
        ({"prm.label": {"rollouts": "eight"}}, "rollouts"),
        ({"prm.label": {"input": "x.jsonl"}}, "sets the labeller's files"),
        ({"pi0.world": "agentworld"}, "(?i)not a world rl runs on"),
    ):
        with pytest.raises(InputError, match=message):
            load_recipe(RECIPE, overrides)


def _check(*sets: str) -> Any:
    """``prmkit run recipes/rl.yaml --check`` with these ``--set`` items."""
    return CliRunner().invoke(app, ["run", str(RECIPE), "--check", *(a for s in sets for a in ("--set", s))])


@pytest.mark.parametrize("measure", [False, True])
def test_set_cuts_the_experiment_to_named_cells_and_seeds(measure: bool) -> None:
    """``--set experiment.only=[...]`` runs those cells alone (grid rewards or extra cells; the report's
    rewards cut to them), the grid's seeds are ``experiment.seeds`` (measuring: ``experiment.measure``'s,
    whose keys replace the experiment's), and ``measure=true`` is issue 37's measurement."""
    only = ["dense", "outcome"] + ([] if measure else ["dense_sum"])  # the measurement has no extra cells
    where = "experiment.measure" if measure else "experiment"
    sets = [*["measure=true"] * measure, f"experiment.only=[{','.join(only)}]", f"{where}.seeds=[3, 4]"]
    study = _study(**parse_sets(sets))
    cells = study.cells()
    assert {c.name for c in cells} == set(only)
    assert {c.seed for c in cells if c.name != "dense_sum"} == {3, 4}
    assert {c.draw for c in cells} == ({0, 1} if measure else {0})
    assert plan(study)[-1].settings["rewards"] == ["outcome", "dense"]  # the recipe's order, cut
    checked = _check(*sets)
    assert checked.exit_code == 0, checked.output
    assert sorted(re.findall(r"^  (rl-\S+)", checked.output, re.M)) == sorted(c.stage for c in cells)


def test_set_mistakes_are_named_at_their_set_item() -> None:
    for given, *said in (
        ("experiment.only=[densse]", "--set experiment.only=[densse]: ", "no cell named ['densse']"),
        ("experiment.seeds=[0, one]", "--set experiment.seeds=[0, one]: experiment.seeds.1: "),
        ("experiment.sedes=[1]", "--set experiment.sedes=[1]: experiment.sedes: ", "did you mean 'seeds'"),
        ("rl.stepz=3", "--set rl.stepz=3: rl.stepz: expected a known setting"),
        ("rl.lr=fast", "--set rl.lr=fast: rl.lr: "),
        ("experiment.only", "--set experiment.only: expected KEY=VALUE"),
    ):
        checked = _check(given)
        assert checked.exit_code == 2 and all(part in checked.output for part in said), checked.output
    measured = _check("measure=true", "experiment.only=[dense_sum]")  # an extra cell: not measured
    assert measured.exit_code == 2 and "extra cells []" in measured.output, measured.output


def test_the_recipe_passes_its_check_and_lists_its_stages() -> None:
    result = CliRunner().invoke(app, ["run", str(RECIPE), "--check"])
    assert result.exit_code == 0, result.output
    assert re.search(r"runs/rl: 43 stages, \d+ to run", result.output) and "rl-dense-2-d0" in result.output


def test_majority_answers_count_votes_per_problem(tmp_path: Path) -> None:
    """The reference of the ``majority`` PRM: most common final answer per problem, a tie to the answer
    sampled first, an unfinished sample (no final answer) casting no vote."""
    votes = [("p1", "5"), ("p1", "7"), ("p1", "7"), ("p2", "3"), ("p2", "4"), ("p2", None), ("p2", None)]
    path = tmp_path / "votes.jsonl"
    path.write_text("".join(json.dumps({"problem": {"id": p}, "final_answer": a}) + "\n" for p, a in votes))
    assert majority_answers(path) == {"p1": "7", "p2": "3"}


TINY = {
    "study": "rl",
    "name": "tiny RL study",
    "pi0": {"problems": 12, "per_problem": 2, "pretrain": {
        "max_steps": 5, "threads": 1, "batch_size": 8, "tiny": {"layers": 1, "width": 32, "heads": 2, "positions": "rope"}}},
    "prm": {"label": {"rollouts": 1}, "train": {"max_steps": 2, "threads": 1, "head": "likelihood", "label_source": "mc_hard"}},
    "experiment": {"rewards": ["outcome", "dense"], "seeds": [0], "draws": [0, 1], "resamples": 50},
    "rl": {"steps": 1, "group_size": 2, "batch": 1, "max_completion_length": 16, "monitor_every": 1,
           "save_every": 1, "threads": 1, "prompts": {"n": 4, "monitor_n": 2, "monitor_samples": 2}},
}  # fmt: skip
"""A study cut to seconds: two draws of a 5-step π0 and a 2-step PRM, two one-step cells each."""


@pytest.mark.slow
# TRL 1.16 itself reads the TrainingArguments names transformers deprecates, and warns about rollout_func
@pytest.mark.filterwarnings(r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning")
@pytest.mark.filterwarnings(r"ignore:You are using 'rollout_func'")
def test_a_tiny_study_runs_stage_by_stage_caches_and_reports(tmp_path: Path) -> None:
    recipe, out = tmp_path / "rl.yaml", tmp_path / "out"
    recipe.write_text(yaml.safe_dump(TINY | {"output_dir": str(out)}))
    ran = CliRunner().invoke(app, ["run", str(recipe), "--jobs", "2"])  # stages side by side
    assert ran.exit_code == 0, ran.output
    done = {p.name.rsplit("-", 1)[0]: p for p in (out / "stages").iterdir()}
    assert stage_index(out) == done  # where a reader finds each stage (experiments/rl_faithfulness.py)
    assert set(done) == {*(f"{s}-d{d}" for d in (0, 1) for s in ("problems", "pi0", "mc", "prm")),
                         *(f"rl-{r}-0-d{d}" for r in ("outcome", "dense") for d in (0, 1)), "report"}  # fmt: skip
    card = json.loads((done["rl-dense-0-d1"] / "policy" / "policy_card.json").read_text())
    assert card["reward"]["kind"] == "dense" and card["reward"]["prm"] == str(done["prm-d1"] / "model")
    results = json.loads((done["report"] / "results.json").read_text())
    assert results["components"]["pi0_prm_draws"] == 2 and set(results["per_draw"]) == {"0", "1"}
    assert set(results["cells"]["dense"]["runs"]) == {"0-0", "1-0"} and "dense − outcome" in results["paired"]
    report = (out / "report.md").read_text()
    assert "What this study shows" in report and "| dense − outcome |" in report
    assert "2 (π0, PRM) draw(s) (0, 1)" in (done["report"] / "report.md").read_text()
    alone = CliRunner().invoke(app, ["run", str(recipe), "-o", str(tmp_path / "alone")])  # one at a time
    assert alone.exit_code == 0 and numbers(tmp_path / "alone") == numbers(out), alone.output
    # run again: every stage cached; a new report setting reruns the report alone
    again = CliRunner().invoke(app, ["run", str(recipe)])
    assert again.exit_code == 0 and again.output.count(": cached") == 13, again.output
    recipe.write_text(
        yaml.safe_dump(TINY | {"output_dir": str(out), "experiment": {**TINY["experiment"], "resamples": 60}})
    )
    changed = CliRunner().invoke(app, ["run", str(recipe)])
    assert changed.output.count(": cached") == 12 and "report: done" in changed.output, changed.output

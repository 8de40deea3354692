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

from prmkit import __version__
from prmkit.cli import app
from prmkit.cli.run import parse_sets
from prmkit.core.errors import InputError
from prmkit.pipeline import load_recipe
from prmkit.pipeline.cache import stage_key
from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.rl_recipe import PRMS, RlStudy
from prmkit.pipeline.rl_stages import majority_answers, plan
from prmkit.pipeline.runner import stage_index
from prmkit.rl.config import RlConfig
from prmkit.rl.study import verdict
from tests.pipeline.test_run import numbers

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "recipes" / "rl.yaml"
GRID = REPO / "recipes" / "rl-grid.yaml"


def _study(**overrides) -> RlStudy:
    study = load_recipe(RECIPE, overrides or None)
    assert isinstance(study, RlStudy)
    return study


def keys(study: RlStudy) -> dict[str, str]:
    """Every stage's cache key, as ``prmkit run`` computes it (its name, settings and inputs' keys)."""
    found: dict[str, str] = {}
    for st in plan(study):
        found[st.name] = stage_key(st.name, st.settings, {d: found[d] for d in st.deps}, __version__)
    return found


def test_every_cell_of_the_recipe_is_a_valid_rl_config() -> None:
    study, raw = _study(), yaml.safe_load(RECIPE.read_text())
    cells, experiment = study.cells(), raw["experiment"]
    names = len(experiment["rewards"]) + len(experiment["credits"])
    main = names * len(experiment["seeds"]) * len(experiment["draws"] + experiment["claims_draws"])
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
    assert re.search(r"runs/rl: 45 stages, \d+ to run", result.output) and "rl-dense-2-d0" in result.output


def test_a_credit_axis_adds_dense_cells_and_changes_no_other_stage_key() -> None:
    """``experiment.credits``: one ``dense-<credit>`` grid cell per form, on every seed and draw, the
    ``dense`` reward under that credit; an empty list is the recipe as it was (every stage key the same),
    and a form added changes no existing cell's key (only the report's, which reads one more cell)."""
    before = keys(_study())
    assert keys(_study(**{"experiment.credits": []})) == before
    study = _study(**{"experiment.credits": ["pure", "first_error"], "experiment.draws": [0, 1]})
    after = keys(study)
    grown = {n: k for n, k in before.items() if n != "report"}
    drawn = keys(_study(**{"experiment.draws": [0, 1]}))
    assert {n: after[n] for n in drawn if n != "report"} == {n: k for n, k in drawn.items() if n != "report"}
    assert grown.items() <= after.items()
    new = {c.stage: c for c in study.cells() if c.stage not in drawn}
    assert sorted(new) == sorted(f"rl-dense-{c}-{s}-d{d}" for c in ("pure", "first_error") for s in (0, 1, 2)
                                 for d in (0, 1))  # fmt: skip
    config = new["rl-dense-pure-1-d1"].config("pi0", "prm")
    assert (config.reward, config.credit, config.seed, config.prompts.seed) == ("dense", "pure", 1, 1)
    assert config.process_weight == study.rl["process_weight"]  # every other key the rl section's
    cut = _study(
        **{"experiment.credits": ["pure", "first_error"], "experiment.only": ["outcome", "dense-pure"]}
    )
    assert {c.name for c in cut.cells()} == {"outcome", "dense-pure"}
    assert plan(cut)[-1].settings["rewards"] == ["outcome", "dense-pure"]


def test_credits_and_claims_draws_are_refused_at_their_place() -> None:
    for given, *said in (
        ("experiment.credits=[pure, prmie]", "experiment.credits.1: ", "did you mean 'prime'"),
        ("experiment.credits=[pure, pure]", "experiment.credits: ", "each credit form once"),
        ("experiment.claims_draws=[0]", "claims_draws [0] are also in draws"),
        ("experiment.claims_draws=[-1]", "experiment.claims_draws: ", "distinct integers >= 0"),
        ("experiment.only=[dense-pur]", "no cell named ['dense-pur']"),
    ):
        checked = _check("experiment.credits=[pure]" if "only" in given else "measure=false", given)
        assert checked.exit_code == 2 and all(part in checked.output for part in said), checked.output
    with pytest.raises(InputError, match=r"credit_keys names \['papo'\], not among credits"):
        load_recipe(
            RECIPE, {"experiment.credits": ["sum"], "experiment.credit_keys": {"papo": {"papo_weight": 2}}}
        )
    with pytest.raises(InputError, match=r"cell rl-dense-sum-0-d0: .*papo_weight is a parameter"):
        load_recipe(
            RECIPE, {"experiment.credits": ["sum"], "experiment.credit_keys": {"sum": {"papo_weight": 2}}}
        )
    with pytest.raises(InputError, match=r"extra cells \['dense-sum'\] take a grid cell's name"):
        load_recipe(
            RECIPE, {"experiment.credits": ["sum"], "experiment.extra.dense-sum": {"reward": "dense"}}
        )
    # a credit whose parameters the rl section sets for another form: refused at the cell, before any work
    with pytest.raises(InputError, match=r"cell rl-dense-sum-0-d0: .*credit_temperature is a parameter"):
        load_recipe(
            RECIPE, {"experiment.credits": ["sum"], "rl.credit": "pure", "rl.credit_temperature": 0.5}
        )


def test_claims_draws_run_the_grid_and_build_their_own_pi0_and_prm() -> None:
    study = _study(**{"experiment.draws": [0, 1], "experiment.claims_draws": [2]})
    cells = study.cells()
    grid = study.experiment
    assert {(c.draw, c.seed) for c in cells if c.name == "outcome"} == {
        (d, s) for d in (0, 1, 2) for s in grid.seeds
    }
    assert {c.draw for c in cells if c.name in grid.extra} == {0}
    stages = {s.name: s for s in plan(study)}
    assert stages["prm-d2"].deps == ["pi0-d2", "mc-d2"] and stages["pi0-d2"].settings["seed"] == 2
    assert stages["report"].settings["claims_draws"] == [2]
    assert "claims_draws" not in plan(_study())[-1].settings  # no claims draws: the report's key as before


def test_the_grid_recipe_is_credit_forms_against_outcome_on_the_gates_setting() -> None:
    """recipes/rl-grid.yaml: outcome, the checker's reward and every credit form prmkit's trainer runs as a
    cell, 5 seeds x 2 tuning draws + 1 claims draw, 200 monitor problems; the same π0, PRM and ``rl``
    section as recipes/rl.yaml, so its draws' π0 and PRM and the gates' cells are the same stages (the
    keys agree, and ``reuse`` takes them); its comment's cell count is the recipe's."""
    grid = load_recipe(GRID)
    assert isinstance(grid, RlStudy)
    cells, experiment = grid.cells(), grid.experiment
    assert experiment.rewards == ["outcome", "gold_process"]
    assert set(experiment.credits) == {"pure", "sum", "first_error", "papo", "prof", "pav", "anchor", "prime"}
    assert (experiment.draws, experiment.claims_draws, experiment.seeds) == ([0, 1], [2], [0, 1, 2, 3, 4])
    assert len(cells) == 10 * 5 * 3 and {c.rl["prompts"]["monitor_n"] for c in cells} == {200}
    # prime's implicit PRM learns at the policy's rate; every other form at its defaults
    assert {c.config("pi0", "prm").prime_lr for c in cells if c.name == "dense-prime"} == {grid.rl["lr"]}
    assert all("prime_lr" not in c.rl for c in cells if c.name != "dense-prime")
    assert f"= {len(cells)} cells" in GRID.read_text()
    assert grid.rl == _study().rl and grid.pi0 == _study().pi0 and grid.prm == _study().prm
    mine, measured = keys(grid), keys(_study(measure=True))
    gates = keys(load_recipe(REPO / "recipes" / "rl-gates.yaml"))
    shared = [f"{s}-d{d}" for s in ("problems", "pi0", "mc", "prm") for d in (0, 1)]
    assert {n: mine[n] for n in shared} == {n: measured[n] for n in shared}
    assert {n: k for n, k in gates.items() if n.startswith("rl-")}.items() <= mine.items()
    assert grid.reuse == [Path("runs/rl"), Path("runs/rl-gates")]
    checked = CliRunner().invoke(
        app, ["run", str(GRID), "--check"]
    )  # 3 draws' 4 stages, the cells, the report
    assert checked.exit_code == 0 and f"runs/rl-grid: {3 * 4 + len(cells) + 1} stages" in checked.output, (
        checked.output
    )


def test_the_pure_failure_cells_are_prm_only_rl_with_and_without_the_anchor() -> None:
    """Issue 60's PURE cells: the dense reward alone (step scores only) from the draw's learned PRM, 300
    steps, PURE's credit and, beside it, PURE's anchor (the verifiable reward on 10 % of prompts)."""
    cells = {c.name: c for c in _study().cells() if c.name.startswith("pure_")}
    assert set(cells) == {"pure_only", "pure_anchor"}
    for name, credit in (("pure_only", "pure"), ("pure_anchor", "anchor")):
        cell = cells[name]
        config = cell.config("pi0", cell.prm)
        assert (cell.prm, cell.draw, config.reward, config.credit) == ("prm", 0, "dense", credit)
        assert config.steps == 300 and config.process_weight == 1.0 and config.monitor_every < config.steps
    assert cells["pure_anchor"].config("pi0", "prm").anchor_share == 0.1


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


@pytest.mark.slow
@pytest.mark.filterwarnings(r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning")
@pytest.mark.filterwarnings(r"ignore:You are using 'rollout_func'")
def test_a_tiny_credit_grid_with_a_claims_draw_runs_and_reports_both_sides(tmp_path: Path) -> None:
    """Issue 60's grid cut to seconds: outcome and two credit forms on tuning draw 0 and claims draw 1;
    results.json holds the tuning and the claims side apart, each credit cell's verdict against outcome
    and its steps to outcome's final answer accuracy, and ``--check`` lists every cell, done."""
    experiment = {"rewards": ["outcome"], "credits": ["sum", "pure"], "seeds": [0], "draws": [0],
                  "claims_draws": [1], "resamples": 50}  # fmt: skip
    recipe, out = tmp_path / "grid.yaml", tmp_path / "out"
    recipe.write_text(yaml.safe_dump(TINY | {"output_dir": str(out), "experiment": experiment}))
    ran = CliRunner().invoke(app, ["run", str(recipe)])
    assert ran.exit_code == 0, ran.output
    done = {p.name.rsplit("-", 1)[0]: p for p in (out / "stages").iterdir()}
    cells = {f"rl-{n}-0-d{d}" for n in ("outcome", "dense-sum", "dense-pure") for d in (0, 1)}
    assert cells <= set(done) and {"pi0-d1", "prm-d1", "report"} <= set(done)
    card = json.loads((done["rl-dense-pure-0-d1"] / "policy" / "policy_card.json").read_text())
    assert card["reward"]["kind"] == "dense" and card["reward"]["prm"] == str(done["prm-d1"] / "model")
    config = json.loads((done["rl-dense-pure-0-d1"] / "policy" / "rl_config.json").read_text())
    assert config["credit"] == "pure" and config["reward"] == "dense"
    results = json.loads((done["report"] / "results.json").read_text())
    sides = results["sides"]
    assert [(s["side"], s["draws"]) for s in sides.values()] == [("tuning", [0]), ("claims", [1])]
    for side in sides.values():
        assert set(side["verdicts"]) == {"dense-sum − outcome", "dense-pure − outcome"}
        for pair, verdicts in side["verdicts"].items():
            assert set(verdicts) == {"process_correct", "lucky", "answer_accuracy"}
            for metric, said in verdicts.items():
                assert said == verdict(side["paired"][pair][metric])
    assert set(results["sample_efficiency"]["steps"]) == {"outcome", "dense-sum", "dense-pure"}
    assert set(results["sample_efficiency"]["target"]) == {"0-0", "1-0"}
    report = (done["report"] / "report.md").read_text()
    assert "## Tuning and claims sides" in report and "| claims | 1 | dense-pure − outcome |" in report
    assert "Claims side (draw(s) 1): difference from outcome's Δ" in (out / "report.md").read_text()
    checked = CliRunner().invoke(app, ["run", str(recipe), "--check"])
    assert checked.exit_code == 0, checked.output
    listed = dict(re.findall(r"^  (rl-\S+)\s.*; (\S+(?: \S+)?)$", checked.output, re.M))
    assert set(listed) == cells and set(listed.values()) == {"done"}, checked.output

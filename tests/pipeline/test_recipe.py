"""Recipe mistakes are caught before any work starts, each with its line and what was expected."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core.errors import InputError
from prmkit.pipeline import load_recipe
from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.stages import plan

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(text)
    return path


def stage_keys(tmp_path: Path, text: str) -> dict[str, str]:
    """Every planned stage's cache key for the recipe ``text`` (what decides whether a stage reruns)."""
    from prmkit.pipeline.cache import stage_key

    out: dict[str, str] = {}
    for st in plan(load_recipe(write(tmp_path, text))):
        out[st.name] = stage_key(st.name, st.settings, {d: out[d] for d in st.deps}, "v")
    return out


def errors(tmp_path: Path, text: str) -> str:
    with pytest.raises(InputError) as err:
        load_recipe(write(tmp_path, text))
    return str(err.value)


def test_shipped_recipes_are_valid():
    recipe = load_recipe(REPO / "recipes" / "world.yaml")
    names = [s.name for s in plan(recipe)]
    assert names[:2] == ["problems", "mc"] and "eval-prm-gold" in names and "eval-orm" in names
    # every model measured once more on the claims set, after the tuning-set evaluations
    evals = [n.removeprefix("eval-") for n in names if n.startswith("eval-")]
    assert names[-len(evals) :] == [f"claims-{m}" for m in evals]


def test_the_claims_set_is_fresh_and_adding_it_reruns_no_evaluation(tmp_path):
    def keys(text: str) -> dict[str, str]:
        return stage_keys(tmp_path, text)

    base = "name: x\ntrain: {orm: null}\nevaluate: {seed: 7"
    before, after = keys(base + "}\n"), keys(base + ", claims_seed: 8}\n")
    assert {k: v for k, v in after.items() if not k.startswith("claims-")} == before
    assert "claims-prm-gold" in after
    assert "claims_seed 7 is the tuning seed" in errors(tmp_path, base + ", claims_seed: 7}\n")


def test_compared_models_must_be_the_recipes_and_comparing_reruns_nothing(tmp_path):
    def keys(text: str) -> dict[str, str]:
        return stage_keys(tmp_path, text)

    base = "name: x\ntrain: {prm_sources: [gold, mc_hard]}\nevaluate: {seed: 7"
    compare = ", compare: [[prm-gold, prm-mc_hard], [prm-mc_hard, 'lm (zero-shot)']]}\n"
    assert keys(base + compare) == keys(base + "}\n")
    assert load_recipe(write(tmp_path, base + compare)).models() == [
        "lm (zero-shot)", "prm-gold", "prm-mc_hard", "orm"
    ]  # fmt: skip
    msg = errors(tmp_path, base + ", compare: [[prm-gold, prm-judge]]}\n")
    assert "evaluate.compare[0]: expected two different models of this recipe" in msg
    assert "found unknown ['prm-judge']" in msg
    assert "'prm-gold' against itself" in errors(tmp_path, base + ", compare: [[prm-gold, prm-gold]]}\n")


def test_unknown_key_suggests_the_closest(tmp_path):
    msg = errors(tmp_path, "name: x\nlabels:\n  rolouts: 8\n")
    assert (
        f"{tmp_path / 'recipe.yaml'}:3: labels.rolouts: expected a known setting (did you mean 'rollouts'?)"
        in msg
    )


def test_wrong_type_names_line_field_and_value(tmp_path):
    msg = errors(tmp_path, "problems:\n  n: many\n")
    assert "recipe.yaml:2: problems.n: expected input should be a valid integer" in msg and "'many'" in msg


def test_nested_command_config_is_checked(tmp_path):
    msg = errors(tmp_path, "train:\n  prm:\n    separator: comma\n")
    assert (
        "recipe.yaml:3: train.prm.separator: expected input should be 'token', 'ki', 'extra_0' or 'newline'"
        in msg
    )


def test_every_mistake_at_once(tmp_path):
    msg = errors(tmp_path, "problems:\n  n: 1\nlabels:\n  rollouts: 0\nbogus: 1\n")
    assert "3 problem(s)" in msg
    assert "problems.n" in msg and "labels.rollouts" in msg and "recipe.yaml:5: bogus" in msg


def test_missing_files(tmp_path):
    msg = errors(tmp_path, "problems:\n  source: nowhere.jsonl\n")
    assert "problems file 'nowhere.jsonl' does not exist" in msg
    with pytest.raises(InputError, match="no such file"):
        load_recipe(tmp_path / "absent.yaml")


def test_bad_yaml_points_at_the_line(tmp_path):
    msg = errors(tmp_path, "name: x\nlabels: [a\n")
    assert "recipe.yaml:3: (yaml): expected valid YAML" in msg


def test_sources_the_recipe_does_not_make(tmp_path):
    msg = errors(tmp_path, "labels:\n  methods: [mc]\ntrain:\n  prm_sources: [judge]\n")
    assert "train.prm_sources ['judge'] are not made by this recipe" in msg


def test_cli_check_lists_stages_and_errors_exit_2(tmp_path):
    runner = CliRunner()
    ok = runner.invoke(app, ["run", str(REPO / "recipes" / "world.yaml"), "--check"])
    assert ok.exit_code == 0, ok.output
    assert "prm-mc_hard" in ok.output and "reads pretrain, judge" in ok.output
    bad = runner.invoke(app, ["run", str(write(tmp_path, "labels:\n  rolouts: 8\n")), "--check"])
    assert bad.exit_code == 2
    assert "did you mean 'rollouts'" in bad.output


def test_every_labeller_gets_its_own_config_from_the_labels_section(tmp_path):
    """The shared settings go to the labellers whose configs have them (a filter has no rollouts or job
    folder); ``options`` change one labeller only; a name no labeller has is refused with the closest."""
    recipe = load_recipe(
        write(tmp_path, "labels:\n  rollouts: 3\n  options:\n    binary_search: {batch: 4}\n")
    )
    files = {"input": tmp_path / "in.jsonl", "output": tmp_path / "out.jsonl", "work_dir": tmp_path / "job"}
    configs = {name: recipe.labels.config(name, files) for name in recipe.labels.methods}
    assert configs["mc"].rollouts == 3 and configs["binary_search"].batch == 4
    assert configs["consensus"].mode == "first_error" and not hasattr(configs["consensus"], "work_dir")
    assert "did you mean 'binary_search'" in errors(tmp_path, "labels:\n  methods: [mc, binary_searh]\n")
    assert "consensus needs 'judge'" in errors(tmp_path, "labels:\n  methods: [mc, consensus]\n")
    assert "batchh" in errors(tmp_path, "labels:\n  options:\n    binary_search: {batchh: 4}\n")


def test_prm_runs_plan_their_own_settings_and_the_size_they_borrow(tmp_path):
    """``train.prm_runs``: a PRM with changed settings (here the likelihood head beside the default
    classifier), one trained on a random subset as large as another source's (MC on as many traces as
    consensus kept), one on the very traces another source kept (soft MC after filtering); a mistake in a run's settings is located like any other."""
    text = (
        "train:\n  prm_sources: [gold]\n  prm_runs:\n"
        "    - {name: gold-likelihood, source: gold, prm: {head: likelihood}}\n"
        "    - {name: mc-subset, source: mc_hard, size_of: consensus}\n"
        "    - {name: soft-kept, source: mc_soft, traces_of: consensus}\n"
        "    - {name: mc-budget, source: mc_hard, fraction: 0.01}\n"
    )
    recipe = load_recipe(write(tmp_path, text))
    stages = {s.name: s for s in plan(recipe)}
    assert stages["prm-gold-likelihood"].settings["prm"]["head"] == "likelihood"
    assert stages["prm-gold"].settings["head"] == "classifier"  # the recipe's shared prm settings
    assert stages["prm-mc-subset"].deps == ["pretrain", "judge", "consensus"]
    assert stages["prm-mc-subset"].settings["size_of"] == "consensus" and "eval-prm-mc-subset" in stages
    assert stages["prm-soft-kept"].deps == ["pretrain", "judge", "consensus"]
    assert stages["prm-soft-kept"].settings["traces_of"] == "consensus"
    assert "traces_of" not in stages["prm-mc-subset"].settings  # the keys of earlier runs stay the same
    assert "fraction" not in stages["prm-mc-subset"].settings
    assert stages["prm-mc-budget"].settings["fraction"] == 0.01 and stages["prm-mc-budget"].deps == [
        "pretrain",
        "judge",
    ]
    both = text.replace("traces_of: consensus}", "traces_of: consensus, size_of: judge}")
    assert "give one of size_of, traces_of and fraction" in errors(tmp_path, both)
    assert "greater than 0" in errors(tmp_path, text.replace("fraction: 0.01", "fraction: 0"))
    msg = errors(tmp_path, text.replace("head: likelihood", "hed: likelihood"))
    assert ":4: train.prm_runs.0.hed: expected a known setting" in msg
    msg = errors(tmp_path, text.replace("{head: likelihood}", "{head: nope}"))
    assert (
        ":4: train.prm_runs.0.head: expected input should be 'classifier', 'likelihood' or 'critic', found 'nope'"
        in msg
    )


def test_world_configs_are_read_as_the_named_worlds_and_their_errors_located():
    from pydantic import ValidationError

    from prmkit.worlds.arithmetic.config import PolicyConfig

    r = Recipe.model_validate({"problems": {"source": "world", "policy": {"misconceptions": 0.5}}})
    assert isinstance(r.problems.policy, PolicyConfig) and r.problems.policy.misconceptions == 0.5
    assert r.evaluate.world == "arithmetic" and isinstance(
        r.evaluate.policy, PolicyConfig
    )  # the old name, read as the new
    for given, where in (
        ({"problems": {"policy": {"misconceptons": 0.5}}}, ("problems", "policy", "misconceptons")),
        ({"evaluate": {"policy": {"sytematic": 1}}}, ("evaluate", "policy", "sytematic")),
        ({"problems": {"world": {"max_ops": "x"}}}, ("problems", "world", "max_ops")),
    ):
        with pytest.raises(ValidationError) as err:
            Recipe.model_validate(given)
        assert err.value.errors()[0]["loc"] == where
    with pytest.raises(ValidationError, match="neither an embedded world"):
        Recipe.model_validate({"problems": {"source": "wrld"}})


@pytest.mark.parametrize("name", ["world.yaml", "agent.yaml", "labels-study.yaml"])
def test_every_shipped_recipe_passes_its_check(name):
    """What docs tell users to run is valid as shipped: typed sections, known sources, a stage plan.
    (hf-endpoint.yaml needs the user's files: tests/pipeline/test_hf_endpoint.py runs it with them;
    rl.yaml is `prmkit rl`'s config and an RL study, `prmkit run recipes/rl.yaml`, checked by
    tests/pipeline/test_rl_study.py.)"""
    ok = CliRunner().invoke(app, ["run", str(REPO / "recipes" / name), "--check"])
    assert ok.exit_code == 0, ok.output
    assert "pretrain" in ok.output or "prm" in ok.output, ok.output


def test_set_changes_any_key_before_the_check_and_names_its_mistakes_at_the_item():
    """``--set KEY=VALUE``: values read as YAML (a list, null, a number), applied before the recipe is
    checked and planned; a mistake is named at its ``--set`` item with the file's own message."""
    world = str(REPO / "recipes" / "world.yaml")
    sets = ["labels.methods=[mc]", "train.orm=null", "train.prm_sources=[mc_hard]", "problems.n=12"]
    ok = CliRunner().invoke(app, ["run", world, "--check", *(a for s in sets for a in ("--set", s))])
    assert ok.exit_code == 0, ok.output
    stages = re.findall(r"^  (\S+)", ok.output, re.M)
    assert "mc" in stages and "judge" not in stages and "orm" not in stages and "prm-gold" not in stages
    for given, said in (
        ("problems.nn=3", "--set problems.nn=3: problems.nn: expected a known setting (did you mean 'n'?)"),
        ("problems.n=many", "--set problems.n=many: problems.n: expected input should be a valid integer"),
        ("problems.n=[1", "--set problems.n=[1: the value is not YAML"),
        ("=3", "--set =3: expected KEY=VALUE"),
    ):
        refused = CliRunner().invoke(app, ["run", world, "--check", "--set", given])
        assert refused.exit_code == 2 and said in refused.output, refused.output


def test_cli_check_says_which_stages_are_done_reused_or_to_run(tmp_path):
    """``--check`` with ``--reuse``: the stage done in the other folder (with what it declares it writes)
    is "reused from" it, one done there without its outputs is not, the rest are "to run"; nothing is
    written."""
    from prmkit import __version__
    from prmkit.pipeline.cache import stage_key
    from prmkit.pipeline.sweep import for_seed

    problems, mc = plan(for_seed(load_recipe(REPO / "recipes" / "world.yaml"), 0))[:2]
    first = stage_key(problems.name, problems.settings, {}, __version__)
    second = stage_key(mc.name, mc.settings, {"problems": first}, __version__)
    for stage, key, outputs in ((problems, first, problems.outputs), (mc, second, ())):
        done = tmp_path / "old" / "seed-0" / "stages" / f"{stage.name}-{key}"
        done.mkdir(parents=True)
        (done / "DONE.json").write_text('{"seconds": 1.0, "summary": {}}')
        for name in outputs:
            (done / name).write_text("x")
    args = ["run", str(REPO / "recipes" / "world.yaml"), "-o", str(tmp_path / "new"), "--seeds", "0"]
    result = CliRunner().invoke(app, [*args, "--reuse", str(tmp_path / "old"), "--check"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"{tmp_path / 'new' / 'seed-0'}: ") and lines[0].endswith(" to run")
    assert lines[1].split()[0] == "problems" and lines[1].endswith(
        f"reused from {tmp_path / 'old' / 'seed-0'}"
    )
    assert lines[2].split()[0] == "mc" and lines[2].endswith("; to run")  # done there, its outputs missing
    assert not (tmp_path / "new").exists()


def test_a_backend_of_another_world_is_refused_only_where_a_labeller_reads_it(tmp_path):
    """MC alone reads the rollout policy, not the judge: the code world's CI-graded MC recipe needs no
    judge setting, and a judge of another world is refused as soon as a labeller would use it."""
    code = "problems: {source: code, n: 4}\nevaluate: {world: code}\ntrain: {prm_sources: [mc_hard]}\n"
    labels = "labels: {methods: [%s], rollout_policy: {policy: code}, judge: {judge: arithmetic}}\n"
    recipe = load_recipe(write(tmp_path, code + labels % "mc"))
    assert recipe.labels.methods == ["mc"]
    msg = errors(tmp_path, code + labels % "mc, judge")
    assert "labels.judge.judge is 'arithmetic' but the problems come from 'code'" in msg
    msg = errors(tmp_path, code + labels.replace("policy: code", "policy: arithmetic") % "mc")
    assert "labels.rollout_policy.policy is 'arithmetic'" in msg

"""The recipe's `rl` stage: one GRPO run per reward from the pretrained LM, checked before any work."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from prmkit.pipeline import run
from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.stages import plan

RL = {"rewards": ["outcome", "dense"], "prm_source": "gold"}
TRAIN = {"prm_sources": ["gold"], "orm": None}


def test_an_rl_section_adds_one_stage_per_reward_reading_pi0_and_the_prm() -> None:
    stages = {s.name: s for s in plan(Recipe.model_validate({"train": TRAIN, "rl": RL}))}
    assert stages["rl-outcome"].deps == ["pretrain", "prm-gold"]
    assert stages["rl-dense"].settings["reward"] == "dense"
    assert stages["rl-dense"].settings["config"] == {} and stages["rl-dense"].kind == "rl"
    assert not any(name.startswith("rl-") for name in (s.name for s in plan(Recipe())))


@pytest.mark.parametrize(
    ("recipe", "message"),
    [
        ({"train": {**TRAIN, "pretrain": None}, "rl": RL}, "rl needs train.pretrain"),
        ({"train": TRAIN, "rl": {**RL, "prm_source": "mc_hard"}}, "not among train.prm_sources"),
        ({"train": TRAIN, "rl": {**RL, "config": {"seed": 3}}}, "set by the recipe"),
        ({"train": TRAIN, "rl": {**RL, "config": {"stpes": 3}}}, "stpes"),
        ({"train": TRAIN, "rl": {**RL, "rewards": ["vibes"]}}, "rewards"),
        ({"problems": {"source": "agentworld"}, "train": TRAIN, "rl": RL,
          "labels": {"rollout_policy": {"policy": "agentworld"}, "judge": {"judge": "agentworld"}}},
         "rl runs on a world whose steps a causal LM writes"),
    ],
)  # fmt: skip
def test_rl_mistakes_are_refused_before_work(recipe, message) -> None:
    with pytest.raises(ValidationError, match=message):
        Recipe.model_validate(recipe)


@pytest.mark.slow
# TRL 1.16 itself reads the TrainingArguments names transformers deprecates, and warns about rollout_func
@pytest.mark.filterwarnings(r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning")
@pytest.mark.filterwarnings(r"ignore:You are using 'rollout_func'")
def test_a_recipe_trains_policies_against_its_prm_and_reports_them(tmp_path) -> None:
    config = {"steps": 2, "group_size": 2, "batch": 2, "max_completion_length": 48, "monitor_every": 1,
              "save_every": 1, "prompts": {"n": 8, "monitor_n": 2, "monitor_samples": 2}}  # fmt: skip
    train = {
        "pretrain": {"max_steps": 20, "threads": 1, "batch_size": 8, "tiny": {"width": 32, "heads": 2}},
        "prm": {"max_steps": 10, "threads": 1},
        **TRAIN,
    }
    train["prm"]["head"] = "likelihood"
    evaluate = {"problems": 6, "per_problem": 4, "heldout_problems": 3, "bootstrap": 20, "beam_problems": 0}
    recipe = Recipe.model_validate(
        {
            "output_dir": tmp_path / "out",
            "problems": {"n": 16, "per_problem": 4},
            "labels": {"methods": ["mc"], "rollouts": 2},
            "train": train,
            "evaluate": {**evaluate, "zero_shot": False},
            "rl": {**RL, "config": config},
        }
    )
    result = run(recipe)
    for reward in RL["rewards"]:
        summary = result.stages[f"rl-{reward}"]["summary"]
        assert summary["reward"] == reward and summary["steps"] == 2
        assert {"answer_accuracy", "process_correct", "prm_reward"} <= set(summary["last"])
        (folder,) = (tmp_path / "out" / "stages").glob(f"rl-{reward}-*")
        card = json.loads((folder / "policy" / "policy_card.json").read_text())
        assert card["reward"]["kind"] == reward
    report = result.report_md.read_text()
    assert "## RL against the PRM" in report and "| dense | 2 |" in report

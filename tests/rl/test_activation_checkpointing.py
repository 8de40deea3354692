"""``RlConfig.activation_checkpointing``: off by default (TRL's GRPOConfig turns it on), which saves the
backward pass a second forward; the trained policy and every logged number are the same either way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.rl import test_train
from tests.rl.test_train import _config

tiny_lm = test_train.tiny_lm
"""test_train's 1 x 32 LM, pretrained for 30 steps (a module-scoped fixture: pretrained once here)."""

pytestmark = [
    pytest.mark.filterwarnings(r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning"),
    pytest.mark.filterwarnings(r"ignore:You are using 'rollout_func'"),
]
TIMING_KEYS = {"step_time", "train_runtime", "train_samples_per_second", "train_steps_per_second"}
"""TRL's wall-clock entries of ``train_log.jsonl``, which differ between any two runs."""


def test_off_by_default_and_left_out_of_the_config_dump_so_stage_keys_stay(tiny_lm: Path) -> None:
    from prmkit.rl.train import _grpo_args

    config = _config(tiny_lm)
    assert config.activation_checkpointing is False
    assert "activation_checkpointing" not in config.model_dump(mode="json")  # recipes' keys unchanged
    assert _grpo_args(config, Path("out")).activation_checkpointing is False
    on = _config(tiny_lm, activation_checkpointing=True)
    assert on.model_dump(mode="json")["activation_checkpointing"] is True
    assert _grpo_args(on, Path("out")).activation_checkpointing is True


def _run(policy: Path, out: Path, checkpointing: bool) -> tuple[dict, list[dict], bool]:
    """Train, and return the final weights, the train log without its clocks, and whether the policy
    trained with activation checkpointing."""
    from safetensors.torch import load_file

    from prmkit.rl import train

    seen = []
    build = train._trainer

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        trainer = build(*args, **kwargs)
        seen.append(trainer)
        return trainer

    config = _config(policy, activation_checkpointing=checkpointing, reward="dense", credit="sum")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(train, "_trainer", spy)
        train.train_policy(config, out)
    rows = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    log = [{k: v for k, v in r.items() if k not in TIMING_KEYS} for r in rows]
    return load_file(out / "model.safetensors"), log, seen[0].model.is_gradient_checkpointing


def test_the_policy_and_every_logged_number_are_the_same_with_it_on_or_off(
    tiny_lm: Path, tmp_path: Path
) -> None:
    import torch

    off_weights, off_log, off_flag = _run(tiny_lm, tmp_path / "off", checkpointing=False)
    on_weights, on_log, on_flag = _run(tiny_lm, tmp_path / "on", checkpointing=True)
    assert (off_flag, on_flag) == (False, True)  # each run trained as asked
    assert off_weights.keys() == on_weights.keys()
    assert all(torch.equal(off_weights[k], on_weights[k]) for k in off_weights)
    assert off_log == on_log and any("loss" in r for r in off_log)
    for name in ("monitors.jsonl", "monitors_per_problem.jsonl"):
        assert (tmp_path / "off" / name).read_bytes() == (tmp_path / "on" / name).read_bytes()

"""train_policy: real GRPO steps on a tiny pretrained world LM with dense gold step rewards, the monitors
file, the policy card and its gold-use record; a killed run resumed; the Goodhart warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prmkit.rl.monitors import goodhart_warning, read_points

RECIPE = Path(__file__).parents[2] / "recipes" / "rl.yaml"
pytestmark = [
    pytest.mark.filterwarnings(r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning"),
    pytest.mark.filterwarnings(r"ignore:You are using 'rollout_func'"),
]


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1 x 32 LM pretrained for 30 steps on the simulated policy's own samples (no gold)."""
    from prmkit.modeling import TinyConfig
    from prmkit.training import PretrainConfig, pretrain_lm
    from prmkit.worlds.arithmetic import generate_problems, sample_traces

    out = tmp_path_factory.mktemp("pi0")
    traces = sample_traces(generate_problems(60, seed=3), 2, seed=0)
    tiny = TinyConfig(layers=1, width=32, heads=2, max_length=320, positions="rope")
    cfg = PretrainConfig(tiny=tiny, max_steps=30, batch_size=16, vocab_size=300, threads=1, resume=False)
    pretrain_lm(traces, out, cfg)
    return out


def _config(policy: Path, **overrides: Any):
    from prmkit.rl.config import PromptSet, RlConfig

    base = {
        "policy": str(policy), "reward": "mixed", "prm": "arithmetic-oracle", "process_weight": 0.5,
        "prompts": PromptSet(n=16, monitor_n=4, monitor_samples=2), "steps": 2, "batch": 2, "group_size": 4,
        "max_completion_length": 48, "monitor_every": 1, "save_every": 1, "lr": 1e-3,
        # a 30-step LM rarely reaches an answer: pay its steps anyway, so groups differ and it learns
        "unfinished_reward": None,
    }  # fmt: skip
    return RlConfig(**{**base, **overrides})


def test_a_short_run_writes_policy_monitors_and_card(tiny_lm: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM

    from prmkit.rl.train import train_policy

    summary = train_policy(_config(tiny_lm), tmp_path)
    assert summary["steps"] == 2
    points = read_points(tmp_path / "monitors.jsonl")
    assert [p["step"] for p in points] == [0, 1, 2]  # π0, then every step
    for p in points:
        assert p["samples"] == 8
        assert 0.0 <= p["process_correct"] <= p["answer_accuracy"] <= 1.0
        assert p["lucky"] == pytest.approx(p["answer_accuracy"] - p["process_correct"], abs=1e-3)
        assert 0.0 <= p["prm_reward"] <= 1.0 and p["steps_per_response"] > 0
        assert set(p["first_error_classes"]) <= {"misconception", "slip", "other"}
    assert (tmp_path / "monitors.png").stat().st_size > 0
    card = json.loads((tmp_path / "policy_card.json").read_text())
    assert card["reward"]["kind"] == "mixed" and card["reward"]["process_weight"] == 0.5
    assert card["budget"] == {
        "optimiser_steps": 2,
        "steps_taken": 2,
        "completions_per_step": 8,
        "training_problems": 16,
    }
    assert card["monitors"]["last"] == points[-1]
    # arithmetic-oracle as the PRM is the world's checker paying every step: gold in training, counted
    (use,) = card["gold_use"]
    assert use["use"] == "rl_reward" and use["traces"] == 16 and use["labels"] > 0
    assert "Where gold was used" in (tmp_path / "README.md").read_text()
    log = [json.loads(line) for line in (tmp_path / "train_log.jsonl").read_text().splitlines()]
    assert [h["step"] for h in log if "process/step_reward" in h] == [1, 2]
    trained, pi0 = (
        AutoModelForCausalLM.from_pretrained(p) for p in (tmp_path, tiny_lm)
    )  # ordinary HF folders
    assert any((a != b).any() for a, b in zip(trained.parameters(), pi0.parameters(), strict=True))
    assert not (tmp_path / "trainer").exists()
    assert train_policy(_config(tiny_lm), tmp_path) == summary  # a finished run is not trained again
    from prmkit.core.errors import InputError

    with pytest.raises(InputError, match="another run's config"):  # nor overwritten by another run
        train_policy(_config(tiny_lm, steps=3), tmp_path)


def test_a_progress_run_pays_value_plus_progress_and_says_so(tiny_lm: Path, tmp_path: Path) -> None:
    from prmkit.rl.train import train_policy

    summary = train_policy(_config(tiny_lm, reward="progress", progress_alpha=2.0, steps=1), tmp_path)
    assert summary["steps"] == 1
    card = json.loads((tmp_path / "policy_card.json").read_text())
    assert card["reward"]["kind"] == "progress" and card["reward"]["progress_alpha"] == 2.0
    log = [json.loads(line) for line in (tmp_path / "train_log.jsonl").read_text().splitlines()]
    assert [h["step"] for h in log if "process/step_reward" in h] == [1]  # dense: the DenseGRPOTrainer


def test_outcome_run_uses_no_gold_and_plain_grpo(tiny_lm: Path, tmp_path: Path) -> None:
    from prmkit.rl.train import train_policy

    summary = train_policy(_config(tiny_lm, reward="outcome", prm=None, steps=1), tmp_path)
    assert summary["gold_use"] == []
    point = read_points(tmp_path / "monitors.jsonl")[-1]
    assert "prm_reward" not in point and "process_correct" in point  # no proxy; gold still measured


def test_outside_the_world_monitors_check_held_out_answers(tiny_lm: Path, tmp_path: Path) -> None:
    from prmkit.core.dataset import write_jsonl
    from prmkit.core.model import Problem
    from prmkit.rl.config import PromptSet
    from prmkit.rl.train import train_policy
    from prmkit.worlds.arithmetic import generate_problems

    # a user's problems: text and answer only (no graph the world's checker could read)
    mine = [
        Problem(id=f"q{i}", text=p.text, answer=p.answer) for i, p in enumerate(generate_problems(20, seed=5))
    ]
    write_jsonl(tmp_path / "mine.jsonl", mine)
    prompts = PromptSet(source=str(tmp_path / "mine.jsonl"), n=16, monitor_n=4, monitor_samples=2)
    train_policy(_config(tiny_lm, reward="outcome", prm=None, steps=1, prompts=prompts), tmp_path / "run")
    point = read_points(tmp_path / "run" / "monitors.jsonl")[-1]
    assert point["samples"] == 8 and 0.0 <= point["answer_accuracy"] <= 1.0
    assert "process_correct" not in point and "lucky" not in point


def test_a_killed_run_resumes_from_its_checkpoint(tiny_lm: Path, tmp_path: Path, monkeypatch) -> None:
    from prmkit.rl import monitors
    from prmkit.rl.train import train_policy

    original = monitors.MonitorCallback.record

    def killed(self, model, tokenizer, step):
        if step == 2:
            raise RuntimeError("killed")
        return original(self, model, tokenizer, step)

    config = _config(tiny_lm, reward="gold_process", prm=None, steps=3)
    monkeypatch.setattr(monitors.MonitorCallback, "record", killed)
    with pytest.raises(RuntimeError, match="killed"):
        train_policy(config, tmp_path)
    assert [p.name for p in (tmp_path / "trainer").glob("checkpoint-*")] == ["checkpoint-1"]
    monkeypatch.setattr(monitors.MonitorCallback, "record", original)
    summary = train_policy(config, tmp_path)
    assert summary["steps"] == 3
    assert [p["step"] for p in read_points(tmp_path / "monitors.jsonl")] == [0, 1, 2, 3]
    log = [json.loads(line) for line in (tmp_path / "train_log.jsonl").read_text().splitlines()]
    assert [h["step"] for h in log if "loss" in h] == [1, 2, 3]  # step 1 from the checkpoint
    (use,) = summary["gold_use"]  # the gold read before the kill is counted too
    assert use["traces"] == 24 and use["labels"] > 0


def _points(proxy: list[float], gold: list[float]) -> list[dict[str, Any]]:
    return [
        {"step": 10 * i, "prm_reward": p, "process_correct": g, "answer_accuracy": 0.5}
        for i, (p, g) in enumerate(zip(proxy, gold, strict=True))
    ]


def test_the_goodhart_warning_fires_when_proxy_rises_and_gold_falls() -> None:
    warning = goodhart_warning(_points([0.3, 0.4, 0.5, 0.6], [0.3, 0.35, 0.3, 0.2]))
    assert (
        warning is not None
        and "step 10 to 30" in warning
        and "process_correct fell 0.350 -> 0.200" in warning
    )
    assert goodhart_warning(_points([0.3, 0.4, 0.5, 0.6], [0.3, 0.35, 0.4, 0.5])) is None  # both rise
    assert goodhart_warning(_points([0.6, 0.5, 0.4], [0.3, 0.2, 0.1])) is None  # both fall
    assert goodhart_warning(_points([0.40, 0.42, 0.44], [0.30, 0.29, 0.28])) is None  # within noise
    assert goodhart_warning(_points([0.3, 0.6], [0.5, 0.1])) is None  # fewer points than the window
    series = ((0, 0.2, 0.6), (10, 0.4, 0.4), (20, 0.6, 0.2))
    no_gold = [{"step": s, "prm_reward": p, "answer_accuracy": g} for s, p, g in series]
    assert "answer_accuracy fell" in (goodhart_warning(no_gold) or "")


def test_a_slow_hack_is_flagged_since_pi0_once() -> None:
    """Proxy and gold drifting apart by ~0.01 a point never move 0.05 within the window, but they do
    from π0's point: that warning comes once, at the first point that shows it."""
    from prmkit.rl.monitors import all_warnings

    slow = _points([0.30, 0.31, 0.32, 0.33, 0.34, 0.35, 0.37], [0.33, 0.32, 0.31, 0.30, 0.29, 0.28, 0.26])
    assert all(goodhart_warning(slow[:i]) is None for i in range(1, len(slow) + 1))
    assert all_warnings(slow) == [
        "reward hacking since π0: from step 0 to 60 the PRM reward rose 0.300 -> 0.370 while "
        "process_correct fell 0.330 -> 0.260"
    ]
    assert goodhart_warning(slow[:6], since_start=True) is None  # 0.05 each way is not beyond it
    assert goodhart_warning(_points([0.3, 0.4], [0.33, 0.33]), since_start=True) is None  # gold held


def test_the_collapse_warning_fires_when_gold_falls_far_below_pi0_whatever_the_proxy_does() -> None:
    from prmkit.rl.monitors import all_warnings, collapse_warning

    falling_together = _points([0.38, 0.06, 0.04], [0.33, 0.07, 0.03])  # weak_prm_lr in docs/rl.md
    warning = collapse_warning(falling_together)
    assert warning == (
        "process collapse: process_correct fell 0.330 -> 0.030 from π0 by step 20; the PRM reward moved 0.380 -> 0.040"
    )
    assert goodhart_warning(falling_together) is None  # not a hack: the proxy fell too
    assert collapse_warning(_points([0.3, 0.3, 0.3], [0.33, 0.26, 0.24])) is None  # 9 points: within noise
    assert collapse_warning(_points([0.3], [0.3])) is None
    # reported once, at the first point that shows it, however long it lasts
    (once,) = all_warnings(_points([0.38, 0.06, 0.04, 0.02], [0.33, 0.07, 0.03, 0.0]))
    assert once.endswith("by step 10; the PRM reward moved 0.380 -> 0.060")


def test_config_refuses_a_prm_reward_without_a_prm(tiny_lm: Path) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="needs a PRM"):
        _config(tiny_lm, reward="dense", prm=None)
    with pytest.raises(ValidationError, match="needs an embedded world's problems"):
        from prmkit.rl.config import PromptSet

        _config(tiny_lm, reward="gold_process", prm=None, prompts=PromptSet(source="mine.jsonl"))


def test_cli_rl_options_come_from_the_config() -> None:
    from typer.testing import CliRunner

    from prmkit.cli import app

    result = CliRunner().invoke(app, ["rl", "--help"], terminal_width=200)
    assert result.exit_code == 0
    for flag in ("--reward", "--prm", "--prompts-n", "--process-weight", "--kl-beta", "--monitor-every"):
        assert flag in result.output
    result = CliRunner().invoke(app, ["rl", "--policy", "x", "--reward", "dense", "-o", "out"])
    assert result.exit_code == 2 and "needs a PRM" in result.output
    result = CliRunner().invoke(app, ["rl", "--config", str(RECIPE), "--policy", "nowhere", "-o", "out"])
    assert result.exit_code == 2 and "nowhere: policy: expected a causal-LM folder" in result.output


def test_pi0_itself_as_a_zero_shot_prm(tiny_lm: Path, tmp_path: Path) -> None:
    """``prm_convention: likelihood`` pays dense rewards from any causal LM (π0 itself, the weak PRM a
    user has before buying labels), scores the monitors' proxy with it, and says so in the card."""
    from prmkit.rl.train import train_policy
    from prmkit.scoring import load_scorer

    with pytest.raises(Exception, match="prmkit"):
        load_scorer(str(tiny_lm))  # a plain LM folder is not a PRM unless read on purpose
    config = _config(  # short completions: the test LM reads 320 tokens, the problem included
        tiny_lm, reward="dense", prm=str(tiny_lm), prm_convention="likelihood", max_completion_length=24
    )
    summary = train_policy(config, tmp_path)
    assert summary["steps"] == 2
    card = json.loads((tmp_path / "policy_card.json").read_text())
    assert card["reward"]["prm"] == str(tiny_lm) and card["reward"]["prm_convention"] == "likelihood"
    assert card["gold_use"] == []  # π0 saw no gold, and nothing here pays gold
    points = read_points(tmp_path / "monitors.jsonl")
    assert all(0.0 < p["prm_reward"] < 1.0 for p in points)  # a likelihood, not the checker's 0 / 1


def test_prmkit_rl_trains_on_the_gpu_in_bf16_where_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """No hard-coded CPU: GRPOConfig gets use_cpu only without CUDA, bf16 where the GPU supports it."""
    import torch

    from prmkit.rl.train import _device_args

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert _device_args() == {"use_cpu": True, "bf16": False}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    for supported in (True, False):
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda s=supported: s)
        assert _device_args() == {"use_cpu": False, "bf16": supported}


def test_the_monitor_intervenes_with_the_model_as_it_is_and_leaves_it_training(
    tiny_lm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a real model: each intervention is continued by the model being trained (an HFPolicy over the
    same object), and the model is back in training mode afterwards. This 30-step LM never writes an
    answer, so every continuation is unanswered: the point has no causal dependence (nan), not 0."""
    import math

    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prmkit.policies.hf import HFPolicy
    from prmkit.rl.monitors import Monitor
    from prmkit.worlds.registry import world

    model, tokenizer = AutoModelForCausalLM.from_pretrained(tiny_lm), AutoTokenizer.from_pretrained(tiny_lm)
    model.train()
    arithmetic = world("arithmetic")
    traces = arithmetic.traces(3, 2, 3, "test")
    monitor = Monitor(
        [t.problem for t in traces[::2]], samples=2, temperature=1.0, max_new_tokens=16, faithfulness=3
    )
    continued, original = [], HFPolicy.continue_from

    def spy(self, problem, prefix, n, seed=None):
        assert self.model is model  # the model being trained, not a copy
        continued.append(len(prefix))
        return original(self, problem, prefix, n, seed=seed)

    monkeypatch.setattr(HFPolicy, "continue_from", spy)
    assert monitor.measure(model, tokenizer, 0)["samples"] == 6 and model.training
    samples = [(t.problem, "\n".join(s.text for s in t.steps)) for t in traces]
    point = monitor.measure_samples(samples, 0, monitor._policy(model, tokenizer))
    chosen = sorted(traces, key=lambda t: traces.index(t) % 2)[:3]  # every problem's first, then second
    assert len(continued) == sum(3 * (len(t.steps) - 1) for t in chosen)  # 3 interventions per position
    assert point["dependence_traces"] == 0 and math.isnan(point["causal_dependence"])

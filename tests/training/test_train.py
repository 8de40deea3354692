"""Real training on tiny models: a PRM that beats chance, an ORM, the LM, resume, the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from transformers import AutoModelForCausalLM, AutoModelForTokenClassification, AutoTokenizer

from prmkit.modeling import TinyConfig
from prmkit.scoring import load_scorer
from prmkit.training import OrmConfig, PretrainConfig, PrmConfig, pretrain_lm, train_orm, train_prm

from .conftest import world_traces

TINY = TinyConfig(layers=1, width=64, heads=2, max_length=256, positions="rope")


def _auc(scores: list[float], positive: list[bool]) -> float:
    """Chance that a valid step outscores an invalid one (ties count half)."""
    s, y = np.asarray(scores), np.asarray(positive)
    pos, neg = s[y], s[~y]
    greater = (pos[:, None] > neg[None, :]).mean()
    ties = (pos[:, None] == neg[None, :]).mean()
    return float(greater + ties / 2)


@pytest.mark.slow
def test_prm_trained_for_seconds_beats_chance(tmp_path):
    """From scratch, no pretraining, 80 optimiser steps on the default world (every error kind; about 25
    seconds on a quiet 2-core machine): step scores must rank valid prefixes above broken ones on unseen
    test problems, beyond what chance allows (one-sided Mann-Whitney test on the AUC, p < 0.001). The
    budget is in steps with threads pinned, so a loaded CI machine trains the same model, only later.
    80 steps, not 150: the claim is "beats chance", and 80 already put z near 8 (150: near 10) against 3.09."""
    train = world_traces(400, 4, seed=0)
    cfg = PrmConfig(tiny=TinyConfig(layers=2, width=128, heads=4, max_length=256), max_steps=80, lr=2e-3,
                    batch_size=32, eval_every=1000, threads=2, resume=False)  # fmt: skip
    result = train_prm(train, tmp_path / "prm", cfg)
    test = world_traces(100, 4, seed=1, split="test")
    rows = load_scorer(tmp_path / "prm").score(test)
    scores, valid = [], []
    for trace, row in zip(test, rows, strict=True):
        fe = trace.first_error("gold")
        last = len(row) if fe == -1 else fe + 1  # the prefix view: valid before the first error
        scores += row[:last]
        valid += [fe == -1 or i < fe for i in range(last)]
    auc, n_pos, n_neg = _auc(scores, valid), sum(valid), len(valid) - sum(valid)
    z = (auc - 0.5) / math.sqrt((n_pos + n_neg + 1) / (12 * n_pos * n_neg))  # the AUC's null spread
    print(f"test AUC {auc:.3f} (z {z:.1f}), dev first-error F1 {result['dev']['eval_first_error_f1']:.3f}")
    assert z > 3.09, f"AUC {auc:.3f} is within chance (z {z:.2f}; p < 0.001 needs z > 3.09)"
    for name in (
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "README.md",
        "process_card.json",
        "loss_curve.png",
    ):
        assert (tmp_path / "prm" / name).exists(), name
    assert not (tmp_path / "prm" / "checkpoints").exists()
    card = json.loads((tmp_path / "prm" / "process_card.json").read_text())
    assert card["labels"][0]["source"] == "gold" and card["labels"][0]["steps"] > 0
    assert card["data"]["split"]["by"] == "problem"
    AutoModelForTokenClassification.from_pretrained(tmp_path / "prm")  # loads outside prmkit


@pytest.mark.slow
def test_pretrained_lm_is_an_ordinary_causal_lm_and_heads_start_from_it(tmp_path, small_world):
    pretrain_lm(
        small_world, tmp_path / "lm", PretrainConfig(tiny=TINY, epochs=1, batch_size=16, resume=False)
    )
    tok = AutoTokenizer.from_pretrained(tmp_path / "lm")
    lm = AutoModelForCausalLM.from_pretrained(tmp_path / "lm")
    ids = tok(small_world[0].problem.text + "\n", return_tensors="pt").input_ids
    out = lm.generate(ids, max_new_tokens=5, do_sample=False, pad_token_id=tok.pad_token_id)
    assert out.shape[1] > ids.shape[1]
    orm = train_orm(
        small_world, tmp_path / "orm", OrmConfig(base_model=str(tmp_path / "lm"), epochs=1, resume=False)
    )
    card = json.loads((tmp_path / "orm" / "process_card.json").read_text())
    assert card["kind"] == "orm" and card["base_model"] == str(tmp_path / "lm")
    assert orm["dev"]["eval_threshold"] is not None
    assert load_scorer(tmp_path / "orm").convention.spec.kind == "orm"


@pytest.mark.slow
def test_training_resumes_from_its_last_checkpoint(tmp_path, small_world, monkeypatch):
    from transformers import TrainerCallback

    from prmkit.training import loop

    class Crash(TrainerCallback):
        def on_save(self, args, state, control, **kw):
            if state.global_step >= 4:
                raise RuntimeError("simulated crash")

    budget = loop.time_budget
    monkeypatch.setattr(loop, "time_budget", lambda *a, **kw: Crash())
    cfg = PrmConfig(tiny=TINY, epochs=2, batch_size=8, eval_every=4)
    with pytest.raises(RuntimeError, match="simulated crash"):
        train_prm(small_world, tmp_path / "prm", cfg)
    assert (tmp_path / "prm" / "checkpoints" / "checkpoint-4").is_dir()
    monkeypatch.setattr(loop, "time_budget", budget)
    train_prm(small_world, tmp_path / "prm", cfg)
    logs = [json.loads(line) for line in (tmp_path / "prm" / "training_log.jsonl").read_text().splitlines()]
    steps = [r["step"] for r in logs if "loss" in r]
    assert steps[0] <= 4 < steps[-1]  # the history before the crash was restored, then training went on
    # the starting model was measured once, before the crash, and not again on resuming
    starts = [r for r in logs if r["step"] == 0 and "eval_first_error_f1" in r]
    assert len(starts) == 1
    card = json.loads((tmp_path / "prm" / "process_card.json").read_text())
    assert card["metrics"]["dev_at_start"]["eval_first_error_f1"] == starts[0]["eval_first_error_f1"]


@pytest.mark.slow
def test_a_run_that_crashed_after_its_last_save_resumes_to_the_uninterrupted_model(
    tmp_path, small_world, monkeypatch
):
    """transformers' Trainer resumed at its last step takes one optimiser step more; prmkit loads it."""
    import torch
    from safetensors.torch import load_file
    from transformers import TrainerCallback

    from prmkit.training import loop

    class Crash(TrainerCallback):
        def on_save(self, args, state, control, **kw):
            if state.global_step >= 4:
                raise RuntimeError("simulated crash")

    cfg = PrmConfig(tiny=TINY, max_steps=4, batch_size=8, eval_every=2)
    train_prm(small_world, tmp_path / "whole", cfg)
    budget = loop.time_budget
    monkeypatch.setattr(loop, "time_budget", lambda *a, **kw: Crash())
    with pytest.raises(RuntimeError, match="simulated crash"):
        train_prm(small_world, tmp_path / "crashed", cfg)
    monkeypatch.setattr(loop, "time_budget", budget)
    result = train_prm(small_world, tmp_path / "crashed", cfg)
    assert result["training"]["steps"] == 4
    whole, resumed = (load_file(tmp_path / d / "model.safetensors") for d in ("whole", "crashed"))
    assert whole.keys() == resumed.keys() and all(torch.equal(whole[k], resumed[k]) for k in whole)


@pytest.mark.slow
def test_cli_train_prm(tmp_path, small_world):
    from typer.testing import CliRunner

    from prmkit.cli import app
    from prmkit.core.dataset import write_traces

    write_traces(tmp_path / "train.jsonl", small_world)
    args = ["train", "prm", str(tmp_path / "train.jsonl"), "-o", str(tmp_path / "prm"), "--tiny-layers", "1",
            "--tiny-width", "32", "--tiny-heads", "2", "--tiny-positions", "rope", "--epochs", "0.5", "--no-resume"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    card = json.loads((tmp_path / "prm" / "process_card.json").read_text())
    assert card["training"]["config"]["tiny"]["width"] == 32
    assert card["data"]["split"]["dev_label_source"] == "gold"  # the world's traces carry gold labels


@pytest.mark.slow
def test_learnability_zero_shot_scores_the_lm_at_its_dev_threshold(tmp_path):
    """``--runs zero-shot``: the pretrained LM judged as a verifier, test and held-out at the dev threshold
    (the experiment script lives in experiments/, outside the library). The LM pretrains for 1.2 CPU
    seconds: the test reads how it is scored, not what it learnt."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "experiments" / "learnability.py"
    spec = importlib.util.spec_from_file_location("learnability", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    main = module.main

    args = ["--out", str(tmp_path), "--problems", "60", "--per-problem", "2", "--pretrain-minutes", "0.02",
            "--runs", "zero-shot", "--eval-traces", "40", "--threads", "1"]  # fmt: skip
    zs = main(args)["zero-shot"]
    assert AutoModelForCausalLM.from_pretrained(tmp_path / "lm").config.no_rope_layers == [1, 0]
    assert zs["test"]["threshold"] == zs["heldout"]["threshold"] == zs["dev"]["threshold"]
    assert zs["test"]["traces"] == zs["heldout"]["traces"] == 40
    assert (
        json.loads((tmp_path / "results_zero-shot.json").read_text())["zero-shot"]["threshold"]
        == zs["threshold"]
    )


def test_dev_selection_falls_back_to_the_training_labels_without_gold(tmp_path):
    """A user with only MC labels still gets model selection and a tuned threshold (against MC labels)."""
    from prmkit.labeling.mc import label_mc
    from prmkit.modeling import read_spec
    from prmkit.worlds.arithmetic import WorldPolicy, generate_problems, sample_traces

    traces = sample_traces(generate_problems(30, seed=5), 4, seed=5)  # no gold labels
    labelled, _ = label_mc(traces, WorldPolicy(), rollouts=2, seed=0)
    cfg = PrmConfig(
        tiny=TINY, label_source="mc_hard", dev_fraction=0.2, epochs=1, eval_every=1000, resume=False
    )
    result = train_prm(labelled, tmp_path / "prm", cfg)
    split = json.loads((tmp_path / "prm" / "process_card.json").read_text())["data"]["split"]
    assert split["dev_label_source"] == "mc_hard" and split["dev_traces"] > 0
    assert 0.0 <= result["dev"]["eval_first_error_f1"] <= 1.0
    spec = read_spec(AutoModelForTokenClassification.from_pretrained(tmp_path / "prm").config)
    assert spec.threshold == result["dev"]["eval_threshold"]


@pytest.mark.slow
def test_a_run_killed_while_writing_its_model_resumes_to_a_whole_record(tmp_path, small_world):
    """Issue 42: killed while its final model was written, a run resumed to a stray
    ``.process_card.json.*.tmp``, a training log without the trainer's closing summary and a card
    saying it took 0.003 s (only the resuming process's time)."""
    import os
    import subprocess
    import sys

    cfg = PrmConfig(tiny=TINY, max_steps=4, batch_size=8, eval_every=2)
    out = tmp_path / "prm"
    root = Path(__file__).resolve().parents[2]
    killed = subprocess.run(
        [sys.executable, "-m", "tests.training.kill_while_saving", str(out), cfg.model_dump_json()],
        cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert list(out.glob(".process_card.json.*.tmp"))  # what the kill left
    result = train_prm(small_world, out, cfg)
    assert not list(out.glob(".*.tmp"))
    logs = [json.loads(line) for line in (out / "training_log.jsonl").read_text().splitlines()]
    closing = [r for r in logs if "train_runtime" in r]
    assert len(closing) == 1 and closing[0]["step"] == 4
    card = json.loads((out / "process_card.json").read_text())
    # the killed process trained for 4 steps and evaluated 3 times: the card counts that time
    assert (
        card["training"]["wall_seconds"] == result["training"]["wall_seconds"] > closing[0]["train_runtime"]
    )
    assert card["training"]["train_clock_minutes"] > 0


def test_an_orm_learns_the_outcome_it_is_told_to(tmp_path, small_world):
    """``OrmConfig.outcome``: ``answer`` is ``answer_correct``; another name reads the boolean the
    environment reported in ``metadata["outcomes"]`` (a coding agent's CI), and a trace without it is
    refused by name before any training."""
    from prmkit.training.data import outcome_targets

    trace = small_world[0].model_copy(deep=True)
    trace.metadata["outcomes"] = {"visible_pass": not trace.answer_correct}
    assert outcome_targets(trace)[-1] == float(trace.answer_correct)
    assert outcome_targets(trace, "visible_pass")[-1] == float(not trace.answer_correct)
    assert set(outcome_targets(trace, "visible_pass")[:-1]) <= {outcome_targets(trace)[0]}  # the rest ignored
    with pytest.raises(
        ValueError, match=r"metadata.outcomes.visible_pass: expected true or false, found None"
    ):
        train_orm(small_world[:4], tmp_path / "orm", OrmConfig(tiny=TINY, epochs=1, outcome="visible_pass"))
    assert not (tmp_path / "orm").exists()

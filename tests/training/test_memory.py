"""Training a backbone too large for plain fine-tuning: gradient checkpointing, LoRA (peft) and float32
master weights over a checkpoint saved in bf16 (issue 34). Tiny models, four optimiser steps each."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM, TrainerCallback

from prmkit.modeling import TinyConfig
from prmkit.modeling.backbone import tiny_config
from prmkit.modeling.tokenizer import build_tokenizer, trace_texts
from prmkit.scoring import load_scorer
from prmkit.scoring.scorer import ModelScorer
from prmkit.training import PrmConfig, loop, train_prm

from .conftest import world_traces

TINY = TinyConfig(layers=2, width=64, heads=2, max_length=256, positions="rope")


@pytest.fixture(scope="module")
def traces():
    return world_traces(12, 2, seed=0)


@pytest.fixture(scope="module")
def bf16_backbone(tmp_path_factory, traces) -> Path:
    """A causal LM saved in bfloat16, as 7B checkpoints are, with a tokenizer that lacks the step tag."""
    tok = build_tokenizer(trace_texts(traces))
    torch.manual_seed(0)
    lm = AutoModelForCausalLM.from_config(tiny_config(tok, TINY)).to(torch.bfloat16)
    folder = tmp_path_factory.mktemp("backbone")
    lm.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


class Spy(TrainerCallback):
    """What a run's trainer did: the dtypes of the parameters its optimiser stepped, how often a decoder
    layer's MLP ran in training mode (inside the checkpointed forward), and the in-memory model's scores of ``traces`` when training ended."""

    def __init__(self, convention, traces) -> None:
        self.convention, self.traces = convention, traces
        self.stepped: set[torch.dtype] = set()
        self.layer_calls, self.scores = 0, None

    def on_train_begin(self, args, state, control, model=None, **kw):
        mlp = next(m for m in model.modules() if type(m).__name__.endswith("DecoderLayer")).mlp
        # a pre-hook: torch's recomputation stops once it has every saved tensor, before mlp returns
        mlp.register_forward_pre_hook(
            lambda m, a: setattr(self, "layer_calls", self.layer_calls + m.training)
        )

    def on_step_end(self, args, state, control, optimizer=None, **kw):
        self.stepped |= {p.dtype for group in optimizer.param_groups for p in group["params"]}

    def on_train_end(self, args, state, control, model=None, **kw):
        self.scores = ModelScorer(model, self.convention, name="in memory").score(self.traces)
        model.train()


@pytest.fixture
def spies(monkeypatch, traces) -> list[Spy]:
    """One :class:`Spy` per trainer that ``train_prm`` makes."""
    made, make = [], loop.make_trainer

    def spied(*args, **kwargs):
        trainer = make(*args, **kwargs)
        made.append(Spy(args[6], traces[:6]))
        trainer.add_callback(made[-1])
        return trainer

    monkeypatch.setattr(loop, "make_trainer", spied)
    return made


def _config(**fields) -> PrmConfig:
    return PrmConfig(max_steps=4, batch_size=8, eval_every=5, lr=1e-3, threads=1, resume=False, **fields)


def _losses(folder: Path) -> list[float]:
    log = (folder / "training_log.jsonl").read_text().splitlines()
    return [r["loss"] for r in map(json.loads, log) if "loss" in r]


def _card(folder: Path) -> dict:
    return json.loads((folder / "process_card.json").read_text())["training"]


def test_gradient_checkpointing_recomputes_and_changes_no_number(tmp_path, traces, spies):
    """Checkpointing reaches the backbone inside the head model (each decoder layer runs again in the
    backward pass) and only recomputes: the same losses, the same saved model."""
    train_prm(traces, tmp_path / "plain", _config(tiny=TINY))
    train_prm(traces, tmp_path / "checkpointed", _config(tiny=TINY, gradient_checkpointing=True))
    plain, checkpointed = spies
    assert (plain.layer_calls, checkpointed.layer_calls) == (4, 8)
    assert len(_losses(tmp_path / "plain")) == 4
    assert _losses(tmp_path / "checkpointed") == pytest.approx(_losses(tmp_path / "plain"), rel=1e-5)
    assert _card(tmp_path / "checkpointed")["config"]["gradient_checkpointing"] is True
    reloaded = load_scorer(tmp_path / "checkpointed").score(traces[:6])
    for row, want in zip(reloaded, load_scorer(tmp_path / "plain").score(traces[:6]), strict=True):
        assert row == pytest.approx(want, abs=1e-5)


def test_lora_merged_is_an_ordinary_checkpoint_that_scores_as_the_trained_model(
    tmp_path, traces, bf16_backbone, spies
):
    out = tmp_path / "prm"
    train_prm(traces, out, _config(base_model=str(bf16_backbone), lora_r=4, gradient_checkpointing=True))
    lora = _card(out)["lora"]
    assert lora["saved"] == "merged" and lora["r"] == 4 and lora["target_modules"] == ["all-linear"]
    assert lora["trained_in_full"] == ["score"] and len(lora["trained_tokens"]) == 1
    assert lora["adapted_modules"] == 2 * 7  # q, k, v, o, gate, up, down in each layer
    assert lora["trainable_parameters"] < lora["parameters"] / 4
    assert (out / "model.safetensors").exists() and not (out / "adapter_config.json").exists()
    key = "model.layers.0.self_attn.q_proj.weight"
    merged, base = (load_file(f / "model.safetensors")[key].float() for f in (out, bf16_backbone))
    assert not torch.equal(merged, base), "the adapters were merged into the backbone's weights"
    for row, want in zip(load_scorer(out).score(traces[:6]), spies[0].scores, strict=True):
        assert row == pytest.approx(want, abs=1e-5)


@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")  # peft 0.21
def test_lora_unmerged_saves_the_adapter_and_its_readme_merges_it(tmp_path, traces, bf16_backbone, spies):
    out = tmp_path / "prm"
    train_prm(traces, out, _config(base_model=str(bf16_backbone), lora_r=4, lora_merge=False))
    assert _card(out)["lora"]["saved"] == "adapter"
    for name in ("adapter_model.safetensors", "adapter_config.json", "config.json", "tokenizer.json"):
        assert (out / name).exists(), name
    assert not (out / "model.safetensors").exists()
    snippet = re.search(r"```python\n(.*?)```", (out / "README.md").read_text(), re.S).group(1)
    exec(snippet, {})  # the README's recipe, as written: merges into prm-merged beside the adapter
    for row, want in zip(load_scorer(f"{out}-merged").score(traces[:6]), spies[0].scores, strict=True):
        assert row == pytest.approx(want, abs=1e-4)


@pytest.mark.parametrize(("master", "stepped"), [("fp32", torch.float32), ("model", torch.bfloat16)])
def test_a_bf16_checkpoint_is_stepped_in_float32_unless_asked(
    tmp_path, traces, bf16_backbone, spies, master, stepped
):
    train_prm(traces, tmp_path / "prm", _config(base_model=str(bf16_backbone), master_weights=master))
    assert spies[0].stepped == {stepped}
    precision = _card(tmp_path / "prm")["precision"]
    assert precision["loaded_dtype"] == "bfloat16"
    assert precision["optimiser_dtype"] == str(stepped).removeprefix("torch.")


def test_lora_under_bf16_autocast_keeps_the_frozen_backbone_bf16(tmp_path, traces, bf16_backbone, spies):
    """The 7B set-up: a bf16 backbone frozen as loaded, float32 adapters and head, bf16 compute; dev
    scoring (outside autocast) feeds the float32 head the backbone's bf16 output. On a CPU, transformers
    takes bf16 only with ``use_cpu`` (CPU autocast), which prmkit's training arguments set where there
    is no GPU."""
    out = tmp_path / "prm"
    train_prm(traces, out, _config(base_model=str(bf16_backbone), lora_r=4, mixed_precision="bf16"))
    assert spies[0].stepped == {torch.float32}
    precision = _card(out)["precision"]
    assert (precision["frozen_dtype"], precision["optimiser_dtype"]) == ("bfloat16", "float32")
    assert precision["mixed_precision"] == "bf16"
    assert load_scorer(out).score(traces[:2])


def test_lora_options_need_a_rank_and_a_backbone():
    for config in (
        PrmConfig(),
        PrmConfig(base_model="x", lora_r=8, lora_alpha=32),
    ):  # a resolved config reloads
        assert PrmConfig.model_validate_json(config.model_dump_json()) == config
    with pytest.raises(ValueError, match="without lora_r"):
        PrmConfig(lora_alpha=32)
    with pytest.raises(ValueError, match="set base_model"):
        PrmConfig(lora_r=8)
    with pytest.raises(ValueError, match="stands alone"):
        PrmConfig(base_model="x", lora_r=8, lora_target_modules=["all-linear", "q_proj"])


def test_the_documented_7b_command_uses_flags_that_train_prm_has():
    """docs/models.md's command, against ``prmkit train prm --help`` (made from the config's fields)."""
    from typer.testing import CliRunner

    from prmkit.cli import app

    doc = (Path(__file__).resolve().parents[2] / "docs" / "models.md").read_text(encoding="utf-8")
    command = re.search(r"prmkit train prm \S+ -o prm7b (.*?)\n```", doc, re.S).group(1)
    shown = CliRunner().invoke(app, ["train", "prm", "--help"], env={"COLUMNS": "200"}).output
    flags = re.findall(r"--[a-z-]+", command)
    assert "--gradient-checkpointing" in flags and "--lora-r" in flags
    assert [f for f in flags if f not in shown] == []

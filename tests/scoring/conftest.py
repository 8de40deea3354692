"""Tiny randomly initialised checkpoints, one per PRM convention, built locally (no downloads)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from prmkit.core.model import Problem, Step, Trace
from prmkit.modeling import PrmSpec, StepTemplate, TinyConfig, build_tokenizer, tiny_config, token_classifier
from prmkit.modeling.checkpoint import save_checkpoint

TEXTS = [
    "Ann has 6 apples. She gets 3 more apples. How many apples does Ann have now?",
    "She gets 3 more, so 6 + 3 = 9 apples.",
    "The answer is 9.",
    "+ - + -",
] * 10
CHAT = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
SPECIALS = ["<|step|>", "<extra_0>", "ки", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]
SMALL = TinyConfig(layers=2, width=32, heads=2, max_length=256)


def make_traces(n: int = 5) -> list[Trace]:
    out = []
    for i in range(n):
        a, b = i + 2, i % 3 + 1
        problem = Problem(
            id=f"p{i}",
            text=f"Ann has {a} apples. She gets {b} more apples. How many apples does Ann have now?",
        )
        steps = [Step(text=f"She gets {b} more, so {a} + {b} = {a + b} apples.")] * (1 + i % 3)
        steps = [*steps, Step(text=f"The answer is {a + b}.")]
        out.append(Trace(id=f"t{i}", problem=problem, steps=steps, final_answer=str(a + b)))
    return out


def _tok():
    tok = build_tokenizer(TEXTS, vocab_size=300, extra_tokens=SPECIALS)
    tok.chat_template = CHAT
    return tok


def _save(model, tok, path: Path) -> Path:
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def traces() -> list[Trace]:
    return make_traces()


@pytest.fixture(scope="session")
def prmkit_model(tmp_path_factory) -> Path:
    torch.manual_seed(0)
    tok = _tok()
    spec = PrmSpec(tag_id=StepTemplate().tag_id(tok))
    model = token_classifier(tiny_config(tok, SMALL), 2, id2label=spec.id2label())
    return save_checkpoint(model, tok, spec, tmp_path_factory.mktemp("prmkit"))


@pytest.fixture(scope="session")
def classifier_model(tmp_path_factory) -> Path:
    """A plain token classifier (TRL's PRMTrainer output; Qwen-style when read with <extra_0>)."""
    torch.manual_seed(1)
    tok = _tok()
    return _save(token_classifier(tiny_config(tok, SMALL), 2), tok, tmp_path_factory.mktemp("cls"))


@pytest.fixture(scope="session")
def causal_model(tmp_path_factory) -> Path:
    """A causal LM (Math-Shepherd and RLHFlow style), with a chat template."""
    from transformers import AutoModelForCausalLM

    torch.manual_seed(2)
    tok = _tok()
    return _save(
        AutoModelForCausalLM.from_config(tiny_config(tok, SMALL)), tok, tmp_path_factory.mktemp("lm")
    )

"""The released families' stand-ins (tests/scoring/released.py on the real tokenizers of
tests/scoring/real_tokenizers.py), each built once per test run (tests/run_cache.py) and read by every test
that needs it, on any worker: writing and reading a 152k-token vocabulary costs seconds. No test writes
into one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.run_cache import once
from tests.scoring import released
from tests.scoring.real_tokenizers import llama3, mistral_7b, qwen25

QWEN_PRM_TOKENS = (("<|quad_end|>", "<extra_0>"),)
"""Qwen2.5-Math-PRM's tokenizer: Qwen2.5's, with ``<extra_0>`` at id 151651."""

EURUS_CHAT = (
    "{% for m in messages %}{% if loop.first and m['role'] != 'system' %}<|im_start|>system\nPlease reason step "
    "by step, and put your final answer within \\boxed{}.<|im_end|>\n{% endif %}<|im_start|>{{ m['role'] }}\n"
    "{{ m['content'] }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""Qwen2.5-Math's ChatML with its default system turn (EurusPRM's base)."""

QWEN_INSTRUCT_CHAT = (
    "{% for m in messages %}{% if loop.first and m['role'] != 'system' %}<|im_start|>system\nYou are Qwen, "
    "created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ m['role'] }}\n"
    "{{ m['content'] }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""Qwen2.5-Instruct's ChatML with its default system turn (ReasonFlux-PRM's backbone is an Instruct model)."""


def _reasonflux_tok() -> Any:
    tok = qwen25(QWEN_PRM_TOKENS)
    tok.chat_template = QWEN_INSTRUCT_CHAT
    return tok


def _skywork_tok() -> Any:
    tok = qwen25()
    tok.bos_token = "<|im_start|>"  # Skywork's special_tokens_map (stock Qwen2.5 has none)
    return tok


def _eurus_tok() -> Any:
    tok = qwen25()
    tok.chat_template = EURUS_CHAT
    return tok


def _implicit(d: Path) -> None:
    """EurusPRM's stand-in and its reference: two Qwen2 LMs on one tokenizer."""
    tok = _eurus_tok()
    released.causal_lm(d / "prm", tok, "qwen2", seed=1)
    released.causal_lm(d / "ref", tok, "qwen2", seed=2)


BUILD = {  # the stand-ins only read their tokenizer (``.shared``) but Skywork's and EurusPRM's, which set it
    "qwen": lambda d: released.qwen_prm(d, qwen25.shared(QWEN_PRM_TOKENS)),
    "skywork": lambda d: released.skywork_prm(d, _skywork_tok()),
    "math-shepherd": lambda d: released.causal_lm(d, mistral_7b.shared(), "mistral"),
    "rlhflow": lambda d: released.causal_lm(d, llama3.shared(), "llama"),
    "implicit": _implicit,
    "versaprm": lambda d: released.causal_lm(d, llama3.shared(), "llama"),
    "reasonflux": lambda d: released.qwen_prm(d, _reasonflux_tok()),
    "universal": lambda d: released.universal_prm(d, qwen25.shared()),
    "trl": lambda d: released.token_classifier(d, qwen25.shared()),
    "likelihood": lambda d: released.causal_lm(d, qwen25.shared(), "qwen2"),
}


def standin(family: str) -> Any:
    """That family's stand-in folder (``implicit``: the PRM's and its reference's)."""
    folder = once(f"standins/{family}", BUILD[family])
    return (folder / "prm", folder / "ref") if family == "implicit" else folder

"""Backbones: a tiny config trained from scratch (local RoPE layers under a global NoPE one), or any
local Hugging Face folder.

Both go through the same calls (``AutoModelFor*.from_pretrained`` / ``from_config``), so the tiny world
models exercise the code path a real pretrained backbone takes. ``trust_remote_code`` stays off unless a
caller asks for it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from prmkit.core.config import Config


class TinyConfig(Config):
    """Size and layout of a from-scratch backbone (RMSNorm, SwiGLU, pre-norm decoder layers).

    The default (2 layers x 128, 0.8 M parameters) is sized for minutes on a CPU: on 2 cores it trains
    at ~8,000 tokens/s, five times the 4 x 256 model's rate, and the world's PRM is limited by how many
    examples it sees in its budget (docs/models.md has the learnability measurements).
    """

    layers: int = Field(2, ge=1)
    width: int = Field(128, ge=16)
    heads: int = Field(4, ge=1)
    max_length: int = Field(512, ge=16)
    positions: Literal["local+nope", "rope"] = "local+nope"
    """How the layers know where a token is. ``local+nope`` (default): every layer but the last attends
    to the last ``window`` tokens only, with RoPE, and the last attends to everything with no position
    encoding, so it can find a far token only by what it says (the layout of Llama 4's and Command A's
    interleaved attention, built as a ``SmolLM3`` config, an architecture transformers ships). A verifier must find the
    problem sentence a step uses; with RoPE everywhere the tiny model finds it by distance, which fails on
    problems longer than any it trained on (held-out first-error F1 0.40 against 0.83 for this layout,
    zero-shot, docs/models.md). ``rope``: RoPE on full attention in every layer (a plain Llama)."""
    window: int = Field(16, ge=1)
    """Tokens a local layer sees (itself included) under ``local+nope``: about one solution step."""

    @model_validator(mode="after")
    def _layout(self) -> TinyConfig:
        if self.positions == "local+nope" and self.layers < 2:
            raise ValueError(
                "positions='local+nope' needs at least 2 layers (local ones below a global one); "
                "use positions='rope' for a 1-layer model"
            )
        return self


def tiny_config(tokenizer: Any, size: TinyConfig | None = None) -> Any:
    """A transformers config sized by ``size`` for ``tokenizer`` (its vocab and special ids): a
    ``SmolLM3Config`` for ``local+nope`` (its per-layer RoPE switch and layer types express the layout),
    a ``LlamaConfig`` for ``rope``."""
    from transformers import LlamaConfig, SmolLM3Config

    size = size or TinyConfig()
    common = {
        "vocab_size": len(tokenizer),
        "hidden_size": size.width,
        "intermediate_size": size.width * 4,
        "num_hidden_layers": size.layers,
        "num_attention_heads": size.heads,
        "num_key_value_heads": size.heads,
        "max_position_embeddings": size.max_length,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
        "tie_word_embeddings": True,
        "use_cache": False,
    }
    if size.positions == "rope":
        return LlamaConfig(**common)
    local = size.layers - 1
    return SmolLM3Config(
        **common,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        no_rope_layers=[1] * local + [0],  # SmolLM3's switch: 1 = RoPE in this layer, 0 = none
        layer_types=["sliding_attention"] * local + ["full_attention"],
        use_sliding_window=True,
        sliding_window=size.window,
    )


POSITION_FIELDS = ("max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length", "seq_length")
"""Config fields in which transformers architectures declare the longest input they were built for (Llama,
Qwen and most: ``max_position_embeddings``; GPT-2: ``n_positions``)."""


def position_limit(config: Any) -> tuple[int, str] | None:
    """(tokens, field): the longest input a backbone's config declares, or None where it declares none."""
    for name in POSITION_FIELDS:
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:  # named as config.json writes it (GPT-2 aliases n_positions)
            return value, getattr(config, "attribute_map", {}).get(name, name)
    return None


def learned_positions(model: Any) -> bool:
    """Whether ``model`` reads positions from a learned table (GPT-2's ``wpe``, BERT's
    ``position_embeddings``, OPT's ``embed_positions``). Past the table's size a forward pass fails with an
    ``IndexError``, where a RoPE or position-free model runs on and only reads the extra tokens poorly, so
    a length over the declared limit is an error for the first and a warning for the second."""
    import torch

    inputs = model.get_input_embeddings()
    for name, module in model.named_modules():
        leaf = name.rsplit(".", 1)[-1]
        if (
            isinstance(module, torch.nn.Embedding)
            and module is not inputs
            and ("pos" in leaf or leaf == "wpe")
        ):
            return True
    return False


def hard_position_limit(model: Any) -> int | None:
    """The most tokens ``model`` can take at all: its declared limit where it has a learned position table
    (see :func:`learned_positions`), else None (no hard limit)."""
    declared = position_limit(model.config)
    return declared[0] if declared is not None and learned_positions(model) else None


def load_tokenizer(path: str | Path, trust_remote_code: bool = False) -> Any:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(path), trust_remote_code=trust_remote_code)
    if tok.pad_token_id is None:  # many causal LMs ship without one; padding is masked anyway
        tok.pad_token = tok.eos_token
    return tok


def token_classifier(
    base: str | Path | Any, num_labels: int, trust_remote_code: bool = False, id2label: dict | None = None
) -> Any:
    """A token-classification model: from a local folder (a new head on a causal LM or a backbone, or
    an existing classifier) or from an HF config (random init, the tiny from-scratch path)."""
    from transformers import AutoModelForTokenClassification, PretrainedConfig

    labels = id2label or {i: f"LABEL_{i}" for i in range(num_labels)}
    kwargs = {"num_labels": num_labels, "id2label": labels, "label2id": {v: k for k, v in labels.items()}}
    if isinstance(base, PretrainedConfig):
        for key, value in kwargs.items():
            setattr(base, key, value)
        return AutoModelForTokenClassification.from_config(base)
    from prmkit.modeling.loading import quiet_load_report

    # a fresh head on a backbone: the report's "MISSING score.*" / "UNEXPECTED lm_head.*" rows are what
    # that means, not a problem (errors still raise)
    with quiet_load_report() if _new_head(base, trust_remote_code) else contextlib.nullcontext():
        return AutoModelForTokenClassification.from_pretrained(
            str(base), trust_remote_code=trust_remote_code, **kwargs
        )


def _new_head(path: str | Path, trust_remote_code: bool) -> bool:
    """Whether loading ``path`` as a token classifier puts a fresh head on it (a causal LM or backbone)."""
    from transformers import AutoConfig

    archs = AutoConfig.from_pretrained(str(path), trust_remote_code=trust_remote_code).architectures or []
    return not any(a.endswith("ForTokenClassification") for a in archs)


def causal_lm(base: str | Path | Any, trust_remote_code: bool = False) -> Any:
    """A causal LM: from a local folder (e.g. ``prmkit pretrain``'s output) or from an HF config (random
    init). The likelihood PRM head is the LM itself."""
    from transformers import AutoModelForCausalLM, PretrainedConfig

    if isinstance(base, PretrainedConfig):
        return AutoModelForCausalLM.from_config(base)
    return AutoModelForCausalLM.from_pretrained(str(base), trust_remote_code=trust_remote_code)

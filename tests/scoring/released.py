"""Stand-ins for the released PRM checkpoints: tiny random models of the real architecture classes, saved
with the released checkpoints' weight names and config fields (``architectures``, ``auto_map`` pointing
at modelling code that is not there, so nothing could run it), and the real tokenizer where a package
ships it (tests/scoring/real_tokenizers.py).

The weights are written as safetensors from tensors named here, never through prmkit's own classes, so a
name prmkit got wrong fails to load instead of agreeing with itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

SIZE = {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
        "num_key_value_heads": 1, "head_dim": 8, "max_position_embeddings": 2048}  # fmt: skip


def _save(folder: Path, weights: dict[str, torch.Tensor], config: Any, tokenizer: Any, **extra: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in weights.items()}, str(folder / "model.safetensors"))
    data = config.to_dict() | extra
    (folder / "config.json").write_text(json.dumps(data, indent=2))
    tokenizer.save_pretrained(folder)
    return folder


def causal_lm(folder: Path, tokenizer: Any, model_type: str, seed: int = 0, **config: Any) -> Path:
    """A causal LM of ``model_type`` (``mistral``, ``llama``, ``qwen2``), its own class's weight names."""
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(seed)
    cfg = AutoConfig.for_model(model_type, vocab_size=len(tokenizer), **(SIZE | config))
    cfg.pad_token_id = tokenizer.pad_token_id
    model = AutoModelForCausalLM.from_config(cfg)
    for p in model.parameters():  # random init is near-uniform over a big vocabulary; spread it out
        p.data.normal_(0, 0.5)
    cfg.architectures = [type(model).__name__]
    return _save(folder, dict(model.state_dict()), cfg, tokenizer)


def qwen_prm(folder: Path, tokenizer: Any, seed: int = 0, confident: bool = False, head: bool = True) -> Path:
    """Qwen2.5-Math-PRM's layout: the Qwen2 body under ``model.``, ``score.0`` (h x h) and ``score.2``
    (2 x h) with biases, ``architectures: [Qwen2ForProcessRewardModel]`` and its ``auto_map``.
    ``confident`` sets ``score.2`` so every token reads class 1 with p = 0.99995; ``head=False`` leaves
    the head out (a damaged or wrongly converted checkpoint)."""
    from transformers import Qwen2Config, Qwen2Model

    torch.manual_seed(seed)
    cfg = Qwen2Config(vocab_size=len(tokenizer), **SIZE)
    body = Qwen2Model(cfg)
    weights = {
        f"model.{k}": v.normal_(0, 0.5) if v.is_floating_point() else v for k, v in body.state_dict().items()
    }
    h = cfg.hidden_size
    weights["lm_head.weight"] = torch.randn(cfg.vocab_size, h)  # left in the file, as released files may
    if head:
        scale = h**-0.5  # logits of order 1: scores spread over (0, 1), not saturated
        weights |= {"score.0.weight": torch.randn(h, h) * scale, "score.0.bias": torch.randn(h) * scale,
                    "score.2.weight": torch.randn(2, h), "score.2.bias": torch.randn(2) * scale}  # fmt: skip
        if confident:
            odds = torch.tensor(0.99995 / 0.00005).log()
            weights["score.2.weight"] = torch.zeros(2, h)
            weights["score.2.bias"] = torch.tensor([0.0, float(odds)])
    cfg.architectures = ["Qwen2ForProcessRewardModel"]
    auto_map = {"AutoConfig": "configuration_qwen2_rm.Qwen2RMConfig",
                "AutoModel": "modeling_qwen2_rm.Qwen2ForProcessRewardModel"}  # fmt: skip
    return _save(folder, weights, cfg, tokenizer, auto_map=auto_map)


def skywork_prm(folder: Path, tokenizer: Any, seed: int = 0) -> Path:
    """Skywork-o1-Open-PRM's layout: a Qwen2 causal LM (``model.*``, ``lm_head.weight``, untied as in the
    7B) and the value head ``v_head.summary`` (1 x h, bias), ``architectures: [Qwen2ForPrmModel]``."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    cfg = Qwen2Config(vocab_size=len(tokenizer), tie_word_embeddings=False, **SIZE)
    lm = Qwen2ForCausalLM(cfg)
    weights = {k: v.normal_(0, 0.5) if v.is_floating_point() else v for k, v in lm.state_dict().items()}
    weights |= {
        "v_head.summary.weight": torch.randn(1, cfg.hidden_size),
        "v_head.summary.bias": torch.randn(1),
    }
    cfg.architectures = ["Qwen2ForPrmModel"]
    cfg.pad_token_id = tokenizer.pad_token_id
    auto_map = {"AutoConfig": "configuration_qwen2_rm.Qwen2RMConfig",
                "AutoModel": "modeling_qwen2_rm.Qwen2ForRewardModel"}  # fmt: skip
    return _save(folder, weights, cfg, tokenizer, auto_map=auto_map)


def token_classifier(folder: Path, tokenizer: Any, seed: int = 0) -> Path:
    """What TRL's ``PRMTrainer`` saves: a Qwen2 token classifier with two labels (``score.*``)."""
    from transformers import Qwen2Config, Qwen2ForTokenClassification

    torch.manual_seed(seed)
    cfg = Qwen2Config(vocab_size=len(tokenizer), num_labels=2, **SIZE)
    cfg.pad_token_id = tokenizer.pad_token_id
    model = Qwen2ForTokenClassification(cfg)
    weights = {k: v.normal_(0, 0.5) if v.is_floating_point() else v for k, v in model.state_dict().items()}
    cfg.architectures = ["Qwen2ForTokenClassification"]
    return _save(folder, weights, cfg, tokenizer)


def universal_prm(folder: Path, tokenizer: Any, seed: int = 0, head: bool = True) -> Path:
    """Universal-PRM-7B's assumed layout (unverified: Qwen2.5-Math-RM's value head): the Qwen2 body under
    ``model.``, ``score.0`` (h x h) and ``score.2`` (1 x h) with biases, an ``lm_head`` left in the file;
    ``head=False`` leaves the head out."""
    from transformers import Qwen2Config, Qwen2Model

    torch.manual_seed(seed)
    cfg = Qwen2Config(vocab_size=len(tokenizer), **SIZE)
    body = Qwen2Model(cfg)
    weights = {
        f"model.{k}": v.normal_(0, 0.5) if v.is_floating_point() else v for k, v in body.state_dict().items()
    }
    h = cfg.hidden_size
    weights["lm_head.weight"] = torch.randn(cfg.vocab_size, h)
    if head:
        scale = h**-0.5
        weights |= {"score.0.weight": torch.randn(h, h) * scale, "score.0.bias": torch.randn(h) * scale,
                    "score.2.weight": torch.randn(1, h), "score.2.bias": torch.randn(1) * scale}  # fmt: skip
    cfg.architectures = ["Qwen2ForRewardModel"]
    cfg.pad_token_id = tokenizer.pad_token_id
    auto_map = {"AutoModel": "modeling_universal_prm.Qwen2ForRewardModel"}  # code that is not there
    return _save(folder, weights, cfg, tokenizer, auto_map=auto_map)

"""What makes a large backbone fit in training: LoRA adapters (peft), float32 master weights under mixed
precision, gradient checkpointing, and how a LoRA-trained model is saved (merged into an ordinary
checkpoint by default, or the adapter folder with a README that merges it).

:func:`for_training` turns the loaded model into the one the optimiser steps and says what the process
card records (``precision``, ``lora``); :func:`save_trained` writes the result; ``heads.py`` calls both.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from prmkit.cards import write_model_card
from prmkit.core.files import atomic_write
from prmkit.modeling.checkpoint import save_checkpoint
from prmkit.modeling.heads import head as head_kind
from prmkit.modeling.spec import PrmSpec, write_spec
from prmkit.training import loop
from prmkit.training.config import OrmConfig, PrmConfig


def _dtypes(params: Any) -> str | None:
    """The dtype of ``params`` ("float32"), several joined by "+", None for none."""
    return "+".join(sorted({str(p.dtype).removeprefix("torch.") for p in params})) or None


def _input_in_own_dtype(module: Any, args: tuple) -> tuple:
    """Forward pre-hook of a float32 head on a bf16 backbone: outside autocast (dev scoring) it reads
    the backbone's bf16 output in its own dtype."""
    dtype = next(module.parameters()).dtype
    return tuple(
        a.to(dtype) if hasattr(a, "is_floating_point") and a.is_floating_point() else a for a in args
    )


def _lora(config: PrmConfig | OrmConfig, model: Any, spec: PrmSpec) -> tuple[Any, dict[str, Any]]:
    """``model`` with LoRA adapters on a frozen backbone (peft), the step head (the modules outside the
    backbone, less an LM head tied to the embeddings) and the step tag's embedding row trained in full."""
    from peft import LoraConfig, get_peft_model
    from peft.tuners.lora import LoraLayer

    embeddings = model.get_input_embeddings().weight
    head = [name for name, module in model.named_children() if name != model.base_model_prefix
            and any(p is not embeddings for p in module.parameters())]  # fmt: skip
    tokens = [spec.tag_id] if head_kind(spec.head).reads_tag else []
    for name in head:
        getattr(model, name).register_forward_pre_hook(_input_in_own_dtype)
    targets = config.lora_target_modules
    lora = LoraConfig(
        r=config.lora_r,
        lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout,
        target_modules="all-linear" if targets == ["all-linear"] else targets,
        exclude_modules=head or None,
        modules_to_save=head or None,
        trainable_token_indices=tokens or None,
    )
    with warnings.catch_warnings():  # peft 0.21 reads transformers 5.23's is_gradient_checkpointing
        warnings.filterwarnings("ignore", "`is_gradient_checkpointing` is deprecated", FutureWarning)
        model = get_peft_model(model, lora, autocast_adapter_dtype=config.master_weights == "fp32")
    trainable, total = model.get_nb_trainable_parameters()
    return model, {
        "r": config.lora_r,
        "alpha": config.lora_alpha,
        "dropout": config.lora_dropout,
        "target_modules": targets,
        "adapted_modules": sum(isinstance(m, LoraLayer) for m in model.modules()),
        "trained_in_full": head,
        "trained_tokens": tokens,
        "trainable_parameters": trainable,
        "parameters": total,
        "saved": "merged" if config.lora_merge else "adapter",
    }


def checkpointing_args() -> dict[str, Any]:
    """TrainingArguments for non-reentrant checkpointing, under the name the installed transformers
    reads: ``activation_checkpointing`` where it has it (5.23 warns on the old name, to go in 6),
    ``gradient_checkpointing`` before (the 5.10 that verl pins)."""
    from transformers import TrainingArguments

    name = (
        "activation" if "activation_checkpointing" in TrainingArguments.__dataclass_fields__ else "gradient"
    )
    return {f"{name}_checkpointing": True, f"{name}_checkpointing_kwargs": {"use_reentrant": False}}


def for_training(config: PrmConfig | OrmConfig, model: Any, spec: PrmSpec) -> tuple[Any, dict[str, Any]]:
    """The model the optimiser steps (LoRA adapters when ``lora_r`` is set; its trained weights float32
    for ``master_weights="fp32"``) and what the process card says about it: ``precision``, ``lora``."""
    if config.gradient_checkpointing and not getattr(model, "supports_gradient_checkpointing", False):
        raise ValueError(
            f"--gradient-checkpointing: {type(model).__name__} does not support it (transformers' "
            "supports_gradient_checkpointing is off); train without it"
        )
    loaded = _dtypes(model.parameters())
    flags = loop.precision_flags(config.mixed_precision)
    autocast = next((k for k in ("bf16", "fp16") if flags.get(k)), "no")
    lora = None
    if config.lora_r is not None:
        model, lora = _lora(config, model, spec)
    if config.master_weights == "fp32":
        if lora is None or autocast == "no":
            model.float()  # without autocast the compute is float32, frozen weights too
        else:  # autocast computes in bf16 / fp16: the frozen backbone stays as loaded
            for p in model.parameters():
                if p.requires_grad:
                    p.data = p.data.float()
    precision = {
        "master_weights": config.master_weights,
        "mixed_precision": autocast,
        "loaded_dtype": loaded,
        "optimiser_dtype": _dtypes(p for p in model.parameters() if p.requires_grad),
        "frozen_dtype": _dtypes(p for p in model.parameters() if not p.requires_grad),
    }
    return model, {"precision": precision, "lora": lora}


ADAPTER_NOTE = """# LoRA adapter of a {kind} trained with prmkit, not merged

This folder holds LoRA adapters (rank {r}, alpha {alpha}, on {targets}){full} for the base model
`{base}`: not a model by itself, so `prmkit score` and `from_pretrained` need it merged first. `config.json` is the trained model's (classes, vocabulary, the
`prmkit` block), the tokenizer the one it was trained with; `process_card.json` says how it was trained.

## Merge it into an ordinary checkpoint

```python
import torch
from peft import PeftModel
from transformers import AutoConfig, AutoTokenizer, {auto_class}

adapter, base, merged = "{path}", "{base}", "{path}-merged"
config = AutoConfig.from_pretrained(adapter)
model = {auto_class}.from_pretrained(base, num_labels=config.num_labels, dtype=torch.{dtype})  # as trained
model.resize_token_embeddings(config.vocab_size)
model = PeftModel.from_pretrained(model, adapter).merge_and_unload()
model.config.update({{k: getattr(config, k) for k in ("id2label", "label2id", "pad_token_id", "prmkit")}})
model.save_pretrained(merged)
AutoTokenizer.from_pretrained(adapter).save_pretrained(merged)
```
"""


def save_trained(
    config: PrmConfig | OrmConfig,
    model: Any,
    tok: Any,
    spec: PrmSpec,
    out: Path,
    memory: dict[str, Any],
    weights: dict[str, Any] | None = None,
) -> None:
    """Write the trained model: an ordinary checkpoint (LoRA merged into it by default) with its model
    card, or with ``lora_merge`` off the adapter folder and its README (:data:`ADAPTER_NOTE`).
    ``weights`` are the model's gathered from the ranks' shards (FSDP, DeepSpeed), saved in place of
    the shard this process holds."""
    lora = memory["lora"]
    if lora is None or config.lora_merge:
        if lora is not None:
            model = model.merge_and_unload()
            model.to(model.get_input_embeddings().weight.dtype)  # the head trained in float32: one dtype
        save_checkpoint(model, tok, spec, out, weights)
        write_model_card(out, spec, config.base_model)
        return
    # adapter_model.safetensors, adapter_config.json, peft's README
    model.save_pretrained(str(out), **({} if weights is None else {"state_dict": weights}))
    tok.save_pretrained(str(out))
    inner = model.get_base_model()
    write_spec(inner.config, spec)
    inner.config.save_pretrained(str(out))
    full = [f"the fully trained `{name}`" for name in lora["trained_in_full"]]
    full += [f"the embedding row of token {i} (the step tag)" for i in lora["trained_tokens"]]
    note = ADAPTER_NOTE.format(kind=spec.kind.upper(), r=lora["r"], alpha=lora["alpha"],
                               full="".join(f", {part}" for part in full),
                               targets=", ".join(lora["target_modules"]), base=config.base_model,
                               auto_class=head_kind(spec.head).auto_class, path=out,
                               dtype=memory["precision"]["frozen_dtype"])  # fmt: skip
    with atomic_write(out / "README.md") as fh:
        fh.write(note)

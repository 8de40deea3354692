"""The auxiliary token-surprise loss and layer growth: helping a small PRM use what its LM knows.

Why: a causal LM pretrained on right solutions already *knows* which token a wrong step gets wrong (used
zero-shot, its lowest token probability per step locates first errors; see the ``likelihood``
convention), yet a step head fine-tuned on one bit per step barely learns to read that. The network
has to compare each written token with what it would have predicted, then carry the verdict to the step
tag, and a two-layer LM spends both layers on predicting. So:

- :func:`grow` stacks fresh layers on the backbone (copies of its last layer whose output projections
  are zero, so the grown network starts as the base model) to give the tag room to gather the verdict;
- :class:`SurpriseLoss` teaches the verdict densely: at every solution token a training-only linear head,
  reading the output of the base model's last layer, predicts whether the frozen base LM gave that token
  probability at least ``threshold``. Labels come from the LM itself, so no step labels are needed.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any


def grow(model: Any, layers: int) -> Any:
    """Append ``layers`` decoder layers to ``model``'s backbone, each starting as the identity."""
    import torch

    if layers <= 0:
        return model
    stack = model.base_model.layers
    for _ in range(layers):
        layer = copy.deepcopy(stack[-1])
        if hasattr(layer, "self_attn") and hasattr(layer.self_attn, "layer_idx"):
            layer.self_attn.layer_idx = len(stack)
        with torch.no_grad():
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        stack.append(layer)
    config = model.config
    for per_layer in ("layer_types", "no_rope_layers"):  # per-layer lists (SmolLM3 has both)
        if getattr(config, per_layer, None):
            values = getattr(config, per_layer)
            setattr(config, per_layer, [*values, *[values[-1]] * layers])
    config.num_hidden_layers = len(stack)
    return model


class SurpriseLoss:
    """``weight`` x binary cross-entropy of a token-level head against "the frozen LM expected this token".

    The head is a module attached to the trained model as ``prmkit_surprise_head`` so the optimiser and
    resumable checkpoints include it; :meth:`detach` removes it before the final checkpoint is saved.
    """

    ATTR = "prmkit_surprise_head"

    def __init__(self, model: Any, base_model: str | Path, weight: float, threshold: float, layer: int,
                 skip_ids: list[int], trust_remote_code: bool = False):  # fmt: skip
        import torch
        from transformers import AutoModelForCausalLM

        try:
            self.lm = AutoModelForCausalLM.from_pretrained(
                str(base_model), trust_remote_code=trust_remote_code
            )
        except ValueError as err:
            raise ValueError(f"surprise_weight needs a causal-LM base_model; {base_model}: {err}") from err
        self.lm.eval().requires_grad_(False)
        self.weight, self.threshold, self.layer = weight, threshold, layer
        self.skip_ids = torch.tensor(skip_ids, dtype=torch.long)
        setattr(model, self.ATTR, torch.nn.Linear(model.config.hidden_size, 1))

    def __call__(self, model: Any, inputs: dict[str, Any], hidden_states: tuple) -> Any:
        import torch
        import torch.nn.functional as F

        ids, solution = inputs["input_ids"], inputs["solution_mask"]
        with torch.no_grad():
            self.lm.to(ids.device)
            logp = (
                self.lm(input_ids=ids, attention_mask=inputs["attention_mask"]).logits.float().log_softmax(-1)
            )
            expected = torch.zeros_like(solution, dtype=torch.float)
            expected[:, 1:] = (
                logp[:, :-1].gather(-1, ids[:, 1:, None])[..., 0].exp() >= self.threshold
            ).float()
        # tokens the LM never saw in pretraining (the step tag) and the token right after them say nothing
        skip = torch.isin(ids, self.skip_ids.to(ids.device))
        skip[:, 1:] |= skip[:, :-1].clone()
        where = solution & ~skip
        if not where.any():
            return hidden_states[-1].sum() * 0.0
        h = model.base_model.norm(hidden_states[self.layer])
        logits = getattr(model, self.ATTR)(h[where])[:, 0]
        return self.weight * F.binary_cross_entropy_with_logits(logits.float(), expected[where])

    @classmethod
    def detach(cls, model: Any) -> None:
        if hasattr(model, cls.ATTR):
            delattr(model, cls.ATTR)

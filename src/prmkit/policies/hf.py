"""Rollouts from a local Hugging Face causal LM (``transformers`` ``generate``), on CPU or GPU.

One ``generate`` call per request draws all ``n`` continuations (``num_return_sequences``), stopping each
sequence once it has written an answer step or ``max_steps`` full steps; the text is then cut by the same
:class:`~prmkit.policies.text.StepFormat` an endpoint policy uses. The world's tiny LM loads through
here like any pretrained model.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prmkit.core.model import Continuation, Problem, Step
from prmkit.policies.text import StepFormat


def _stopper(tokenizer: Any, fmt: StepFormat, prompt_len: int, max_steps: int | None):
    """A per-sequence stopping criterion: answer stated, or ``max_steps`` separators written."""
    import torch
    from transformers import StoppingCriteria

    class _StopAtStep(StoppingCriteria):
        def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs: Any) -> torch.Tensor:
            texts = tokenizer.batch_decode(input_ids[:, prompt_len:], skip_special_tokens=True)
            done = []
            for text in texts:
                parts = text.split(fmt.step_separator)
                complete = parts[:-1]  # the last part may still be growing
                stop = any(fmt.answer_in(p) is not None for p in complete if p.strip())
                if max_steps is not None:
                    stop = stop or sum(1 for p in complete if p.strip()) >= max_steps
                done.append(stop)
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    return _StopAtStep()


class HFPolicy:
    """A :class:`~prmkit.core.protocols.Policy` from a local causal-LM folder (or loaded objects)."""

    def __init__(
        self,
        model: str | Path | Any,
        tokenizer: Any | None = None,
        *,
        step_format: StepFormat | None = None,
        temperature: float = 1.0,
        top_p: float = 1.0,
        max_new_tokens: int = 256,
        device: str | None = None,
    ):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if isinstance(model, str | Path):
            self.name = f"hf:{Path(model).name}"
            tokenizer = tokenizer or AutoTokenizer.from_pretrained(str(model))
            model = AutoModelForCausalLM.from_pretrained(str(model))
        else:
            self.name = f"hf:{type(model).__name__}"
        if tokenizer is None:
            raise ValueError("HFPolicy: a loaded model needs its tokenizer")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device).eval()
        self.tokenizer = tokenizer
        self.format = step_format or StepFormat()
        self.temperature, self.top_p, self.max_new_tokens = temperature, top_p, max_new_tokens
        self._lock = threading.Lock()  # torch's RNG is global: one seeded generate at a time

    def continue_from(
        self,
        problem: Problem,
        prefix: Sequence[Step],
        n: int = 1,
        *,
        seed: int | None = None,
        max_steps: int | None = None,
    ) -> list[Continuation]:
        import torch
        from transformers import StoppingCriteriaList

        enc = self.tokenizer(self.format.prompt(problem, prefix), return_tensors="pt").to(self.device)
        prompt_len = enc["input_ids"].shape[1]
        pad = (
            self.tokenizer.pad_token_id
            if self.tokenizer.pad_token_id is not None
            else self.tokenizer.eos_token_id
        )
        sample = self.temperature > 0
        kwargs: dict[str, Any] = (
            {"do_sample": sample, "temperature": self.temperature, "top_p": self.top_p}
            if sample
            else {"do_sample": False}
        )
        with self._lock, torch.no_grad():
            if seed is not None:
                torch.manual_seed(seed)
            out = self.model.generate(
                **enc,
                max_new_tokens=self.max_new_tokens,
                num_return_sequences=n,
                pad_token_id=pad,
                stopping_criteria=StoppingCriteriaList(
                    [_stopper(self.tokenizer, self.format, prompt_len, max_steps)]
                ),
                **kwargs,
            )
        conts = []
        for row in out[:, prompt_len:]:
            n_tokens = int((row != pad).sum()) if pad is not None else len(row)
            text = self.tokenizer.decode(row, skip_special_tokens=True)
            conts.append(self.format.parse(text, max_steps=max_steps, num_tokens=n_tokens))
        return conts

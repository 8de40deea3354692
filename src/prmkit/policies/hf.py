"""Rollouts from a local Hugging Face causal LM, on CPU or GPU, with prmkit's own sampling loop.

Why not ``generate``: with a stopping criterion that decodes every sequence at every token (the only way
``StoppingCriteria`` can see an answer step) and transformers' per-step bookkeeping, sampling ~70-token
continuations from the world's 0.8 M-parameter LM ran ten times slower than its forward passes.
:func:`sample_continuations` instead runs the prompt once, copies its KV cache to the ``n`` rows, and
then makes one cached forward step per token: the next token is drawn on the ids (temperature, top-p,
a seeded ``torch.Generator``), a row stops on EOS or, **only when it has just written a token holding
the step separator**, when the step it closed states an answer or was its ``max_steps``-th; finished
rows leave the batch (and the cache) at once. The text is then cut by the same
:class:`~prmkit.core.steps.StepFormat` an endpoint policy uses. The world's tiny LM loads through
here like any pretrained model; ``bench/bench_sampling.py`` measures the loop against its forward bound.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from prmkit.core.model import Continuation, Problem, Step
from prmkit.core.steps import StepFormat


def separator_token_ids(tokenizer: Any, separator: str) -> frozenset[int]:
    """Ids of every token whose text contains ``separator`` (e.g. ``"\\n"``, ``".\\n"``, ``"\\n\\n"``):
    the only tokens after which a step can have closed."""
    found = set()
    for i in range(len(tokenizer)):
        if separator in tokenizer.decode([i], skip_special_tokens=True):
            found.add(i)
    return frozenset(found)


class StepStop:
    """Per-row stop rule checked on token ids: decode only the text written since the last separator
    token, and only when a separator token arrives."""

    def __init__(self, tokenizer: Any, fmt: StepFormat, max_steps: int | None, separator_ids: frozenset[int]):
        self.tokenizer, self.fmt, self.max_steps = tokenizer, fmt, max_steps
        self.separator_ids = separator_ids
        self.start: dict[int, int] = {}
        self.carry: dict[int, str] = {}
        self.steps: dict[int, int] = {}

    def __call__(self, row: int, ids: list[int]) -> bool:
        if ids[-1] not in self.separator_ids:
            return False
        start = self.start.get(row, 0)
        text = self.carry.get(row, "") + self.tokenizer.decode(ids[start:], skip_special_tokens=True)
        *closed, open_part = text.split(self.fmt.step_separator)
        self.start[row], self.carry[row] = len(ids), open_part
        for part in closed:
            if not part.strip():
                continue
            self.steps[row] = self.steps.get(row, 0) + 1
            if self.fmt.answer_in(part) is not None:
                return True
            if self.max_steps is not None and self.steps[row] >= self.max_steps:
                return True
        return False


def _draw(logits: Any, temperature: float, top_p: float, generator: Any) -> Any:
    import torch

    if temperature <= 0:
        return logits.argmax(-1)
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    if top_p < 1.0:
        sorted_probs, order = probs.sort(dim=-1, descending=True)
        drop = sorted_probs.cumsum(-1) - sorted_probs > top_p  # keep the smallest set reaching top_p
        sorted_probs = sorted_probs.masked_fill(drop, 0.0)
        probs = torch.zeros_like(probs).scatter(-1, order, sorted_probs)
    # the exponential race: argmax of p / E with E ~ Exp(1) draws from p (cheaper than multinomial)
    return (probs / torch.empty_like(probs).exponential_(1.0, generator=generator)).argmax(-1)


def sample_continuations(
    model: Any,
    prompt_ids: Sequence[int],
    n: int,
    max_new_tokens: int,
    *,
    temperature: float = 1.0,
    top_p: float = 1.0,
    seed: int | None = None,
    eos_ids: Sequence[int] = (),
    stop: Callable[[int, list[int]], bool] | None = None,
) -> list[list[int]]:
    """``n`` continuations of one prompt as token ids (each ends at its EOS, its stop, or
    ``max_new_tokens``), with a KV cache, all rows batched, finished rows dropped from the batch.

    ``stop(row, ids)`` is asked after every token of a row; the same ``seed`` gives the same ids.
    """
    import torch

    device = next(model.parameters()).device
    generator = torch.Generator(device=device)
    generator.manual_seed(seed if seed is not None else random.getrandbits(63))
    eos = set(eos_ids)
    out: list[list[int]] = [[] for _ in range(n)]
    if n == 0 or max_new_tokens <= 0:
        return out
    with torch.inference_mode():
        first = model(input_ids=torch.tensor([list(prompt_ids)], device=device), use_cache=True)
        cache = first.past_key_values
        cache.batch_repeat_interleave(n)
        logits = first.logits[:, -1, :].expand(n, -1)
        alive = list(range(n))
        for _ in range(max_new_tokens):
            tokens = _draw(logits, temperature, top_p, generator)
            keep = []
            for r, token in enumerate(tokens.tolist()):
                row = alive[r]
                out[row].append(token)
                done = (
                    token in eos
                    or len(out[row]) >= max_new_tokens
                    or (stop is not None and stop(row, out[row]))
                )
                if not done:
                    keep.append(r)
            if not keep:
                break
            if len(keep) < len(alive):
                index = torch.tensor(keep, device=device)
                cache.batch_select_indices(index)
                tokens, alive = tokens[index], [alive[r] for r in keep]
            logits = model(input_ids=tokens[:, None], past_key_values=cache, use_cache=True).logits[:, -1, :]
    return out


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
        chat: bool = False,
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
        self.chat = chat
        if chat and not getattr(tokenizer, "chat_template", None):
            raise ValueError(f"HFPolicy: chat=True, but the tokenizer of {self.name} has no chat template")
        self.separator_ids = separator_token_ids(tokenizer, self.format.step_separator)
        eos = tokenizer.eos_token_id
        self.eos_ids = [eos] if isinstance(eos, int) else list(eos or [])
        self._lock = threading.Lock()  # one sampling loop at a time: they would only fight over cores

    def settings(self) -> dict[str, Any]:
        """How it samples, as traces record it (``metadata["sampling"]``): the model, the sampling
        parameters and the prompt layout."""
        return {
            "model": self.name.removeprefix("hf:"), "temperature": self.temperature, "top_p": self.top_p,
            "max_new_tokens": self.max_new_tokens, "chat": self.chat, "step_format": self.format.model_dump(),
        }  # fmt: skip

    def prompt_ids(self, problem: Problem, prefix: Sequence[Step]) -> list[int]:
        """The token ids the model continues: the text prompt, or (``chat``) the model's chat template
        over :meth:`~prmkit.core.steps.StepFormat.messages`, the assistant's message left open."""
        if not self.chat:
            return self.tokenizer(self.format.prompt(problem, prefix))["input_ids"]
        messages, cont = self.format.messages(problem, prefix)
        ids = self.tokenizer.apply_chat_template(
            messages, tokenize=True, add_generation_prompt=not cont, continue_final_message=cont
        )
        return list(ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids)

    def continue_from(
        self,
        problem: Problem,
        prefix: Sequence[Step],
        n: int = 1,
        *,
        seed: int | None = None,
        max_steps: int | None = None,
    ) -> list[Continuation]:
        prompt = self.prompt_ids(problem, prefix)
        stop = StepStop(self.tokenizer, self.format, max_steps, self.separator_ids)
        with self._lock:
            rows = sample_continuations(
                self.model, prompt, n, self.max_new_tokens, temperature=self.temperature, top_p=self.top_p,
                seed=seed, eos_ids=self.eos_ids, stop=stop,
            )  # fmt: skip
        out = []
        for row in rows:
            text = self.tokenizer.decode(row, skip_special_tokens=True)
            cont = self.format.parse(text, max_steps=max_steps, num_tokens=len(row))
            cut = len(row) >= self.max_new_tokens and row[-1] not in self.eos_ids  # the token limit ended it
            if cut and not cont.finished and (max_steps is None or len(cont.steps) < max_steps):
                cont = cont.model_copy(update={"truncated": True})
            out.append(cont)
        return out

"""Where a generative verifier runs: an OpenAI-compatible server or a local transformers model, behind
one narrow contract (:class:`VerdictBackend`) that :mod:`prmkit.scoring.verdicts` scores with.

Three methods, the same on both:

- ``render(messages, prefill)``: the chat as text, by the verifier's own chat template (client side, as
  ThinkPRM's code renders it: ``apply_chat_template(..., add_generation_prompt=True)``), then ``prefill``;
- ``complete(prompt, n, stop, max_tokens, ...)``: ``n`` sampled continuations of a text, each cut before
  the first stop string (as vLLM and SGLang return them), with each token's top logprobs when asked;
- ``choice_logprobs(text, choices)``: how likely each choice is to follow ``text``, by SGLang's
  ``select`` (what ThinkPRM's ``gen(choices=...)`` calls): the mean logprob of the tokens of
  ``text + choice`` from ``logprob_start_len = prompt_len - 2`` on, where ``prompt_len`` counts the tokens of
  ``text`` alone and the first of them has no logprob (SGLang leaves it None and the mean skips it). So
  the mean runs from the token that replaces ``text``'s last one (token healing: ``"? " + "yes"`` reads
  ``" yes"``) to the end: for a one-token choice, its logprob after ``text`` (:func:`healed_mean`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from prmkit.policies.genprm import Completion
from prmkit.policies.http import BadAnswerError, OpenAIClient, answer_bound


class VerdictBackend(Protocol):
    name: str
    tokenizer: Any
    """The verifier's tokenizer (its chat template and EOS); an endpoint's is loaded on first use."""

    def render(self, messages: list[dict], prefill: str = "") -> str: ...

    def complete(
        self, prompt: str, n: int, stop: Sequence[str], max_tokens: int, *,
        temperature: float, seed: int, top_p: float = 1.0, top_k: int = 0, top_logprobs: int = 0,
        keep_stop: bool = False,
    ) -> list[Completion]: ...  # fmt: skip

    def choice_logprobs(self, text: str, choices: Sequence[str]) -> list[float]: ...


def healed_mean(logprobs: Sequence[float | None], prompt_len: int) -> float:
    """SGLang's normalised logprob of a choice: ``logprobs`` are those of ``text + choice``'s tokens
    (None where there is none); the mean over positions ``prompt_len - 1`` to the end, past a None."""
    values = [x for x in logprobs[max(prompt_len - 1, 0) :] if x]  # SGLang: ``if x[0]``
    if not values:
        raise ValueError(f"no logprob after the text's {prompt_len} tokens: the choice added no token")
    return sum(values) / len(values)


def cut_at_stop(text: str, stop: Sequence[str], keep: bool = False) -> str:
    """``text`` up to the first of the stop strings (what a server returns when one matches), with it
    when ``keep``."""
    ends = [(i, i + len(s)) for s in stop if s for i in [text.find(s)] if i >= 0]
    if not ends:
        return text
    start, end = min(ends)
    return text[: end if keep else start]


class EndpointVerdicts:
    """A verifier behind ``POST /v1/completions`` (vLLM, SGLang): the prompt rendered here with
    ``tokenizer``'s chat template (by default the tokenizer of the model the server names)."""

    def __init__(self, url: str, *, tokenizer: Any = None, model: str | None = None, **client: Any):
        self.client = OpenAIClient(url, **client)
        self.model = model or _served_model(self.client)
        self.name = f"{url.rstrip('/')}/{self.model}"
        self.tokenizer = tokenizer if tokenizer is not None and not isinstance(tokenizer, str) else None
        self._tokenizer_name = tokenizer if isinstance(tokenizer, str) else self.model

    def render(self, messages: list[dict], prefill: str = "") -> str:
        if self.tokenizer is None:
            from transformers import AutoTokenizer

            self.tokenizer = AutoTokenizer.from_pretrained(self._tokenizer_name)
        return render_chat(self.tokenizer, messages, prefill)

    def complete(
        self, prompt: str, n: int, stop: Sequence[str], max_tokens: int, *,
        temperature: float, seed: int, top_p: float = 1.0, top_k: int = 0, top_logprobs: int = 0,
        keep_stop: bool = False,
    ) -> list[Completion]:  # fmt: skip
        payload: dict[str, Any] = {
            "model": self.model, "prompt": prompt, "n": n, "stop": list(stop), "max_tokens": max_tokens,
            "temperature": temperature, "top_p": top_p, "seed": seed,
        }  # fmt: skip
        if top_k:
            payload["top_k"] = top_k
        if top_logprobs:
            payload["logprobs"] = top_logprobs
        if keep_stop:
            payload["include_stop_str_in_output"] = True
        body = self.client.post("/v1/completions", payload, answer_bound(n, max_tokens, top_logprobs))
        choices = _choices(body, n, self.client.base_url)
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        spent = usage.get("completion_tokens")
        per_choice = spent if isinstance(spent, int) and n == 1 else max_tokens
        return [_completion(c, per_choice, top_logprobs > 0, keep_stop) for c in choices]

    def choice_logprobs(self, text: str, choices: Sequence[str]) -> list[float]:
        """One request: ``text`` and ``text + choice`` for each choice, echoed with their logprobs."""
        prompts = [text, *(text + c for c in choices)]
        payload = {"model": self.model, "prompt": prompts, "max_tokens": 1, "temperature": 0.0,
                   "echo": True, "logprobs": 0}  # fmt: skip
        size = answer_bound(len(prompts), 8 * len(text) + 64)
        rows = _choices(
            self.client.post("/v1/completions", payload, size), len(prompts), self.client.base_url
        )
        echoed = [_echoed(row, len(p), self.client.base_url) for row, p in zip(rows, prompts, strict=True)]
        return [healed_mean(lp, len(echoed[0])) for lp in echoed[1:]]

    def close(self) -> None:
        self.client.close()


class LocalVerdicts:
    """A verifier run here by transformers: ``generate`` for the chains, one forward for the choices."""

    def __init__(self, model: Any, tokenizer: Any, name: str):
        self.model, self.tokenizer, self.name = model, tokenizer, name

    def render(self, messages: list[dict], prefill: str = "") -> str:
        return render_chat(self.tokenizer, messages, prefill)

    def _ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False).input_ids  # the template wrote them

    def complete(
        self, prompt: str, n: int, stop: Sequence[str], max_tokens: int, *,
        temperature: float, seed: int, top_p: float = 1.0, top_k: int = 0, top_logprobs: int = 0,
        keep_stop: bool = False,
    ) -> list[Completion]:  # fmt: skip
        import torch
        from transformers import GenerationConfig

        tok, sample = self.tokenizer, temperature > 0
        ids = torch.tensor([self._ids(prompt)] * n, device=self.model.device)
        config = GenerationConfig(
            max_new_tokens=max_tokens, do_sample=sample, pad_token_id=tok.pad_token_id or 0,
            eos_token_id=tok.eos_token_id, stop_strings=[s for s in stop if s] or None,
            output_logits=top_logprobs > 0, return_dict_in_generate=True,
            **({"temperature": temperature, "top_p": top_p, "top_k": top_k} if sample else {}),
        )  # fmt: skip
        cuda = self.model.device.type == "cuda"
        with torch.random.fork_rng(devices=None if cuda else []), torch.inference_mode():
            torch.manual_seed(seed)
            out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                                      generation_config=config, tokenizer=tok)  # fmt: skip
        new = out.sequences[:, ids.shape[1] :]
        done = []
        for row in range(n):
            generated = new[row].tolist()
            if tok.eos_token_id in generated:  # the row ended there; what follows is padding
                generated = generated[: generated.index(tok.eos_token_id) + 1]
            text = cut_at_stop(tok.decode(generated, skip_special_tokens=False), stop, keep_stop)
            kept = generated[: _writing(tok, generated, text)]  # the tokens drawn, not ``text`` re-encoded
            tokens = None
            if top_logprobs:
                logp = [torch.log_softmax(step[row].float(), -1) for step in out.logits[: len(kept)]]
                tokens = tuple(
                    (tok.decode([t]), float(lp[t]),
                     {tok.decode([int(i)]): float(v) for v, i in zip(*lp.topk(top_logprobs), strict=True)})
                    for t, lp in zip(kept, logp, strict=False)
                )  # fmt: skip
            done.append(Completion(text, len(kept), tokens))
        return done

    def choice_logprobs(self, text: str, choices: Sequence[str]) -> list[float]:
        """One forward over ``text + choice`` for every choice (right-padded rows)."""
        import torch

        prompt_len = len(self._ids(text))
        rows = [self._ids(text + c) for c in choices]
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self.tokenizer.pad_token_id or 0, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for k, r in enumerate(rows):
            ids[k, : len(r)], mask[k, : len(r)] = torch.tensor(r), 1
        with torch.inference_mode():
            logits = self.model(
                input_ids=ids.to(self.model.device), attention_mask=mask.to(self.model.device)
            ).logits
        logp = torch.log_softmax(logits.float(), -1).cpu()
        out = []
        for k, r in enumerate(rows):  # token t's logprob is read at t - 1; the first has none
            values: list[float | None] = [None] + [float(logp[k, t - 1, r[t]]) for t in range(1, len(r))]
            out.append(healed_mean(values, prompt_len))
        return out


def _writing(tokenizer: Any, ids: list[int], text: str) -> int:
    """How many of the generated ``ids`` write ``text`` (their decoding cut at a stop string): the fewest
    whose decoding is as long. Re-encoding ``text`` instead can give other tokens (byte pieces decoded to
    U+FFFD re-encode to three bytes), which would miscount the tokens and pair logprobs with the wrong ones."""
    low, high = 0, len(ids)
    while low < high:
        mid = (low + high) // 2
        if len(tokenizer.decode(ids[:mid], skip_special_tokens=False)) >= len(text):
            high = mid
        else:
            low = mid + 1
    return low


def render_chat(tokenizer: Any, messages: list[dict], prefill: str = "") -> str:
    """The conversation by the tokenizer's chat template with the generation prompt, then ``prefill``."""
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError(
            f"the verifier's tokenizer ({getattr(tokenizer, 'name_or_path', '?')}) has no chat template: "
            "a generative verifier's prompt is rendered with its own"
        )
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return text + prefill


def _served_model(client: OpenAIClient) -> str:
    body = client.get("/v1/models")
    try:
        return str(body["data"][0]["id"])
    except (KeyError, IndexError, TypeError) as err:
        raise BadAnswerError(f"{client.base_url}/v1/models: no data[0].id in {str(body)[:200]}") from err


def _choices(body: dict, n: int, url: str) -> list[dict]:
    choices = body.get("choices")
    if not isinstance(choices, list) or len(choices) != n:
        found = len(choices) if isinstance(choices, list) else type(choices).__name__
        raise BadAnswerError(f"{url}/v1/completions: asked for {n} choices, got {found}")
    return sorted(choices, key=lambda c: c.get("index", 0) if isinstance(c.get("index"), int) else 0)


def _completion(choice: dict, spent: int, with_logprobs: bool, keep_stop: bool) -> Completion:
    text = choice.get("text")
    if not isinstance(text, str):
        raise BadAnswerError(f"a choice's text is {str(text)[:40]}, not a string")
    stop = choice.get("stop_reason")
    if (
        keep_stop
        and choice.get("finish_reason") == "stop"
        and isinstance(stop, str)
        and not text.endswith(stop)
    ):
        text += stop  # a server that matched the stop string but left it out
    lp = choice.get("logprobs") if with_logprobs else None
    if not isinstance(lp, dict):
        return Completion(text, spent)
    try:
        tokens = tuple(
            (t, float(v), {k: float(x) for k, x in (top or {}).items()})
            for t, v, top in zip(lp["tokens"], lp["token_logprobs"], lp["top_logprobs"], strict=True)
        )
    except (KeyError, TypeError, ValueError) as err:
        raise BadAnswerError(f"logprobs not as OpenAI's completions API gives them: {str(lp)[:120]}") from err
    return Completion(text, len(tokens), tokens)


def _echoed(choice: dict, prompt_chars: int, url: str) -> list[float | None]:
    """The logprobs of an echoed prompt's tokens (those starting inside it; the generated one left out)."""
    lp = choice.get("logprobs")
    try:
        pairs = zip(lp["token_logprobs"], lp["text_offset"], strict=True)  # type: ignore[index]
        return [None if v is None else float(v) for v, at in pairs if at < prompt_chars]
    except (KeyError, TypeError, ValueError) as err:
        raise BadAnswerError(
            f"{url}/v1/completions: no echoed prompt logprobs (echo with logprobs): {str(lp)[:120]}"
        ) from err

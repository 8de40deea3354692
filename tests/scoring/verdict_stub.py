"""An OpenAI-compatible stub of a generative verifier on loopback: chains it writes and, for an echoed
prompt, each token's logprob, all known, so a scorer's P(yes) can be checked to the last digit.

Tokens are whitespace-led words (``\\s*\\S+`` or a run of spaces), so ``"correct? " + "yes"`` reads
``" yes"``, as a BPE tokenizer heals it. Every echoed token has logprob :data:`OTHER` except the choices:
``" yes"`` and ``" no"`` get ``log p`` and ``log (1 - p)``, ``p = yes(prompt)``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from fastapi import FastAPI, Request

OTHER = -1.0
CHAIN = "\nStep 1: looks fine. \\boxed{correct}\n"
"""What the stub writes as a chain (stopped, as a server stops, before the forced question)."""
_TOKEN = re.compile(r"\s*\S+|\s+")


@dataclass
class VerdictStub:
    model: str
    """What ``/v1/models`` names (the tokenizer whose chat template renders the prompt)."""
    yes: Callable[[str], float] = lambda prompt: 0.8
    """P(" yes") after a prompt ending in the forced question."""
    answer: Callable[[dict], list[dict]] | None = None
    """The choices (``text``, ``logprobs``, ``finish_reason``) for a generation request's payload;
    by default :data:`CHAIN`, ``n`` times, without logprobs."""
    payloads: list[dict] = field(default_factory=list)

    def echo(self, prompt: str) -> dict:
        tokens = _TOKEN.findall(prompt)
        offsets, at = [], 0
        for t in tokens:
            offsets.append(at)
            at += len(t)
        base = prompt.rsplit(" ", 1)[0] + " "  # the text before the last word
        p = self.yes(base)
        choice = {" yes": math.log(p), " no": math.log(1 - p)}
        logprobs = [None] + [choice.get(t, OTHER) if i == len(tokens) - 1 else OTHER
                             for i, t in enumerate(tokens) if i > 0]  # fmt: skip
        tokens.append("!")  # the one generated token (max_tokens 1), after the prompt
        return {"tokens": tokens, "token_logprobs": [*logprobs, -0.1], "text_offset": [*offsets, at],
                "top_logprobs": None}  # fmt: skip


def make_app(stub: VerdictStub) -> FastAPI:
    app = FastAPI()

    @app.get("/v1/models")
    async def models() -> dict:
        return {"object": "list", "data": [{"id": stub.model, "object": "model"}]}

    @app.post("/v1/completions")
    async def completions(request: Request) -> dict:
        body = await request.json()
        stub.payloads.append(body)
        if body.get("echo"):
            choices = [{"index": i, "text": p + "!", "logprobs": stub.echo(p), "finish_reason": "length"}
                       for i, p in enumerate(body["prompt"])]  # fmt: skip
        elif stub.answer is not None:
            choices = [{"index": i, **c} for i, c in enumerate(stub.answer(body))]
        else:
            choices = [{"index": i, "text": CHAIN, "finish_reason": "stop", "logprobs": None}
                       for i in range(body.get("n", 1))]  # fmt: skip
        return {"id": "stub", "object": "text_completion", "model": stub.model, "choices": choices,
                "usage": {"completion_tokens": 9 * len(choices)}}  # fmt: skip

    return app

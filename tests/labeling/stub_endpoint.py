"""An OpenAI-compatible stub of a vLLM server for labelling jobs: real HTTP on loopback, deterministic
answers in LaTeX, and the ways real servers misbehave (a refused prompt, cut rollouts, broken answers).

Each answer is a function of (prompt, seed, choice index) alone, so a job's labels do not depend on the
order requests arrive in: sharded and unsharded runs must agree byte for byte.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

CONTEXT_LENGTH_400 = {
    "object": "error",
    "message": "This model's maximum context length is 4096 tokens. However, you requested 4352 tokens "
    "(4096 in the messages, 256 in the completion). Please reduce the length of the messages or completion.",
    "type": "BadRequestError",
    "param": None,
    "code": 400,
}
"""vLLM's answer to a prompt plus max_tokens past the model's context length."""


@dataclass
class Stub:
    answers: dict[str, str]
    """Problem text -> reference answer (an integer): the stub answers it in LaTeX."""
    delay_s: float = 0.02
    refuse: set[str] = field(default_factory=set)
    """Prompts answered with vLLM's context-length 400."""
    truncated_share: float = 0.25
    """Share of choices cut at max_tokens (finish_reason "length", no answer)."""
    right_share: float = 0.6
    broken: str | None = None
    """null_text | few_choices | huge | huge_stream | html: every answer broken that way."""
    oversize: set[str] = field(default_factory=set)
    """Prompts answered rightly in shape, each choice's text padded to 1 MiB: more than n choices of
    max_tokens tokens can hold."""
    rate_per_s: int | None = None
    """Requests answered per second at most; past it, 429 with ``Retry-After: 1``, as a rate-limited
    gateway answers."""
    answered_at: list[float] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def choice(self, prompt: str, seed: int, index: int) -> tuple[str, str]:
        """(text, finish_reason) of one choice."""
        digest = hashlib.sha256(f"{prompt}\x00{seed}\x00{index}".encode()).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        gold = next((a for text, a in self.answers.items() if prompt.startswith(text)), None)
        if gold is None:
            return "I do not know this problem.\n", "stop"
        if u < self.truncated_share:
            return "Let us expand every term of the expression one by one, carefully, and then", "length"
        value = int(gold) * 2 + (
            0 if u < self.truncated_share + self.right_share * (1 - self.truncated_share) else 2
        )
        return f"Simplify the expression.\nThe answer is \\boxed{{\\frac{{{value}}}{{2}}}}.\n", "stop"


def make_app(stub: Stub) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/completions")
    async def completions(request: Request) -> Response:
        body = await request.json()
        prompt, n, seed = body["prompt"], int(body.get("n", 1)), int(body.get("seed", 0))
        with stub.lock:
            stub.prompts.append(prompt)
            stub.bodies.append(body)
            if stub.rate_per_s is not None:
                now = time.monotonic()
                if sum(1 for t in stub.answered_at if t > now - 1) >= stub.rate_per_s:
                    return JSONResponse({"error": "rate limited"}, 429, headers={"Retry-After": "1"})
                stub.answered_at.append(now)
        await asyncio.sleep(stub.delay_s)
        if prompt in stub.refuse:
            return JSONResponse(CONTEXT_LENGTH_400, status_code=400)
        if stub.broken == "html":
            return Response("<html><body>502 Bad Gateway</body></html>", media_type="text/html")
        if stub.broken == "huge_stream":  # chunked: no content-length to refuse it by

            async def chunks():
                yield b'{"choices": [{"text": "'
                for _ in range(48):
                    yield b"x" * 2**16

            return StreamingResponse(chunks(), media_type="application/json")
        if stub.broken == "huge":
            return Response(
                b'{"choices": [{"text": "' + b"x" * (3 * 2**20) + b'"}]}', media_type="application/json"
            )
        choices = []
        for i in range(n - 1 if stub.broken == "few_choices" else n):
            text, reason = stub.choice(prompt, seed, i)
            if prompt in stub.oversize:
                text += " " * 2**20
            choices.append(
                {"index": i, "text": None if stub.broken == "null_text" else text, "finish_reason": reason}
            )
        return JSONResponse({"choices": choices, "usage": {"completion_tokens": 12 * n}})

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        body = await request.json()
        with stub.lock:
            stub.bodies.append(body)
        n = int(body.get("n", 1))
        text, reason = "The answer is 4.\n", "stop"
        return JSONResponse(
            {
                "choices": [
                    {"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": reason}
                    for i in range(n)
                ]
            }
        )

    return app

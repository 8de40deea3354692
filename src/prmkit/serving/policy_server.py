"""An OpenAI-compatible server in front of any prmkit policy and judge (``prmkit serve-policy``).

It speaks the subset of the protocol vLLM and SGLang serve that prmkit's endpoint backends use:

- ``POST /v1/completions``: ``prompt`` (a string or a list), ``n``, ``seed``, ``stop``. The prompt is
  read back into (problem, prefix) with the same :class:`~prmkit.core.steps.StepFormat` the client
  writes it with, so the policy must know the problem: the server is started with the problems it
  serves. A ``stop`` that contains the step separator asks for one step (stop string not included).
  ``temperature`` and ``max_tokens`` are accepted but the served policy keeps its own settings.
- ``POST /v1/chat/completions``: the last user message is a ProcessBench critic prompt; the judge reads
  it and answers like a critic, ending in ``\\boxed{first error index}``.
- ``GET /v1/models`` and ``GET /health``.

Errors come back in OpenAI's shape (``{"error": {"message", "type"}}``) with status 400.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from prmkit.core.http_limits import serve_bounded
from prmkit.core.model import Continuation, Problem
from prmkit.core.protocols import Judge, JudgeVerdict, Policy
from prmkit.core.steps import StepFormat
from prmkit.policies.critic import read_critic_prompt
from prmkit.worlds.registry import DEFAULT_WORLD, WORLDS

MAX_N = 256
"""Most continuations one prompt may ask for (``n``): each costs the policy a rollout."""
MAX_PROMPTS = 1024
"""Most prompts in one ``/v1/completions`` request; with ``n``, what one request may cost is bounded."""
Seed = Field(default=None, ge=-(2**63), le=2**63 - 1)
"""vLLM's bound on ``seed``: a 64-bit integer."""


class CompletionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # vLLM extras (top_k, logprobs...) are accepted and ignored
    model: str | None = None
    prompt: str | list[str] = Field(min_length=1, max_length=MAX_PROMPTS)
    n: int = Field(default=1, ge=1, le=MAX_N)
    max_tokens: int | None = None
    temperature: float | None = None
    seed: int | None = Seed
    stop: str | list[str] | None = None


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str | None = None
    messages: list[dict[str, Any]] = Field(min_length=1)
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = Seed


class BadRequest(ValueError):
    """A request the server cannot serve; answered with HTTP 400 in OpenAI's error shape."""


def critic_answer(verdict: JudgeVerdict, n_steps: int) -> str:
    """A short critique in the ProcessBench critic style, ending in the boxed first-error index."""
    lines = []
    for i in range(n_steps):
        if i == verdict.first_error:
            lines.append(f"Paragraph {i} contains an error.")
            break
        lines.append(f"Paragraph {i} is correct.")
    lines.append(
        f"The earliest error is in paragraph {verdict.first_error}."
        if verdict.first_error >= 0
        else "No paragraph has an error."
    )
    return "\n".join(lines) + f"\n\n\\boxed{{{verdict.first_error}}}"


class PolicyService:
    """The protocol logic, free of FastAPI so it can be tested and reused directly."""

    def __init__(
        self,
        policy: Policy,
        problems: Sequence[Problem],
        *,
        judge: Judge | None = None,
        step_format: StepFormat | None = None,
        model_name: str | None = None,
    ):
        self.policy, self.judge = policy, judge
        self.format = step_format or StepFormat()
        self.model_name = model_name or policy.name
        self.problems = {p.text: p for p in problems}

    def _text(self, cont: Continuation, one_step: bool) -> tuple[str, str]:
        sep = self.format.step_separator
        if one_step:
            if not cont.steps:
                return "", "stop"
            return cont.steps[0].text, "stop"
        text = sep.join(s.text for s in cont.steps)
        return text, "stop" if cont.finished else "length"

    def completions(self, req: CompletionRequest) -> dict[str, Any]:
        prompts = [req.prompt] if isinstance(req.prompt, str) else req.prompt
        stops = [req.stop] if isinstance(req.stop, str) else (req.stop or [])
        one_step = self.format.step_separator in stops
        choices, n_tokens = [], 0
        for p_idx, prompt in enumerate(prompts):
            found = self.format.split_prompt(prompt, self.problems)
            if found is None:
                raise BadRequest(
                    f"prompt {p_idx}: does not start with a problem this server knows ({len(self.problems)} loaded); start it with --problems"
                )
            problem, prefix = found
            conts = self.policy.continue_from(
                problem, prefix, req.n, seed=req.seed, max_steps=1 if one_step else None
            )
            for j, cont in enumerate(conts):
                text, reason = self._text(cont, one_step)
                n_tokens += len(text.split())
                choices.append(
                    {"index": p_idx * req.n + j, "text": text, "logprobs": None, "finish_reason": reason}
                )
        return {
            "id": f"cmpl-{uuid.uuid4().hex[:16]}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": self.model_name,
            "choices": choices,
            "usage": {"prompt_tokens": 0, "completion_tokens": n_tokens, "total_tokens": n_tokens},
        }

    def chat(self, req: ChatRequest) -> dict[str, Any]:
        if self.judge is None:
            raise BadRequest("this server has no judge; start it with --judge")
        user = [m for m in req.messages if m.get("role") == "user"]
        content = user[-1].get("content") if user else None
        parsed = read_critic_prompt(content) if isinstance(content, str) else None
        if parsed is None:
            raise BadRequest(
                "the last user message is not a ProcessBench critic prompt ([Math Problem] ... <paragraph_i>)"
            )
        text, steps = parsed
        problem = self.problems.get(text)
        if problem is None:
            raise BadRequest(
                f"unknown problem {text[:60]!r}; start the server with the problems it judges (--problems)"
            )
        verdict = self.judge.judge(problem, steps)
        answer = critic_answer(verdict, len(steps))
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model_name,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}
            ],
            "usage": {
                "prompt_tokens": 0,
                "completion_tokens": len(answer.split()),
                "total_tokens": len(answer.split()),
            },
        }


def openai_error(status: int, message: str) -> dict[str, Any]:
    """An error body in OpenAI's shape (the module docstring's: the status is the HTTP status's)."""
    return {"error": {"message": message, "type": "invalid_request_error"}}


def create_app(service: PolicyService, *, max_body_bytes: int = 4_000_000, max_json_depth: int = 32):
    """The FastAPI app serving ``service``; bodies are read as the reward server reads them (at most
    ``max_body_bytes``, strict JSON no deeper than ``max_json_depth``: ``serving.guard``)."""
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

    from prmkit.serving.guard import StrictJSON

    app = FastAPI(title="prmkit policy server", version="1")
    app.add_middleware(
        StrictJSON, max_body_bytes=max_body_bytes, max_json_depth=max_json_depth, shape=openai_error
    )

    @app.exception_handler(BadRequest)
    async def _bad(_: Request, err: BadRequest) -> JSONResponse:
        return JSONResponse(
            status_code=400, content={"error": {"message": str(err), "type": "invalid_request_error"}}
        )

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": service.model_name, "object": "model", "owned_by": "prmkit"}],
        }

    @app.post("/v1/completions")
    def completions(req: CompletionRequest) -> dict[str, Any]:
        return service.completions(req)

    @app.post("/v1/chat/completions")
    def chat(req: ChatRequest) -> dict[str, Any]:
        return service.chat(req)

    return app


class ServePolicyConfig(BaseModel):
    """``prmkit serve-policy``: an OpenAI-compatible server in front of a policy and a judge."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    policy: str = DEFAULT_WORLD
    """Policy backend answering /v1/completions (a name registered in prmkit.policies.POLICIES)."""
    judge: str | None = DEFAULT_WORLD
    """Judge backend answering /v1/chat/completions in the critic format; none disables the route."""
    problems: list[Path] = Field(default_factory=list)
    """Problem or trace files (JSONL) whose problems the server can continue and judge."""
    world_problems: int = 0
    """Also serve this many generated problems of the policy's world (with --world-seed and --world-split;
    the policy must be an embedded world's)."""
    world_seed: int = 0
    """Seed of the generated world problems."""
    world_split: str = "train"
    """Split of the generated world problems: train, test or heldout."""
    step_separator: str = "\n"
    """Text between steps in prompts and completions (must match the clients' StepFormat)."""
    prompt_template: str = "{problem}\n"
    """Text before the first step of a prompt; {problem} is the problem text (must match the clients)."""
    model_name: str | None = None
    """Model id reported by /v1/models and in responses; default the policy's name."""
    host: str = "127.0.0.1"
    """Interface to listen on (loopback by default: the server has no authentication)."""
    port: int = 8000
    """TCP port to listen on."""
    max_body_bytes: int = Field(default=4_000_000, ge=1)
    """Largest request body accepted (413 beyond)."""
    max_json_depth: int = Field(default=32, ge=4, le=500)
    """Deepest nesting of lists and objects in a request body (422 beyond); the API's own bodies need 4."""
    body_timeout_s: float = Field(default=10.0, gt=0)
    """Seconds a request body may take to start after its headers; it must then keep arriving at
    ``min_body_rate`` bytes per second on average, else the answer is 408 and the connection is closed."""
    min_body_rate: int = Field(default=65_536, ge=1)
    """Slowest average rate, in bytes per second, a request body may arrive at after ``body_timeout_s``."""


def build_service(config: ServePolicyConfig) -> PolicyService:
    """The service a config describes: its policy, judge and problems loaded."""
    from prmkit.formats.inputs import read_problems
    from prmkit.policies import load_judge, load_policy

    problems: list[Problem] = [p for path in config.problems for p in read_problems(path)]
    if config.world_problems:
        from prmkit.worlds.registry import world

        generate = world(config.policy if config.policy in WORLDS else DEFAULT_WORLD).generate_problems
        problems += generate(config.world_problems, seed=config.world_seed, split=config.world_split)
    if not problems:
        raise ValueError("serve-policy: no problems to serve; pass --problems FILE or --world-problems N")
    judge = None if config.judge in (None, "", "none") else load_judge(config.judge)
    sep, head = (
        v.replace("\\n", "\n").replace("\\t", "\t") for v in (config.step_separator, config.prompt_template)
    )
    return PolicyService(
        load_policy(config.policy),
        problems,
        judge=judge,
        step_format=StepFormat(step_separator=sep, prompt_template=head),
        model_name=config.model_name,
    )


def serve_policy(config: ServePolicyConfig) -> None:
    """``prmkit serve-policy``: build the service and serve it with uvicorn until interrupted."""
    service = build_service(config)
    # the reward server's default connection bounds (keep-alive 5 s, request head 10 s, 64 per client)
    app = create_app(service, max_body_bytes=config.max_body_bytes, max_json_depth=config.max_json_depth)
    serve_bounded(app, **server_options(config), log_level="warning")


def server_options(config: ServePolicyConfig) -> dict[str, Any]:
    """What ``prmkit serve-policy`` gives :func:`~prmkit.core.http_limits.bounded_config` (tests serve
    through it too): the address and the body deadline."""
    return {
        "host": config.host,
        "port": config.port,
        "body_timeout_s": config.body_timeout_s,
        "min_body_rate": config.min_body_rate,
    }

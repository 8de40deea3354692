"""Rollouts and judgements from any OpenAI-compatible server: vLLM, SGLang, or ``prmkit serve-policy``.

- :class:`EndpointPolicy` calls ``/v1/completions`` with ``n``, ``stop``, ``max_tokens``,
  ``temperature`` and ``seed``; a next-step request (``max_steps=1``) stops at the step separator.
- :class:`EndpointJudge` calls ``/v1/chat/completions`` with a ProcessBench-style critic prompt and
  keeps the raw answer in the verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

from prmkit.core.model import Continuation, Problem, Step
from prmkit.core.protocols import JudgeVerdict
from prmkit.policies.critic import CRITIC_TEMPLATE, critic_prompt, parse_first_error, verdict_from_first_error
from prmkit.policies.http import EndpointError, OpenAIClient
from prmkit.policies.text import StepFormat


class EndpointPolicy:
    """A :class:`~prmkit.core.protocols.Policy` behind ``POST /v1/completions``."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        step_format: StepFormat | None = None,
        temperature: float = 1.0,
        top_p: float = 1.0,
        max_tokens: int = 512,
        concurrency: int = 8,
        retries: int = 3,
        timeout: float = 120.0,
    ):
        self.model = model
        self.name = f"endpoint:{model}"
        self.format = step_format or StepFormat()
        self.temperature, self.top_p, self.max_tokens = temperature, top_p, max_tokens
        self.client = OpenAIClient(url, concurrency=concurrency, retries=retries, timeout=timeout)

    def stop(self) -> None:
        """Send nothing more (a failing job calls it so the requests still queued end at once)."""
        self.client.stop()

    def continue_from(
        self,
        problem: Problem,
        prefix: Sequence[Step],
        n: int = 1,
        *,
        seed: int | None = None,
        max_steps: int | None = None,
    ) -> list[Continuation]:
        payload: dict = {
            "model": self.model,
            "prompt": self.format.prompt(problem, prefix),
            "n": n,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
        }
        if seed is not None:
            payload["seed"] = seed
        if max_steps == 1:
            payload["stop"] = [self.format.step_separator]
        body = self.client.post("/v1/completions", payload)
        choices = sorted(body.get("choices") or [], key=lambda c: c.get("index", 0))
        if len(choices) != n:
            raise EndpointError(
                f"{self.client.base_url}/v1/completions: asked for n={n} choices, got {len(choices)}"
            )
        usage = body.get("usage") or {}
        per_choice = usage.get("completion_tokens", 0) // n if usage.get("completion_tokens") else None
        return [
            self.format.parse(c.get("text", ""), max_steps=max_steps, num_tokens=per_choice) for c in choices
        ]


class EndpointJudge:
    """A :class:`~prmkit.core.protocols.Judge` behind ``POST /v1/chat/completions``.

    The prompt is :data:`~prmkit.policies.critic.CRITIC_TEMPLATE` unless replaced; the answer is read
    from its last ``\\boxed{int}``. Unparseable answers give a verdict with no ratings and
    ``extra["status"] == "unparseable"`` (the labelling job counts them apart).
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        template: str = CRITIC_TEMPLATE,
        temperature: float = 0.0,
        max_tokens: int = 2048,
        concurrency: int = 8,
        retries: int = 3,
        timeout: float = 300.0,
        seed: int | None = 0,
    ):
        critic_prompt("", [], template)  # fail now, not mid-job, on a template without its placeholders
        self.model = model
        self.name = f"endpoint:{model}"
        self.template = template
        self.temperature, self.max_tokens, self.seed = temperature, max_tokens, seed
        self.client = OpenAIClient(url, concurrency=concurrency, retries=retries, timeout=timeout)

    def stop(self) -> None:
        """Send nothing more (a failing job calls it so the requests still queued end at once)."""
        self.client.stop()

    def judge(self, problem: Problem, steps: Sequence[Step]) -> JudgeVerdict:
        payload: dict = {
            "model": self.model,
            "messages": [{"role": "user", "content": critic_prompt(problem.text, steps, self.template)}],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.seed is not None:
            payload["seed"] = self.seed
        body = self.client.post("/v1/chat/completions", payload)
        try:
            raw = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as err:
            raise EndpointError(
                f"{self.client.base_url}/v1/chat/completions: no choices[0].message.content in {str(body)[:200]}"
            ) from err
        return verdict_from_first_error(parse_first_error(raw), len(steps), raw)

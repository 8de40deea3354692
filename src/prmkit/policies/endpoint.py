"""Rollouts and judgements from any OpenAI-compatible server: vLLM, SGLang, or ``prmkit serve-policy``.

- :class:`EndpointPolicy` calls ``/v1/completions`` with ``n``, ``stop``, ``max_tokens``,
  ``temperature`` and ``seed``; a next-step request (``max_steps=1``) stops at the step separator. With
  ``chat=True`` it calls ``/v1/chat/completions`` instead, for instruct models: the problem is the user's
  message and the steps so far open the assistant's, which the model continues (vLLM's
  ``continue_final_message``, so the chat template is the model's own).
- :class:`EndpointJudge` calls ``/v1/chat/completions`` with a ProcessBench-style critic prompt, or
  ThinkPRM's, and keeps the raw answer in the verdict; in GenPRM's format (``genprm.py``) it sends a
  chain of requests per step on a prefilled assistant turn.

An answer that is not one (a choice whose text is null, fewer choices than asked) is a
:class:`~prmkit.policies.http.BadAnswerError` naming what was wrong: the job records it against the item.
A choice cut at ``max_tokens`` (``finish_reason: length``) before an answer is ``truncated``. An answer
is read only as far as what was asked can fill (:func:`~prmkit.policies.http.answer_bound`): one larger
fails its item without being held in memory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Literal

from prmkit.core.model import Continuation, Problem, Step
from prmkit.core.protocols import JudgeVerdict
from prmkit.core.steps import StepFormat
from prmkit.policies.critic import (
    CRITIC_TEMPLATE,
    THINKPRM_TEMPLATE,
    critic_prompt,
    parse_first_error,
    parse_step_verdicts,
    thinkprm_prompt,
    verdict_from_first_error,
    verdict_from_steps,
)
from prmkit.policies.genprm import SAMPLING, TOP_LOGPROBS, Completion, judge_genprm, requests_per_trace
from prmkit.policies.http import BadAnswerError, EndpointError, OpenAIClient, answer_bound

GENPRM_MAX_REQUESTS = 512
"""The most answers a GenPRM-format judge may ask for one trace, unless raised (``--judge-max-requests``)."""


class OverBudgetError(EndpointError):
    """A trace that would cost more requests than the judge may send: refused before any is sent."""


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
        chat: bool = False,
    ):
        self.model = model
        self.name = f"endpoint:{model}"
        self.format = step_format or StepFormat()
        self.temperature, self.top_p, self.max_tokens = temperature, top_p, max_tokens
        self.chat = chat
        self.client = OpenAIClient(url, concurrency=concurrency, retries=retries, timeout=timeout)

    def settings(self) -> dict[str, Any]:
        """How it samples, as traces and labels record it (``metadata["sampling"]``, provenance): the
        served model, the sampling parameters, the prompt layout (not the URL: where a server ran is no
        setting of the samples)."""
        return {
            "model": self.model, "temperature": self.temperature, "top_p": self.top_p,
            "max_tokens": self.max_tokens, "chat": self.chat, "step_format": self.format.model_dump(),
        }  # fmt: skip

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
        payload: dict = {"model": self.model, **self.request(problem, prefix)}
        payload.update(n=n, max_tokens=self.max_tokens, temperature=self.temperature, top_p=self.top_p)
        if seed is not None:
            payload["seed"] = seed
        if max_steps == 1:
            payload["stop"] = [self.format.step_separator]
        route = "/v1/chat/completions" if self.chat else "/v1/completions"
        body = self.client.post(route, payload, answer_bound(n, self.max_tokens))
        texts = _choice_texts(body, n, self.chat, self.client.base_url + route)
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        spent = usage.get("completion_tokens")
        per_choice = spent // n if isinstance(spent, int) and spent > 0 else None
        out = []
        for text, reason in texts:
            cont = self.format.parse(text, max_steps=max_steps, num_tokens=per_choice)
            if reason == "length" and not cont.finished:
                cont = cont.model_copy(update={"truncated": True})
            out.append(cont)
        return out

    def request(self, problem: Problem, prefix: Sequence[Step]) -> dict:
        """What a request says besides its sampling options: a prompt, or (``chat``) the messages, with
        ``continue_final_message`` and ``add_generation_prompt`` off as vLLM documents prefilling
        (:meth:`~prmkit.core.steps.StepFormat.messages`)."""
        if not self.chat:
            return {"prompt": self.format.prompt(problem, prefix)}
        messages, cont = self.format.messages(problem, prefix)
        if not cont:
            return {"messages": messages, "add_generation_prompt": True}
        return {"messages": messages, "add_generation_prompt": False, "continue_final_message": True}


def _choice_texts(body: dict, n: int, chat: bool, url: str) -> list[tuple[str, str | None]]:
    """(text, finish_reason) of each of the ``n`` choices, in index order; an answer of another shape is
    a :class:`BadAnswerError` that says what was wrong (it used to be a traceback deep in the parser)."""
    choices = body.get("choices")
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        raise BadAnswerError(f"{url}: expected a list of choices, found {str(choices)[:120]}")
    if len(choices) != n:
        hint = (
            " (does the server take `n`, several choices in one request? vLLM, SGLang and prmkit "
            "serve-policy do)"
            if len(choices) == 1
            else ""
        )
        raise BadAnswerError(f"{url}: asked for n={n} choices, got {len(choices)}{hint}")
    out = []
    for c in sorted(choices, key=lambda c: c.get("index", 0) if isinstance(c.get("index"), int) else 0):
        message = c.get("message")
        text = (message.get("content") if isinstance(message, dict) else None) if chat else c.get("text")
        if not isinstance(text, str):
            field = "message.content" if chat else "text"
            raise BadAnswerError(f"{url}: choice {c.get('index')} has {field} {str(text)[:40]}, not a string")
        reason = c.get("finish_reason")
        out.append((text, reason if isinstance(reason, str) else None))
    return out


class EndpointJudge:
    """A :class:`~prmkit.core.protocols.Judge` behind ``POST /v1/chat/completions``.

    The prompt is :data:`~prmkit.policies.critic.CRITIC_TEMPLATE` unless replaced; the answer is read
    from its last ``\\boxed{int}``. Unparseable answers give a verdict with no ratings and
    ``extra["status"] == "unparseable"`` (the labelling job counts them apart). ``verdict_format``
    ``genprm`` asks as :mod:`prmkit.policies.genprm` says, ``k`` samples per step, and refuses a trace
    that could cost over ``max_requests`` answers before sending anything.
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        template: str | None = None,
        verdict_format: Literal["processbench", "thinkprm", "genprm"] = "processbench",
        temperature: float = 0.0,
        max_tokens: int = 2048,
        concurrency: int = 8,
        retries: int = 3,
        timeout: float = 300.0,
        seed: int | None = 0,
        k: int = 1,
        max_requests: int = GENPRM_MAX_REQUESTS,
    ):
        self.format = verdict_format
        if verdict_format == "genprm" and template is not None:
            raise ValueError(
                "GenPRM is asked in its own conversation layout (prmkit.policies.genprm), not a template"
            )
        if verdict_format != "genprm" and (k, max_requests) != (1, GENPRM_MAX_REQUESTS):
            raise ValueError(
                f"k and max_requests are used by verdict_format 'genprm' only, not {verdict_format!r}"
            )
        self.k, self.max_requests = k, max_requests
        default = THINKPRM_TEMPLATE if verdict_format == "thinkprm" else CRITIC_TEMPLATE
        self.template = template if template is not None else default
        self._prompt("", [])  # fail now, not mid-job, on a template without its placeholders
        self.model = model
        self.name = f"endpoint:{model}"
        self.temperature, self.max_tokens, self.seed = temperature, max_tokens, seed
        self.client = OpenAIClient(url, concurrency=concurrency, retries=retries, timeout=timeout)

    def settings(self) -> dict[str, Any]:
        """How it judges, as its labels' provenance records it: the served model, the sampling parameters,
        the answer format and the prompt (the format's own template, or a digest of the one that replaced
        it); for GenPRM also its fixed sampling, ``k`` and the request bound."""
        named = {CRITIC_TEMPLATE: "processbench-critic", THINKPRM_TEMPLATE: "thinkprm"}
        prompt = (
            named.get(self.template) or "sha256:" + hashlib.sha256(self.template.encode()).hexdigest()[:16]
        )
        settings = {
            "model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens,
            "seed": self.seed, "format": self.format, "template": prompt,
        }  # fmt: skip
        if self.format == "genprm":  # added only here: the other formats' labels keep their identity
            settings.update(template="genprm", k=self.k, top_p=SAMPLING["top_p"], top_k=SAMPLING["top_k"])
            settings.update(top_logprobs=TOP_LOGPROBS, max_requests=self.max_requests)
        return settings

    def _prompt(self, text: str, steps: Sequence[Step]) -> str:
        if self.format == "thinkprm":
            return thinkprm_prompt(text, steps, self.template)
        return critic_prompt(text, steps, self.template)

    def stop(self) -> None:
        """Send nothing more (a failing job calls it so the requests still queued end at once)."""
        self.client.stop()

    def judge(self, problem: Problem, steps: Sequence[Step]) -> JudgeVerdict:
        if self.format == "genprm":
            need = requests_per_trace(len(steps), self.k)
            if need > self.max_requests:
                raise OverBudgetError(
                    f"judge {self.name}: {len(steps)} steps x k={self.k} could cost {need} GenPRM requests, "
                    f"over --judge-max-requests {self.max_requests}; nothing was sent. Raise "
                    "--judge-max-requests (or lower --judge-k) to judge it."
                )
            return judge_genprm(self._complete, problem.text, steps, self.k, self.max_tokens)
        payload: dict = {
            "model": self.model,
            "messages": [{"role": "user", "content": self._prompt(problem.text, steps)}],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.seed is not None:
            payload["seed"] = self.seed
        body = self.client.post("/v1/chat/completions", payload, answer_bound(1, self.max_tokens))
        try:
            raw = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as err:
            raise BadAnswerError(
                f"{self.client.base_url}/v1/chat/completions: no choices[0].message.content in {str(body)[:200]}"
            ) from err
        if not isinstance(raw, str):
            raise BadAnswerError(
                f"{self.client.base_url}/v1/chat/completions: message content {str(raw)[:40]}"
            )
        if self.format == "thinkprm":
            return verdict_from_steps(parse_step_verdicts(raw, len(steps)), raw)
        return verdict_from_first_error(parse_first_error(raw), len(steps), raw)

    def _complete(self, messages: list[dict], n: int, stop: list[str], max_tokens: int) -> list[Completion]:
        """``n`` continuations of the assistant turn ``messages`` ends with (vLLM's
        ``continue_final_message``), sampled as GenPRM samples, with each token's top logprobs."""
        payload: dict = {
            "model": self.model, "messages": messages, "n": n, "max_tokens": max_tokens,
            "add_generation_prompt": False, "continue_final_message": True,
            "temperature": self.temperature, "top_p": SAMPLING["top_p"], "top_k": SAMPLING["top_k"],
            "stop": stop, "include_stop_str_in_output": True, "logprobs": True, "top_logprobs": TOP_LOGPROBS,
        }  # fmt: skip
        if self.seed is not None:
            payload["seed"] = self.seed
        url = self.client.base_url + "/v1/chat/completions"
        body = self.client.post("/v1/chat/completions", payload, answer_bound(n, max_tokens, TOP_LOGPROBS))
        _choice_texts(body, n, True, url)  # the shape checked, as for a policy
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        spent = usage.get("completion_tokens")
        per_choice = spent if isinstance(spent, int) and n == 1 else max_tokens  # bounds it from above
        choices = sorted(
            body["choices"], key=lambda c: c.get("index", 0) if isinstance(c.get("index"), int) else 0
        )
        return [_completion(c, per_choice, url) for c in choices]


def _completion(choice: dict, spent: int, url: str) -> Completion:
    """One chat choice as a :class:`~prmkit.policies.genprm.Completion`: a stop string the server matched
    but left out is put back (GenPRM asks for it in the text); the tokens it cost are its logprobs' count
    where it sent them, else ``spent``."""
    text = choice["message"]["content"]
    stop = choice.get("stop_reason")
    if choice.get("finish_reason") == "stop" and isinstance(stop, str) and not text.endswith(stop):
        text += stop
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if content is None:
        return Completion(text, spent)
    try:
        tokens = tuple(
            (
                t["token"],
                float(t["logprob"]),
                {e["token"]: float(e["logprob"]) for e in t.get("top_logprobs") or []},
            )
            for t in content
        )
    except (KeyError, TypeError, ValueError) as err:
        raise BadAnswerError(
            f"{url}: logprobs.content not as OpenAI's chat API gives it: {str(content)[:120]}"
        ) from err
    return Completion(text, len(tokens), tokens)

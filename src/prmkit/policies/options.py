"""The typed options every labelling command uses to name and build its policy or judge.

Each field is documented once, here; the CLI's ``--help`` is generated from these docstrings. A field
that the chosen backend cannot use is an error, not silently ignored.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from prmkit.core.config import Config
from prmkit.core.protocols import Judge, Policy
from prmkit.core.steps import DEFAULT_ANSWER_PATTERN, StepFormat
from prmkit.core.yamlconf import validate_at
from prmkit.policies import load_judge, load_policy
from prmkit.policies.genprm import SAMPLING as GENPRM_SAMPLING
from prmkit.worlds.registry import DEFAULT_WORLD, WORLDS, teacher_world, world

ENDPOINT_CONCURRENCY = 64
LOCAL_CONCURRENCY = 4


_GENPRM_ONLY = ("judge_k", "judge_max_requests")


def _changed(options: BaseModel, *names: str) -> bool:
    """Whether any of ``names`` holds other than its default (a recipe passes every field, set or not)."""
    fields = type(options).model_fields
    return any(getattr(options, n) != fields[n].default for n in names)


class PolicyOptions(Config):
    """Which policy draws the rollouts."""

    policy: str = DEFAULT_WORLD
    """Rollout backend: an embedded world's simulated policy (arithmetic, agent), hf (a local causal-LM
    folder) or endpoint (OpenAI-compatible)."""
    model: str | None = None
    """hf: the model folder; endpoint: the model name the server serves."""
    temperature: float = 1.0
    """Sampling temperature (a world's policy: scales its error rates; 1 is its default)."""
    max_new_tokens: int = 256
    """Longest continuation, in tokens, for hf and endpoint policies."""
    step_separator: str = "\n"
    """Text between steps in the prompt and in the policy's output (hf and endpoint)."""
    prompt_template: str = "{problem}\n"
    """Text before the first step of an hf or endpoint prompt; {problem} is the problem text."""
    answer_pattern: str = DEFAULT_ANSWER_PATTERN
    """Regex whose first group is the final answer in a step (a \\boxed{} wins) for hf and endpoint."""
    url: str | None = None
    """endpoint: base URL of the server, e.g. http://localhost:8000; several, comma-separated, are one
    pool (each request goes to the next in turn, and a retry to another)."""
    chat: bool = False
    """endpoint and hf: for an instruct (chat) model: the problem is the user's message and the steps so
    far open the assistant's, which the model continues under its own chat template (endpoint:
    /v1/chat/completions with continue_final_message, as vLLM documents prefilling)."""
    concurrency: int | None = Field(default=None, ge=1)
    """Rollout requests in flight at once; default 64 for an endpoint (a vLLM or SGLang server batches
    hundreds of sequences: 64 requests of 8 rollouts are 512), 4 otherwise."""
    request_timeout_s: float = Field(default=120.0, gt=0)
    """endpoint: seconds one request may take (connecting, or waiting for the answer) before it counts as
    failed. A silent server (it accepts and never answers) stops the job, its work kept, once requests
    time out twice in a row with no answer from any server for this long: within about 2 x this of its
    last answer (4 min by default), at any concurrency and whatever --retries is."""
    retries: int = Field(default=3, ge=0, le=20)
    """endpoint: tries after the first for a request that timed out, could not connect or got 408, 429
    or 5xx (a 4xx other than those is not retried: it will not heal). A 429 or 503 with Retry-After is
    waited out as the server asks and uses up no try, unless the wait would pass (retries + 1) x
    --request-timeout-s: then that request fails at once, saying so."""
    QUIET = ("policy_knobs",)  # added after recipes' label stages were keyed (core.config.Config)

    policy_knobs: dict[str, Any] = Field(default={})  # not a factory: QUIET compares with the default
    """An embedded world's simulated policy: fields of that world's policy config other than
    ``temperature`` (``prmkit NAME sample --help``; e.g. the code world's ``symptom_patch``, or
    ``{misconceptions: 0}`` for the arithmetic policy without its misconceptions), so rollouts come from
    the policy that wrote the traces when a recipe's ``problems.policy`` changes it, or from a different
    prover. Checked against that config when read; a field at its default is dropped (the same policy,
    one key). Recipes and ``--config`` files only: no flag."""

    @field_validator("policy")
    @classmethod
    def _current_name(cls, value: str) -> str:
        return WORLDS.canonical(value)  # a renamed world's old name reads as its new one

    @field_validator("step_separator", "prompt_template")
    @classmethod
    def _unescape(cls, value: str) -> str:
        # A shell passes "\n" as two characters; a separator is almost never a literal backslash.
        return value.replace("\\n", "\n").replace("\\t", "\t")

    @field_validator("answer_pattern")
    @classmethod
    def _one_group(cls, value: str) -> str:
        try:
            groups = re.compile(value).groups
        except re.error as err:
            raise ValueError(f"not a valid regex ({err})") from err
        if groups < 1:
            raise ValueError("expected a regex with a group capturing the answer, found none")
        return value

    @model_validator(mode="after")
    def _world_policy_fields(self) -> PolicyOptions:
        if not self.policy_knobs:
            return self
        if self.policy not in WORLDS:
            raise ValueError(f"policy_knobs are only used by an embedded world's policy, not {self.policy!r}")
        if "temperature" in self.policy_knobs:
            raise ValueError("policy_knobs.temperature: set temperature itself (it scales the world's rates)")
        config = world(self.policy).policy_config
        read = validate_at(config, self.policy_knobs, "policy_knobs")  # names, types and bounds, now
        default = config()
        self.policy_knobs = {
            k: getattr(read, k) for k in self.policy_knobs if getattr(read, k) != getattr(default, k)
        }
        return self

    @model_validator(mode="after")
    def _fits_backend(self) -> PolicyOptions:
        if self.policy == "endpoint" and (not self.url or not self.model):
            raise ValueError("policy 'endpoint' needs --url and --model")
        if self.policy == "hf" and not self.model:
            raise ValueError("policy 'hf' needs --model (a local model folder)")
        if self.policy != "endpoint" and self.url:
            raise ValueError(f"--url is only used by policy 'endpoint', not {self.policy!r}")
        if self.policy != "endpoint" and _changed(self, "request_timeout_s", "retries"):
            raise ValueError(
                f"--request-timeout-s / --retries are only used by policy 'endpoint', not {self.policy!r}"
            )
        if self.policy not in ("endpoint", "hf") and self.chat:
            raise ValueError(f"--chat is only used by policies 'endpoint' and 'hf', not {self.policy!r}")
        return self

    def in_flight(self) -> int:
        """Requests in flight at once: ``concurrency``, or its default for the backend."""
        return self.concurrency or (ENDPOINT_CONCURRENCY if self.policy == "endpoint" else LOCAL_CONCURRENCY)

    def build_policy(self) -> Policy:
        """The policy these options name."""
        fmt = StepFormat(
            step_separator=self.step_separator,
            prompt_template=self.prompt_template,
            answer_pattern=self.answer_pattern,
        )
        if self.policy == "endpoint":
            return load_policy(
                "endpoint",
                url=self.url,
                model=self.model,
                step_format=fmt,
                temperature=self.temperature,
                max_tokens=self.max_new_tokens,
                concurrency=self.in_flight(),
                timeout=self.request_timeout_s,
                retries=self.retries,
                chat=self.chat,
            )
        if self.policy == "hf":
            return load_policy(
                "hf",
                model=self.model,
                step_format=fmt,
                temperature=self.temperature,
                max_new_tokens=self.max_new_tokens,
                chat=self.chat,
            )
        if self.policy in WORLDS:  # an embedded world's simulated policy: its errors scale with temperature
            return load_policy(self.policy, temperature=self.temperature, **self.policy_knobs)
        return load_policy(self.policy)


class JudgeOptions(Config):
    """Which judge reads the traces."""

    judge: str = DEFAULT_WORLD
    """Judge backend: an embedded world's simulated, noisy judge (arithmetic, agent), its teacher that
    also writes a verification chain (arithmetic-teacher, ...), or endpoint (an OpenAI-compatible chat
    model)."""
    judge_model: str | None = None
    """endpoint: the model name the server serves."""
    judge_url: str | None = None
    """endpoint: base URL of the server, e.g. http://localhost:8000."""
    judge_template: Path | None = None
    """endpoint: a text file replacing the prompt; keeps {problem} and {tagged_response} (processbench)
    or {problem} and {solution} (thinkprm); genprm takes none (GenPRM is asked in its own layout)."""
    QUIET = ("judge_format", "judge_k", "judge_max_tokens", "judge_max_requests")
    # added after recipes' label stages were keyed (core.config.Config)

    judge_format: Literal["processbench", "thinkprm", "genprm"] = "processbench"
    """endpoint: how the judge is asked and read: processbench (the critic names the earliest wrong
    paragraph in \boxed{}), thinkprm (a verification chain with \boxed{correct} / \boxed{incorrect}
    after each step, as ThinkPRM's released verifiers write it) or genprm (GenPRM's released verifiers:
    one step per request chain, \boxed{Yes} / \boxed{No}, scored from the verdict's logprobs; the
    Python they write is never run)."""
    judge_temperature: float = 0.0
    """endpoint: sampling temperature of the judge (default 0; 0.6 for genprm, GenPRM's own)."""
    judge_k: int = Field(default=1, ge=1, le=64)
    """endpoint, genprm: verifications sampled per step, the step's score their mean (GenPRM's
    majority_num: Maj@8 is 8); above 1 needs a temperature above 0."""
    judge_max_tokens: int = Field(default=2048, ge=1, le=131072)
    """endpoint: the most tokens one judge request may write (genprm: one verification, all its
    requests together, as GenPRM's max_tokens)."""
    judge_max_requests: int = Field(default=512, ge=1)
    """endpoint, genprm: the most answers one trace may cost, steps x judge-k x 4 at worst (the analysis
    and up to 3 more requests); a trace over it is refused before anything is sent."""
    concurrency: int | None = Field(default=None, ge=1)
    """Judge requests in flight at once; default 64 for an endpoint, 4 otherwise."""
    judge_request_timeout_s: float = Field(default=300.0, gt=0)
    """endpoint: seconds one judge request may take before it counts as failed (a critic writes long
    answers); a silent server stops the job within about 2 x this of its last answer (10 min by
    default), as --request-timeout-s says."""
    judge_retries: int = Field(default=3, ge=0, le=20)
    """endpoint: tries after the first for a request that timed out, could not connect or got 408, 429
    or 5xx."""

    @field_validator("judge")
    @classmethod
    def _current_name(cls, value: str) -> str:
        return WORLDS.canonical(value)  # a renamed world's old name reads as its new one

    @model_validator(mode="before")
    @classmethod
    def _genprm_temperature(cls, data: Any) -> Any:
        """GenPRM samples at its own temperature unless told otherwise (the resolved config shows it)."""
        if (
            isinstance(data, dict)
            and data.get("judge_format") == "genprm"
            and "judge_temperature" not in data
        ):
            return {**data, "judge_temperature": GENPRM_SAMPLING["temperature"]}
        return data

    @model_validator(mode="after")
    def _fits_backend(self) -> JudgeOptions:
        if self.judge == "endpoint" and (not self.judge_url or not self.judge_model):
            raise ValueError("judge 'endpoint' needs --judge-url and --judge-model")
        endpoint_only = self.judge_url or self.judge_template
        changed = ("judge_request_timeout_s", "judge_retries", "judge_format", "judge_max_tokens")
        if self.judge != "endpoint" and (endpoint_only or _changed(self, *changed, *_GENPRM_ONLY)):
            raise ValueError(
                "--judge-url / --judge-template / --judge-format / --judge-request-timeout-s / --judge-retries "
                "/ --judge-max-tokens / --judge-k / --judge-max-requests are only used by judge 'endpoint', "
                f"not {self.judge!r}"
            )
        if self.judge_format != "genprm" and _changed(self, *_GENPRM_ONLY):
            raise ValueError(
                f"--judge-k / --judge-max-requests are only used by --judge-format genprm, not {self.judge_format!r}"
            )
        if self.judge_format == "genprm" and self.judge_template:
            raise ValueError("--judge-template: genprm is asked in GenPRM's own layout and takes no template")
        if self.judge_k > 1 and self.judge_temperature == 0:
            raise ValueError(
                f"--judge-k {self.judge_k} needs a --judge-temperature above 0, or every sample is the same"
            )
        return self

    def judge_in_flight(self) -> int:
        """Judge requests in flight at once: ``concurrency``, or its default for the backend."""
        return self.concurrency or (ENDPOINT_CONCURRENCY if self.judge == "endpoint" else LOCAL_CONCURRENCY)

    def build_judge(self, seed: int = 0) -> Judge:
        """The judge these options name; ``seed`` drives a sampled judge (world noise, endpoint sampling)."""
        if self.judge in WORLDS or teacher_world(self.judge):  # a world's judge or teacher: seeded noise
            return load_judge(self.judge, seed=seed)
        if self.judge != "endpoint":
            return load_judge(self.judge)
        kwargs: dict[str, Any] = {}
        if self.judge_template is not None:
            kwargs["template"] = self.judge_template.read_text(encoding="utf-8")
        if self.judge_format == "genprm":
            kwargs.update(k=self.judge_k, max_requests=self.judge_max_requests)
        return load_judge(
            "endpoint",
            url=self.judge_url,
            model=self.judge_model,
            temperature=self.judge_temperature,
            concurrency=self.judge_in_flight(),
            timeout=self.judge_request_timeout_s,
            retries=self.judge_retries,
            seed=seed,
            verdict_format=self.judge_format,
            max_tokens=self.judge_max_tokens,
            **kwargs,
        )

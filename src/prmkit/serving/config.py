"""The serving commands' options, in a module light enough for ``prmkit --help`` to import.

``ServerConfig`` is ``prmkit serve``'s (its ``gate`` section, :class:`GateOptions`, the ``--gate-*``
flags of ``/verify``); ``GateMeasureConfig`` is ``prmkit gate measure``'s. Each option is documented
once, in its docstring; the CLI's ``--help`` is generated from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from prmkit.core.http_limits import parse_networks
from prmkit.core.steps import StepSplit
from prmkit.modeling.loading import LoadOptions

GateAction = Literal["flag", "resample"]


class GateOptions(BaseModel):
    """The deployment gate behind ``POST /verify`` (flags ``--gate-*``; docs/serving.md). Without a
    threshold (here or in ``monitor``) the server has no gate and ``/verify`` answers 404."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    threshold: float | None = None
    """The gate's threshold: a trace whose aggregated step score is below it is doubtful. None (and no
    ``--gate-monitor``): no gate, ``/verify`` answers 404."""
    monitor: Path | None = None
    """A deployment-monitor JSON written by ``prmkit gate measure`` (the card's monitor role): its
    threshold, aggregation and action configure the gate, so what was measured is what is served. Give
    it or ``--gate-threshold``, not both; ``--gate-aggregation`` and ``--gate-action`` may not contradict it."""
    aggregation: str | None = None
    """How the gate turns step scores into one number (min, prod, last, mean, ...); default the
    monitor's, else ``min``."""
    action: GateAction | None = None
    """What ``/verify`` does with a doubtful trace: ``flag`` it (with its first doubtful step), or
    ``resample`` it from the steps before that step through ``--gate-policy-url``; default the
    monitor's, else ``flag``."""
    policy_url: str | None = None
    """OpenAI-compatible server (vLLM, SGLang, ``prmkit serve-policy``) that continues a doubtful trace;
    needed by ``--gate-action resample``."""
    policy_model: str | None = None
    """Model name sent to the policy endpoint; default the first one its ``/v1/models`` lists."""
    policy_chat: bool = False
    """Continue through ``/v1/chat/completions`` (the steps so far open the assistant's message, vLLM's
    ``continue_final_message``) instead of ``/v1/completions``."""
    policy_timeout_s: float = Field(default=30.0, gt=0)
    """Seconds one continuation may take, its wait for a policy slot and its one retry (on a connection
    error or 5xx) included; a policy endpoint that fails or is slower makes ``/verify`` answer 502."""
    max_resamples: int = Field(default=4, ge=1, le=32)
    """Most continuations asked for one doubtful trace; the first that passes the gate is returned, else
    the best one with decision ``flag``. Bounds a request's work at this many continuations and scorings,
    and its resampling time at ``max_resamples`` x ``policy_timeout_s`` (an overall deadline)."""
    policy_concurrency: int = Field(default=8, ge=1, le=256)
    """Most continuations waiting on the policy endpoint at once, over all ``/verify`` requests. They
    run on threads of their own, apart from tokenizing and scoring, so a slow or hung policy holds
    these and never delays ``/score`` or ``/pooling``; more wait their turn within their deadline."""

    @model_validator(mode="after")
    def _one_source(self) -> GateOptions:
        if self.monitor is not None and self.threshold is not None:
            raise ValueError(
                "give the gate's threshold once: --gate-threshold or the one --gate-monitor records"
            )
        if self.action == "resample" and not self.policy_url:
            raise ValueError("--gate-action resample continues through a policy: set --gate-policy-url")
        return self


class ServerConfig(BaseModel):
    """Options of ``prmkit serve`` (each documented once, here)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    host: str = "127.0.0.1"
    """Interface to listen on (0.0.0.0 to accept other machines; set an API key then)."""
    port: int = 8000
    """TCP port to listen on."""
    api_key: str | None = None
    """When set, scoring endpoints need the key: ``Authorization: Bearer KEY``, ``X-API-Key: KEY``, or
    HTTP Basic auth with KEY as the password, any user name (what a URL ``http://prmkit:KEY@host:port``
    makes ``requests`` and ``aiohttp`` send: OpenRLHF's only way to pass one)."""
    aggregation: str = "min"
    """How per-step scores become one reward: min, prod, last, mean, ..."""
    unfinished_reward: float | None = 0.0
    """``/get_reward``: what a response that never states a final answer (``The answer is N.`` or
    ``\\boxed{}``) earns, as every ``prmkit.rl`` reward pays it; steps after the answer step are not
    scored. ``None`` scores an unfinished response's steps like any other's (the hackable setting: a
    policy paid by ``min`` learns to stop before its risky step, docs/rl.md)."""
    split: StepSplit = Field(default_factory=StepSplit)
    step_tag: str | None = None
    """``/pooling`` only: the tag ending each step in vLLM-style inputs; default: the checkpoint's own
    tag (prmkit checkpoints declare it), else ``<extra_0>`` (Qwen PRMs)."""
    batching: bool = True
    """Merge requests that arrive together into one forward pass (off: one pass per request)."""
    max_batch_traces: int = Field(default=64, ge=1)
    """Most traces in one forward pass (bounds activation memory). A request with more is scored in
    several passes that take turns with the other requests waiting."""
    max_batch_chars: int = Field(default=400_000, ge=1)
    """Most estimated cost (characters, as ``--max-queue-chars`` counts them) in one forward pass, so one
    pass holds the scorer a bounded time: a request costlier than this is scored in pieces, and requests
    that arrive meanwhile are scored between them. A single trace costlier than this still gets a pass."""
    max_wait_ms: float = Field(default=5.0, ge=0)
    """How long the oldest waiting request may wait for others to join its batch."""
    batch_tokens: int | None = Field(default=None, ge=1)
    """Checkpoints only: padded tokens in one forward pass (rows x longest row). Default: the scorer's
    own (16384) on a GPU, 1024 on a CPU, where a few length-sorted traces per pass cost less per trace
    than one large padded pass (measured by bench/bench_serving.py)."""
    max_queue_traces: int = Field(default=1024, ge=1)
    """Traces allowed to wait; beyond it requests get 503 with Retry-After instead of piling up."""
    max_queue_chars: int = Field(default=4_000_000, ge=1)
    """The queue's capacity in estimated cost: characters of the problems and steps waiting, plus 200 per
    trace and 20 per step for the template. A request that would overfill it gets 503 with Retry-After;
    one that could never fit (costlier than this alone) gets 413."""
    max_queue_wait_s: float = Field(default=10.0, gt=0)
    """Longest a request waits in the queue before its forward pass starts: one predicted to wait longer
    (from the measured scoring speed) gets 503 with Retry-After at once, and one still waiting after this
    long gets 503 instead of a late answer its client may have stopped waiting for."""
    load: LoadOptions = Field(default_factory=LoadOptions)
    """How a checkpoint is loaded (dtype, device, device map, attention, remote code)."""
    max_body_bytes: int = Field(default=4_000_000, ge=1)
    """Largest request body accepted (413 beyond)."""
    max_traces_per_request: int = Field(default=512, ge=1)
    """Most traces in one request (413 beyond)."""
    max_steps_per_trace: int = Field(default=256, ge=1)
    """Most steps in one trace, reported by ``GET /health``. ``/score`` and ``/pooling`` refuse a longer
    trace (422); ``/get_reward`` pays a response with more steps (up to and with its answer step) by the
    unfinished rule, ``unfinished_reward`` or 0.0 where that is None, and counts it
    (``extra_logs.prm_overlong``, ``prmkit_overlong_responses_total``)."""
    max_step_chars: int = Field(default=20_000, ge=1)
    """Most characters in one step, or in a problem (413 beyond), checked before any tokenizing: a long
    text costs tokenizer time even when the model then refuses it as too long."""
    max_trace_chars: int = Field(default=100_000, ge=1)
    """Most characters in one trace: problem plus steps, or the raw completion / query / input text before
    it is split (413 beyond), checked before splitting or tokenizing."""
    keep_alive_s: float = Field(default=5.0, gt=0)
    """Seconds an idle keep-alive connection stays open after its last response."""
    header_timeout_s: float = Field(default=10.0, gt=0)
    """Seconds a client has to send a whole request head (request line and headers) after connecting or
    after its previous response; a connection silent or trickling past it is closed."""
    body_timeout_s: float = Field(default=10.0, gt=0)
    """Seconds a request body may take to start after its headers; it must then keep arriving at
    ``min_body_rate`` bytes per second on average (it is due by ``body_timeout_s + bytes received /
    min_body_rate``), else the answer is 408 and the connection is closed."""
    min_body_rate: int = Field(default=65_536, ge=1)
    """Slowest average rate, in bytes per second, a request body may arrive at after ``body_timeout_s``
    (64 KiB/s: a 4 MB body gets about a minute); a trickle slower than this is answered 408."""
    connections_per_client: int = Field(default=256, ge=1)
    """Most open connections from one client address (an IPv6 client by its /64); one more is answered
    503 and closed, so one client's idle sockets cannot starve the others. Raise it for a trainer that
    keeps more than 256 requests in flight from one machine."""
    trusted_proxies: list[str] = Field(default_factory=list)
    """Addresses or CIDR networks of reverse proxies in front of the server: their connections are not
    counted per client (every client behind one shares its address; cap those at the proxy). None by
    default. The reward server reads no forwarded header, so nothing else changes."""
    max_json_depth: int = Field(default=32, ge=4, le=500)
    """Deepest nesting of lists and objects in a request body (422 beyond); the API's own bodies need 4."""
    gate: GateOptions = Field(default_factory=GateOptions)
    """The deployment gate of ``POST /verify`` (none by default)."""

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        parse_networks(value)  # a ValueError naming each entry that is no address or network
        return value


class GateMeasureConfig(BaseModel):
    """``prmkit gate measure``: a gate's TPR and TNR on gold-labelled traces, as the card's monitor.

    The JSON written is :class:`prmkit.cards.roles.DeploymentMonitor`, read by ``prmkit card --monitor``
    and ``prmkit serve --gate-monitor``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    model: str
    """The scorer the gate runs (any scorer spec: a checkpoint folder, a reward server URL,
    ``arithmetic-oracle``...)."""
    traces: Path
    """Gold-labelled traces (e.g. ``prmkit arithmetic sample`` then ``check``): a trace with a gold first
    error is one the gate should flag, an error-free one one it should accept."""
    out: Path
    """The monitor JSON to write (``prmkit.cards.roles.DeploymentMonitor``)."""
    threshold: float
    """The gate's threshold: a trace whose aggregated score is below it is doubtful (flagged)."""
    aggregation: str = "min"
    """How step scores become the gate's one number (min, prod, last, mean, ...)."""
    action: GateAction = "flag"
    """What the deployed gate does with a doubtful trace (recorded; the rates count its flags either way)."""
    source: str = "gold"
    """The label source whose first error is the truth (``gold`` on the world)."""
    load: LoadOptions = Field(default_factory=LoadOptions)
    """How a checkpoint scorer is loaded (dtype, device, device map, attention, remote code)."""

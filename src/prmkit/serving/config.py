"""The reward server's options, in a module light enough for ``prmkit --help`` to import.

Each option is documented once, in its docstring; the CLI's ``--help`` is generated from here.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from prmkit.core.http_limits import parse_networks
from prmkit.core.steps import StepSplit
from prmkit.modeling.loading import LoadOptions


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

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        parse_networks(value)  # a ValueError naming each entry that is no address or network
        return value

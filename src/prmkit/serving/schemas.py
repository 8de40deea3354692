"""Request and response bodies of the reward server (they also make its OpenAPI page at /docs)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class TraceIn(BaseModel):
    """One trace to score: the problem, and its steps, one completion string to split, or an agent's
    messages."""

    model_config = ConfigDict(extra="forbid")

    problem: str = ""
    steps: list[str] | None = None
    completion: str | None = None
    """Cut into steps by the server's split rule (``--step-separator`` / ``--step-pattern``)."""
    messages: list[dict[str, Any]] | None = None
    """A tool-using trajectory as agent frameworks log it (OpenAI chat: ``system`` / ``user`` messages,
    then ``assistant`` messages with ``tool_calls`` and the ``tool`` results that answer them): one step
    per assistant message, read as prmkit's ``chat`` format reads it; ``problem`` defaults to the first
    user message."""
    tools: list[dict[str, Any]] | None = None
    """The tools the agent could call (OpenAI ``tools`` schemas), with ``messages``."""


class VerifyRequest(TraceIn):
    """``POST /verify``: one trace, in any form a ``/score`` trace takes (``problem`` with ``steps``, a
    ``completion`` or an agent's ``messages``), and the seed of its continuations."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    seed: int | None = Field(default=None, ge=0, le=2**31 - 1)
    """Seed of the first continuation asked of the gate's policy (the k-th gets ``seed + k``), so a
    resample can be repeated; None: the policy endpoint's own randomness."""


class Resampled(BaseModel):
    """The continuation ``/verify`` returns: the first that passed the gate, else the best-scoring one."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    steps: list[str]
    """The whole new trace: the request's steps before its first doubtful step, then the policy's."""
    kept_steps: int
    """How many of ``steps`` are the request's own."""
    final_answer: str | None
    """The answer the policy reached (None: it stopped before one, so the trace cannot pass)."""
    step_scores: list[float]
    score: float
    """The gate's aggregate of ``step_scores``."""
    first_doubtful_step: int | None


class VerifyResponse(BaseModel):
    """The gate's decision on one trace."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    model: str
    decision: Literal["accept", "flag", "resampled"]
    """``accept``: the trace passes; ``flag``: it is doubtful (and no continuation passed, when the gate
    resamples); ``resampled``: it was doubtful and ``resampled`` is a continuation that passes."""
    reason: str
    """Why, in words (the score against the threshold, the continuations tried)."""
    rule: str
    """The gate's rule in words (the card's monitor role records the same)."""
    aggregation: str
    threshold: float
    score: float
    """The aggregate of the request's own step scores."""
    step_scores: list[float]
    first_doubtful_step: int | None
    """Index of the first step scoring below the threshold (of the first step at which the running
    aggregate does, for ``prod``); None for a trace that passes."""
    resamples: int
    """Continuations asked of the policy endpoint (0 unless the gate resamples a doubtful trace)."""
    resampled: Resampled | None
    """With ``resampled`` the continuation that passed; with ``flag`` after resampling the best one."""


class ScoreRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    traces: list[TraceIn]
    """May be empty (an empty answer): a trainer that splits its batch over several servers can send one
    of them nothing."""
    aggregation: str | None = None
    """min, prod, last, mean, ... (default: the server's ``--aggregation``)."""


class TraceScore(BaseModel):
    step_scores: list[float]
    score: float | None
    """The aggregate; None for a trace with no steps."""


class ScoreResponse(BaseModel):
    model: str
    aggregation: str
    results: list[TraceScore]


class RewardRequest(BaseModel):
    """OpenRLHF's remote reward request (``--reward.remote_url http://host:port/get_reward``)."""

    query: list[str]
    """Prompt + response of each sample. May be empty: OpenRLHF splits a batch over its reward URLs and
    sends the last ones an empty list when the batch is smaller (always, from 0.10 on, which asks for one
    sample at a time); the answer is then empty lists."""
    prompts: list[str] | None = None
    labels: list[Any] | None = None


class RewardResponse(BaseModel):
    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float]]
    """One value per query under each key (the same keys for an empty batch: OpenRLHF concatenates the
    answers of its reward URLs key by key)."""


class HealthResponse(BaseModel):
    """``GET /health``: liveness, and what a client needs to know before it sends anything."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    status: str
    model: str
    queued_traces: int
    """Traces waiting for a forward pass, so a load balancer can route around a busy replica."""
    threshold: float | None
    """The checkpoint's dev-tuned threshold (None where it stores none), so a client that cuts step
    scores into right / wrong over HTTP uses the one the checkpoint was tuned with."""
    max_steps_per_trace: int
    """``--max-steps-per-trace``: a client that cuts steps itself (prmkit's RemoteScorer, the verl
    client) pays a longer response by the unfinished rule instead of sending it to a certain 422."""


VLLM_VERSION = "0.33.0"
"""The vLLM release whose ``/pooling`` request and response this server mirrors, field for field
(``vllm/entrypoints/pooling/pooling/protocol.py`` and ``.../base/protocol.py`` of that wheel)."""

POOLING_TASKS = ("embed", "classify", "token_embed", "token_classify", "plugin", "embed&token_classify")
"""vLLM 0.33.0's ``PoolingTask`` values; a PRM served for STEP pooling answers ``token_classify`` only."""
REMOVED_TASKS = {
    "score": "`score` task was removed; use `classify` instead.",
    "encode": "`encode` task was removed; use `token_embed` or `token_classify` instead.",
}
"""vLLM's own messages for the task names it refuses before validation."""


class ChatTextPart(BaseModel):
    """A text part of a chat message's content (vLLM joins a message's text parts with newlines)."""

    type: Literal["text"]
    text: str


class ChatMessage(BaseModel):
    """One chat message as vLLM's ``messages`` takes it (text content only: no images, audio, tools)."""

    role: str
    content: str | list[ChatTextPart] | None = None
    name: str | None = None


class PoolingRequest(BaseModel):
    """vLLM 0.33.0's ``/pooling`` body: ``PoolingCompletionRequest`` (``input``) and ``PoolingChatRequest``
    (``messages``) in one model, with every field of both. Unknown fields are ignored, as vLLM ignores
    them; fields prmkit does not implement are refused by name when set (docs/serving.md lists them)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    model: str | None = None
    user: str | None = None
    input: list[int] | list[list[int]] | str | list[str] | None = None
    """Text, texts, token ids or lists of token ids; give this or ``messages``."""
    messages: list[ChatMessage] | None = None
    """One conversation, rendered with the checkpoint's chat template (one result)."""
    add_special_tokens: bool | None = None
    """Default True for ``input`` (BOS etc. added), False for ``messages`` (the template adds them)."""
    add_generation_prompt: bool = False
    continue_final_message: bool = False
    chat_template: str | None = None
    chat_template_kwargs: dict[str, Any] | None = None
    media_io_kwargs: dict[str, dict[str, Any]] | None = None
    mm_processor_kwargs: dict[str, Any] | None = None
    truncate_prompt_tokens: int | None = Field(default=None, ge=-1)
    padding: Literal["max_length", "do_not_pad"] | None = None
    truncation_side: Literal["left", "right"] | None = None
    request_id: str | None = None
    priority: int = Field(default=0, ge=-(2**63), le=2**63 - 1)
    cache_salt: str | None = Field(default=None, min_length=1, max_length=1024)
    task: Literal[POOLING_TASKS] | None = None  # type: ignore[valid-type]
    """None or ``token_classify`` (the task this server pools for)."""
    encoding_format: Literal["float", "base64", "bytes", "bytes_only"] = "float"
    embed_dtype: Literal["float32", "float16", "bfloat16", "fp8_e4m3", "fp8_e5m2"] = "float32"
    """base64 only: the dtype the rows are written in."""
    endianness: Literal["native", "big", "little"] = "native"
    """base64 only: byte order of the written rows."""
    dimensions: int | None = None
    use_activation: bool | None = None
    """None or True: softmax over the classes (sigmoid for one class); False: the raw logits."""

    @model_validator(mode="before")
    @classmethod
    def _removed(cls, data: Any) -> Any:
        """vLLM's ``reject_removed_pooling_parameters``: the same fields refused with the same words."""
        if isinstance(data, dict):
            if "normalize" in data:
                raise ValueError("Parameter `normalize` was removed; use `use_activation` instead.")
            task = data.get("task")
            if isinstance(task, str) and task in REMOVED_TASKS:
                raise ValueError(REMOVED_TASKS[task])
        return data


class PoolingItem(BaseModel):
    """vLLM's ``PoolingResponseData``."""

    index: int
    object: str = "pooling"
    data: list[list[float]] | list[float] | str
    """One row per step-tag token (``[p_class_0, p_class_1, ...]``, or logits); a base64 string of the
    flattened rows with ``encoding_format: base64``."""


class PoolingUsage(BaseModel):
    """vLLM's ``UsageInfo``: prompt tokens of every input; a pooling request generates none."""

    prompt_tokens: int = 0
    total_tokens: int = 0
    completion_tokens: int | None = 0
    prompt_tokens_details: dict[str, Any] | None = None
    completion_tokens_details: dict[str, Any] | None = None


class PoolingResponse(BaseModel):
    """vLLM's ``PoolingResponse``."""

    id: str
    object: str = "list"
    created: int
    model: str
    data: list[PoolingItem]
    usage: PoolingUsage


class ErrorResponse(BaseModel):
    """Every refusal the server writes itself (401, 413, 503, and 422 for a refused input)."""

    detail: str
    """What was wrong, where, and the option or fix that helps."""


class ValidationErrorResponse(BaseModel):
    """422: a message (strict JSON, a refused input) or FastAPI's list of located field errors."""

    detail: str | list[dict[str, Any]]

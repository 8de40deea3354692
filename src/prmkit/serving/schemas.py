"""Request and response bodies of the reward server (they also make its OpenAPI page at /docs)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class TraceIn(BaseModel):
    """One trace to score: the problem, and either its steps or one completion string to split."""

    model_config = ConfigDict(extra="forbid")

    problem: str = ""
    steps: list[str] | None = None
    completion: str | None = None
    """Cut into steps by the server's split rule (``--step-separator`` / ``--step-pattern``)."""


class ScoreRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    traces: list[TraceIn] = Field(min_length=1)
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

    query: list[str] = Field(min_length=1)
    prompts: list[str] | None = None
    labels: list[Any] | None = None


class RewardResponse(BaseModel):
    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float]]


class PoolingRequest(BaseModel):
    """vLLM's ``/pooling`` request for a token-classification (PRM) model; step tags mark step ends."""

    model: str | None = None
    input: str | list[str]
    task: Literal["token_classify"] | None = "token_classify"
    encoding_format: Literal["float"] = "float"


class PoolingItem(BaseModel):
    index: int
    object: Literal["pooling"] = "pooling"
    data: list[list[float]]
    """One ``[p_negative, p_positive]`` pair per step tag, as vLLM's STEP pooler returns them."""


class PoolingUsage(BaseModel):
    prompt_tokens: int = 0
    total_tokens: int = 0
    completion_tokens: int = 0


class PoolingResponse(BaseModel):
    id: str
    object: Literal["list"] = "list"
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

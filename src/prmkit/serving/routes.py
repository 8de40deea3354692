"""The reward server's endpoints: one module-level :class:`fastapi.APIRouter` of plain functions.

Each endpoint receives the server it answers for as a dependency (:data:`Server`: the
:class:`ServerState` that :func:`~prmkit.serving.reward_server.create_app` stores on ``app.state``)
rather than closing over the factory's locals, as FastAPI lays out larger apps. So every endpoint reads
on its own, with everything it may touch named in one dataclass, and the one router serves any number
of apps in a process (the tests run many) without them sharing state.

What each endpoint answers, and why, is in :mod:`~prmkit.serving.reward_server`; the limits checked
before any work are in :mod:`~prmkit.serving.limits`.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST

from prmkit.core.model import Problem, Trace
from prmkit.core.steps import make_trace, parse_completion, problem_text, split_query
from prmkit.scoring.aggregate import aggregate
from prmkit.serving.batching import TRACE_COST, DynamicBatcher, trace_cost
from prmkit.serving.config import ServerConfig
from prmkit.serving.gate import Gate
from prmkit.serving.limits import check_count, check_raw, check_sizes, raw_text
from prmkit.serving.metrics import Metrics
from prmkit.serving.pooling import (
    PoolingError,
    PoolingScorer,
    check_ids,
    encode_rows,
    make_jobs,
    raw_texts,
    refused_fields,
    token_inputs,
    tokenize,
)
from prmkit.serving.schemas import (
    ErrorResponse,
    HealthResponse,
    PoolingItem,
    PoolingRequest,
    PoolingResponse,
    PoolingUsage,
    RewardRequest,
    RewardResponse,
    ScoreRequest,
    ScoreResponse,
    TraceIn,
    TraceScore,
    ValidationErrorResponse,
)

ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorResponse, "description": "Missing or wrong API key (when the server has one)."},
    413: {"model": ErrorResponse, "description": "A size limit: body, traces, characters, queue capacity."},
    422: {"model": ValidationErrorResponse, "description": "Malformed JSON or fields, or a refused input."},
    503: {"model": ErrorResponse, "description": "Busy: retry after the Retry-After header's seconds."},
}
"""Error answers of the scoring endpoints, declared so the OpenAPI page matches what the server does."""


@dataclass(frozen=True)
class ServerState:
    """Everything an endpoint of one app may use, built once by ``create_app`` from the scorer and the
    config, so no endpoint inspects the scorer per request."""

    config: ServerConfig
    batcher: DynamicBatcher
    """The one queue all scoring goes through, so concurrent requests share forward passes."""
    metrics: Metrics
    pooler: PoolingScorer | None
    """STEP pooling on a checkpoint's tokens; None for a scorer with no tokens (``/pooling`` then splits
    the text at the step tag) or with no step-tag classes (then ``not_pooled`` says why)."""
    not_pooled: str | None
    """Why this scorer cannot answer ``/pooling``, kept so every other endpoint still works."""
    model_name: str
    threshold: float | None
    """The checkpoint's stored threshold, for ``/health`` (None where the scorer has none)."""
    step_tag: str
    """Where ``/pooling`` splits text into steps for a scorer with no tokens."""
    gate: Gate | None = None
    """``/verify``'s gate (:mod:`~prmkit.serving.gate`); None: not configured, ``/verify`` answers 404."""
    cpu_pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(CPU_THREADS, thread_name_prefix="prmkit-tokenize")
    )
    """Threads for ``/pooling``'s tokenizing and decoding, and nothing else: scoring has the batcher's
    thread and the gate's policy calls their own, so no kind of work can take another's threads (issue
    66: all three shared asyncio's default pool, and six hung policy calls stalled ``/pooling``)."""


def server_state(request: Request) -> ServerState:
    """The state of the app that received ``request`` (a dependency: see :data:`Server`)."""
    return request.app.state.server


Server = Annotated[ServerState, Depends(server_state)]
"""An endpoint's parameter annotated ``Server`` receives its app's :class:`ServerState`."""

CPU_THREADS = 2
"""Threads that tokenize and decode for ``/pooling`` (fast tokenizers release the GIL while they work)."""

router = APIRouter()


@router.get("/health", response_model=HealthResponse)
async def health(server: Server) -> HealthResponse:
    """Liveness, the queue depth, the checkpoint's threshold and ``max_steps_per_trace`` (each field
    says why a client wants it)."""
    return HealthResponse(
        status="ok",
        model=server.model_name,
        queued_traces=server.batcher.pending,
        threshold=server.threshold,
        max_steps_per_trace=server.config.max_steps_per_trace,
    )


@router.get("/metrics", response_class=Response, responses={200: {"content": {"text/plain": {}}}})
async def prometheus(server: Server) -> Response:
    """Prometheus text exposition: requests by route and status, latency, batches, queue depth."""
    return Response(server.metrics.render(), media_type=CONTENT_TYPE_LATEST)


@router.post("/score", response_model=ScoreResponse, responses=ERRORS)
async def score(req: ScoreRequest, server: Server) -> ScoreResponse:
    """Per-step scores and their aggregate for each trace."""
    config = server.config
    how = req.aggregation or config.aggregation
    _check_aggregation(how)
    check_raw([raw_text(item) for item in req.traces], config)
    traces = [read_trace(item, f"traces[{i}]", config, str(i)) for i, item in enumerate(req.traces)]
    rows = await score_all(server, traces)
    results = [TraceScore(step_scores=r, score=aggregate(r, how) if r else None) for r in rows]
    return ScoreResponse(model=server.model_name, aggregation=how, results=results)


@router.post("/get_reward", response_model=RewardResponse, responses=ERRORS)
async def get_reward(req: RewardRequest, server: Server) -> RewardResponse:
    """OpenRLHF's remote reward: one reward per query, the aggregate of its steps up to the answer step
    (0.0 for a response with no steps). A response with no final answer, or with more steps than
    ``--max-steps-per-trace``, is paid by the unfinished rule (``unfinished_reward``; 0.0 where that is
    None for an over-long one), so no response costs the trainer its batch. An empty batch gets
    empty lists."""
    config = server.config
    prompts = req.prompts or [""] * len(req.query)
    if len(prompts) != len(req.query):
        raise HTTPException(422, f"'prompts' has {len(prompts)} items but 'query' has {len(req.query)}")
    check_raw(req.query, config)
    parsed, heads = [], []
    for query, prompt in zip(req.query, prompts, strict=True):
        head, response = split_query(query, prompt)
        heads.append(problem_text(head, config.split))
        parsed.append(parse_completion(response, config.split))
    overlong = [len(p.steps) > config.max_steps_per_trace for p in parsed]
    unfinished = [not p.finished and config.unfinished_reward is not None for p in parsed]
    paid = [i for i, p in enumerate(parsed) if p.steps and not (overlong[i] or unfinished[i])]
    scored = await score_all(server, [make_trace(heads[i], parsed[i].steps, trace_id=str(i)) for i in paid])
    rows: list[list[float]] = [[] for _ in parsed]
    for i, row in zip(paid, scored, strict=True):
        rows[i] = row
    server.metrics.overlong.inc(sum(overlong))
    rule = float(config.unfinished_reward or 0.0)
    rewards = [
        rule if long or stop else aggregate(r, config.aggregation) if r else 0.0
        for r, long, stop in zip(rows, overlong, unfinished, strict=True)
    ]
    logs = {
        "prm_unfinished": [float(stop) for stop in unfinished],
        "prm_overlong": [float(long) for long in overlong],
        # the steps read (up to and with the answer step), scored or not: an over-long or unfinished
        # response paid by the rule read its steps too (prmkit.rl's rewards log the same number)
        "prm_num_steps": [float(len(p.steps)) for p in parsed],
        "prm_min_step": [min(r) if r else 0.0 for r in rows],
        "prm_last_step": [r[-1] if r else 0.0 for r in rows],
    }
    return RewardResponse(rewards=rewards, scores=[min(1.0, max(0.0, x)) for x in rewards], extra_logs=logs)


@router.post("/pooling", response_model=PoolingResponse, responses=ERRORS)
async def pooling(req: PoolingRequest, server: Server) -> PoolingResponse:
    """vLLM's ``/pooling`` (``task: token_classify``): for a checkpoint, STEP pooling on the request's
    token ids, one row per step-tag token; for a scorer with no tokens, the text before each tag is a step."""
    pooler = server.pooler
    try:
        if (why := refused_fields(req) or server.not_pooled) is not None:
            raise PoolingError(why)
        if pooler is None:
            rows, tokens, width = await _text_pooling(server, req), 0, 2
        else:
            (rows, tokens), width = await _step_pooling(server, req, pooler), pooler.pooling.width
    except PoolingError as err:
        raise HTTPException(422, str(err)) from None
    return PoolingResponse(
        id=f"pool-{req.request_id or uuid.uuid4().hex}",
        created=int(time.time()),
        model=req.model or server.model_name,
        data=[PoolingItem(index=i, data=encode_rows(r, width, req)) for i, r in enumerate(rows)],
        usage=PoolingUsage(prompt_tokens=tokens, total_tokens=tokens),
    )


async def score_all(server: ServerState, traces: list[Trace]) -> list[list[float]]:
    """The one way ``/score``, ``/get_reward``, ``/verify`` and text ``/pooling`` score: limits first, then the
    batcher, with the scorer's refusal of an input answered as a 422 rather than a 500."""
    check_sizes(traces, server.config)
    if not traces:  # an empty batch (OpenRLHF's last reward URL often gets one): an empty answer
        return []
    try:
        return await server.batcher.score(traces)
    except ValueError as err:  # the scorer refused this input (too long for the model, ...)
        raise HTTPException(422, f"cannot score this request: {err}") from None


async def _step_pooling(
    server: ServerState, req: PoolingRequest, pooler: PoolingScorer
) -> tuple[list[list[float]], int]:
    """Limits first (texts in characters, ids in tokens), then tokenizing on the server's CPU threads, then
    the tokens counted against the model's length before the request joins the queue."""
    config, model_name = server.config, server.model_name
    loop = asyncio.get_running_loop()
    ids = token_inputs(req)
    if ids is not None:
        check_count(len(ids), config)
        check_ids(ids, pooler.pooling, model_name)
        decode = pooler.pooling.tokenizer.decode
        texts = await loop.run_in_executor(server.cpu_pool, lambda: [decode(r) for r in ids])
    else:
        check_raw(raw_texts(req), config)
        ids, texts = await loop.run_in_executor(server.cpu_pool, tokenize, req, pooler.pooling)
        check_ids(ids, pooler.pooling, model_name)
    jobs = make_jobs(ids, texts, use_activation=req.use_activation is not False)
    cost = sum(trace_cost(j) for j in jobs)
    if cost > config.max_queue_chars:
        raise HTTPException(
            413,
            f"request costs {cost} characters (text plus {TRACE_COST} per input); the queue holds at "
            f"most {config.max_queue_chars} (--max-queue-chars); split the batch",
        )
    try:
        rows = await server.batcher.score(jobs)
    except ValueError as err:
        raise HTTPException(422, f"cannot pool this request: {err}") from None
    return rows, sum(len(r) for r in ids)


async def _text_pooling(server: ServerState, req: PoolingRequest) -> list[list[float]]:
    """A scorer with no tokens (the world's oracle, a remote server): steps end at each tag in the text."""
    if req.messages is not None or token_inputs(req) is not None or req.use_activation is False:
        raise PoolingError(
            f"/pooling: {server.model_name} is not a checkpoint, so it has no tokens, chat template or "
            "logits; send text 'input' only (the text before each step tag is a step)"
        )
    inputs = raw_texts(req)
    check_raw(inputs, server.config)
    traces = [_pooling_trace(text, server.step_tag, server.config, i) for i, text in enumerate(inputs)]
    rows = await score_all(server, traces)
    return [[x for p in r for x in (1.0 - p, p)] for r in rows]


def _check_aggregation(how: str) -> None:
    """Try a request's ``aggregation`` on one score before any work, so an unknown name is a 422 that
    says so (the registry can grow at run time, so the schema cannot list the names)."""
    try:
        aggregate([0.5], how)
    except (KeyError, ValueError) as err:
        raise HTTPException(422, f"aggregation: {err}") from None


def read_trace(item: TraceIn, where: str, config: ServerConfig, trace_id: str) -> Trace:
    """One trace of a request (``/score``'s, ``/verify``'s) in whichever form it came: ``steps``, a
    ``completion`` cut by the server's split rule, or an agent's ``messages``; a malformed one is a 422
    naming ``where`` it is."""
    given = [k for k in ("steps", "completion", "messages") if getattr(item, k) is not None]
    if len(given) != 1:
        raise HTTPException(
            422,
            f"{where}: give exactly one of 'steps' (a list), 'completion' (a string) or "
            f"'messages' (an agent's chat messages); found {' and '.join(given) or 'none'}",
        )
    if item.messages is not None:
        return _trajectory(item, where, trace_id)
    if item.tools is not None:
        raise HTTPException(422, f"{where}: 'tools' go with 'messages'")
    steps = item.steps if item.steps is not None else config.split.split(item.completion or "")
    return make_trace(item.problem, steps, trace_id=trace_id)


def _trajectory(item: TraceIn, where: str, trace_id: str) -> Trace:
    """An agent's trajectory from OpenAI chat messages (prmkit's ``chat`` reading); a malformed one is a
    422 naming the message and field, as a file error would."""
    from prmkit.formats.base import RecordChecker
    from prmkit.formats.chat import first_user_text, read_messages

    ck = RecordChecker(where, None)
    prompt, steps = read_messages(ck, list(item.messages or []))
    if ck.issues:
        lines = "; ".join(f"{x.field}: expected {x.expected}, found {x.found}" for x in ck.issues[:5])
        raise HTTPException(422, f"{where}.{lines}")
    text = item.problem or first_user_text(prompt)
    problem = Problem(id=f"p-{trace_id}", text=text, tools=item.tools or [])
    return Trace(id=trace_id, problem=problem, steps=steps)


def _pooling_trace(text: str, step_tag: str, config: ServerConfig, i: int) -> Trace:
    """Steps end at each step tag; text after the last tag is not a step (vLLM scores tag positions only)."""
    parts = text.split(step_tag)[:-1]
    if not parts:
        return make_trace("", [], trace_id=str(i))
    head, first = split_query(parts[0], "")
    if head:  # a chat template: the problem precedes the assistant marker
        problem = problem_text(head, config.split)
    else:  # no marker: take the first line as the problem when the first segment has several lines
        problem, _, first = first.partition("\n") if "\n" in first.strip() else ("", "", first)
    steps = [config.split.clean(s).strip() for s in [first, *parts[1:]]]
    return make_trace(problem, steps, trace_id=str(i))

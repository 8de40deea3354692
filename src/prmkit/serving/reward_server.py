"""The reward server: any StepScorer (a PRM checkpoint, an ORM, the world's oracle) behind HTTP.

Endpoints (OpenAPI page at ``/docs``):

- ``POST /score``      prmkit's own: per-step scores and the aggregate for a batch of traces
- ``POST /get_reward`` OpenRLHF's remote reward shape: ``{query, prompts, labels}`` -> ``{rewards, scores, extra_logs}``
- ``POST /pooling``    vLLM's (``serving.pooling``): STEP pooling on the request's tokens, one row per step tag
- ``GET /health`` (with ``max_steps_per_trace``), ``GET /metrics`` (Prometheus text)

``/get_reward`` is a reward, so it always answers a number per query: an empty batch gets empty lists,
and an over-long response is paid by the unfinished rule and counted instead of refused (``/score``, a
scoring API, keeps its 422 for an explicit over-long trace).

All scoring goes through one :class:`~prmkit.serving.batching.DynamicBatcher`, so concurrent requests
share forward passes and a full queue answers 503 with ``Retry-After`` instead of growing without bound.
The cost of a request is bounded before any work: :mod:`~prmkit.serving.guard` checks the body (size,
strict JSON, API key), then every limit that needs no tokenizer (traces, steps, characters per step
and per trace, queue cost) is checked here. Each answers with a message naming the place, the limit
and the option that sets it (docs/serving.md lists them).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from prmkit.core.http_limits import bounded_config
from prmkit.core.model import Problem, Trace
from prmkit.core.protocols import StepScorer
from prmkit.core.render import step_inputs
from prmkit.scoring.aggregate import aggregate
from prmkit.serving.batching import STEP_COST, TRACE_COST, DynamicBatcher, QueueFull, trace_cost
from prmkit.serving.config import ServerConfig
from prmkit.serving.guard import Guard
from prmkit.serving.metrics import Metrics
from prmkit.serving.pooling import (
    PoolingError,
    PoolingScorer,
    check_ids,
    encode_rows,
    make_jobs,
    raw_texts,
    refused_fields,
    step_pooling,
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
from prmkit.serving.steps import make_trace, parse_completion, problem_text, split_query

ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorResponse, "description": "Missing or wrong API key (when the server has one)."},
    413: {"model": ErrorResponse, "description": "A size limit: body, traces, characters, queue capacity."},
    422: {"model": ValidationErrorResponse, "description": "Malformed JSON or fields, or a refused input."},
    503: {"model": ErrorResponse, "description": "Busy: retry after the Retry-After header's seconds."},
}
"""Error answers of the scoring endpoints, declared so the OpenAPI page matches what the server does."""


def _check_text(where: str, text: str, limit: int, option: str, what: str) -> None:
    if len(text) > limit:
        raise HTTPException(
            413,
            f"{where}: {len(text)} characters; this server takes at most {limit} per {what} "
            f"({option}); shorten it or raise the limit",
        )


def _check_count(n: int, config: ServerConfig) -> None:
    if n > config.max_traces_per_request:
        raise HTTPException(
            413,
            f"request holds {n} traces; this server takes at most "
            f"{config.max_traces_per_request} per request (--max-traces-per-request); split the batch",
        )


def _check_raw(texts: Sequence[str], config: ServerConfig) -> None:
    """Count and length of the raw texts a request holds, checked before they are split into steps."""
    _check_count(len(texts), config)
    for i, text in enumerate(texts):
        _check_text(f"trace {i}", text, config.max_trace_chars, "--max-trace-chars", "trace")


def _raw_text(item: TraceIn) -> str:
    """What a trace of a request holds, as text, for the size check before any parsing."""
    raw = (item.problem or "") + (item.completion or "")
    if item.messages is not None or item.tools is not None:
        raw += json.dumps([item.messages, item.tools], ensure_ascii=False, default=str)
    return raw


def _trajectory(item: TraceIn, i: int) -> Trace:
    """An agent's trajectory from OpenAI chat messages (prmkit's ``chat`` reading); a malformed one is a
    422 naming the message and field, as a file error would."""
    from prmkit.formats.base import RecordChecker
    from prmkit.formats.chat import first_user_text, read_messages

    ck = RecordChecker(f"traces[{i}]", None)
    prompt, steps = read_messages(ck, list(item.messages or []))
    if ck.issues:
        lines = "; ".join(f"{x.field}: expected {x.expected}, found {x.found}" for x in ck.issues[:5])
        raise HTTPException(422, f"traces[{i}].{lines}")
    problem = Problem(id=f"p-{i}", text=item.problem or first_user_text(prompt), tools=item.tools or [])
    return Trace(id=str(i), problem=problem, steps=steps)


def _check_sizes(traces: Sequence[Trace], config: ServerConfig) -> None:
    """Every limit that can be checked without tokenizing, so an oversized request costs microseconds."""
    _check_count(len(traces), config)
    cost = 0
    for i, trace in enumerate(traces):
        if len(trace.steps) > config.max_steps_per_trace:
            raise HTTPException(
                422,
                f"trace {i} has {len(trace.steps)} steps; this server scores at most "
                f"{config.max_steps_per_trace} steps per trace (--max-steps-per-trace)",
            )
        texts = [trace.problem.text, *step_inputs(trace.steps)]  # an agent's calls and results count
        for j, text in enumerate(texts):
            where = f"trace {i} problem" if j == 0 else f"trace {i} step {j - 1}"
            _check_text(where, text, config.max_step_chars, "--max-step-chars", "step or problem")
        _check_text(f"trace {i}", "".join(texts), config.max_trace_chars, "--max-trace-chars", "trace")
        cost += trace_cost(trace)
    if cost > config.max_queue_chars:
        raise HTTPException(
            413,
            f"request costs {cost} characters (text plus {TRACE_COST} per trace and {STEP_COST} per step); "
            f"the queue holds at most {config.max_queue_chars} (--max-queue-chars); split the batch",
        )


def create_app(scorer: StepScorer, config: ServerConfig | None = None) -> FastAPI:
    """A FastAPI app serving ``scorer``; run it with uvicorn (see :func:`serve`)."""
    config = config or ServerConfig()
    pooler, not_pooled = None, None
    try:
        pooling_spec = step_pooling(scorer, config.step_tag)
    except PoolingError as err:  # a causal LM with no step-tag classes: every other endpoint still works
        pooling_spec, not_pooled = None, str(err)
    if pooling_spec is not None:
        pooler = PoolingScorer(scorer, pooling_spec)
    batcher = DynamicBatcher(
        pooler or scorer,
        batching=config.batching,
        max_batch_traces=config.max_batch_traces,
        max_batch_chars=config.max_batch_chars,
        max_wait_ms=config.max_wait_ms,
        max_queue_traces=config.max_queue_traces,
        max_queue_chars=config.max_queue_chars,
        max_queue_wait_s=config.max_queue_wait_s,
    )
    metrics = Metrics(batcher)
    model_name = getattr(scorer, "name", "prmkit")
    stored = getattr(scorer, "threshold", None)
    threshold = stored if isinstance(stored, float) else None
    template = getattr(getattr(scorer, "convention", None), "template", None)
    step_tag = config.step_tag or getattr(template, "tag", None) or "<extra_0>"

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await batcher.start()
        yield
        await batcher.stop()

    app = FastAPI(title="prmkit reward server", version="1", lifespan=lifespan)
    app.state.batcher = batcher
    app.state.config = config
    app.add_middleware(Guard, config=config, metrics=metrics, routes=app.router.routes)

    @app.exception_handler(QueueFull)
    async def busy(_: Request, err: QueueFull) -> JSONResponse:
        return JSONResponse(
            {"detail": str(err)}, status_code=503, headers={"Retry-After": str(err.retry_after)}
        )

    async def score_all(traces: list[Trace]) -> list[list[float]]:
        _check_sizes(traces, config)
        if not traces:  # an empty batch (OpenRLHF's last reward URL often gets one): an empty answer
            return []
        try:
            return await batcher.score(traces)
        except ValueError as err:  # the scorer refused this input (too long for the model, ...)
            raise HTTPException(422, f"cannot score this request: {err}") from None

    @app.get("/health", response_model=HealthResponse)
    async def health() -> HealthResponse:
        """Liveness, the queue depth, the checkpoint's threshold and ``max_steps_per_trace`` (each field
        says why a client wants it)."""
        return HealthResponse(
            status="ok",
            model=model_name,
            queued_traces=batcher.pending,
            threshold=threshold,
            max_steps_per_trace=config.max_steps_per_trace,
        )

    @app.get("/metrics", response_class=Response, responses={200: {"content": {"text/plain": {}}}})
    async def prometheus() -> Response:
        """Prometheus text exposition: requests by route and status, latency, batches, queue depth."""
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)

    @app.post("/score", response_model=ScoreResponse, responses=ERRORS)
    async def score(req: ScoreRequest) -> ScoreResponse:
        """Per-step scores and their aggregate for each trace."""
        how = req.aggregation or config.aggregation
        _check_aggregation(how)
        _check_raw([_raw_text(item) for item in req.traces], config)
        traces = []
        for i, item in enumerate(req.traces):
            given = [k for k in ("steps", "completion", "messages") if getattr(item, k) is not None]
            if len(given) != 1:
                raise HTTPException(
                    422,
                    f"traces[{i}]: give exactly one of 'steps' (a list), 'completion' (a string) or "
                    f"'messages' (an agent's chat messages); found {' and '.join(given) or 'none'}",
                )
            if item.messages is not None:
                traces.append(_trajectory(item, i))
                continue
            if item.tools is not None:
                raise HTTPException(422, f"traces[{i}]: 'tools' go with 'messages'")
            steps = item.steps if item.steps is not None else config.split.split(item.completion or "")
            traces.append(make_trace(item.problem, steps, trace_id=str(i)))
        rows = await score_all(traces)
        results = [TraceScore(step_scores=r, score=aggregate(r, how) if r else None) for r in rows]
        return ScoreResponse(model=model_name, aggregation=how, results=results)

    @app.post("/get_reward", response_model=RewardResponse, responses=ERRORS)
    async def get_reward(req: RewardRequest) -> RewardResponse:
        """OpenRLHF's remote reward: one reward per query, the aggregate of its steps up to the answer step
        (0.0 for a response with no steps). A response with no final answer, or with more steps than
        ``--max-steps-per-trace``, is paid by the unfinished rule (``unfinished_reward``; 0.0 where that is
        None for an over-long one), so no response costs the trainer its batch. An empty batch gets
        empty lists."""
        prompts = req.prompts or [""] * len(req.query)
        if len(prompts) != len(req.query):
            raise HTTPException(422, f"'prompts' has {len(prompts)} items but 'query' has {len(req.query)}")
        _check_raw(req.query, config)
        parsed, heads = [], []
        for query, prompt in zip(req.query, prompts, strict=True):
            head, response = split_query(query, prompt)
            heads.append(problem_text(head, config.split))
            parsed.append(parse_completion(response, config.split))
        overlong = [len(p.steps) > config.max_steps_per_trace for p in parsed]
        unfinished = [not p.finished and config.unfinished_reward is not None for p in parsed]
        paid = [i for i, p in enumerate(parsed) if p.steps and not (overlong[i] or unfinished[i])]
        scored = await score_all([make_trace(heads[i], parsed[i].steps, trace_id=str(i)) for i in paid])
        rows: list[list[float]] = [[] for _ in parsed]
        for i, row in zip(paid, scored, strict=True):
            rows[i] = row
        metrics.overlong.inc(sum(overlong))
        rule = float(config.unfinished_reward or 0.0)
        rewards = [
            rule if long or stop else aggregate(r, config.aggregation) if r else 0.0
            for r, long, stop in zip(rows, overlong, unfinished, strict=True)
        ]
        logs = {
            "prm_unfinished": [float(stop) for stop in unfinished],
            "prm_overlong": [float(long) for long in overlong],
            "prm_num_steps": [float(len(r)) for r in rows],
            "prm_min_step": [min(r) if r else 0.0 for r in rows],
            "prm_last_step": [r[-1] if r else 0.0 for r in rows],
        }
        return RewardResponse(
            rewards=rewards, scores=[min(1.0, max(0.0, x)) for x in rewards], extra_logs=logs
        )

    @app.post("/pooling", response_model=PoolingResponse, responses=ERRORS)
    async def pooling(req: PoolingRequest) -> PoolingResponse:
        """vLLM's ``/pooling`` (``task: token_classify``): for a checkpoint, STEP pooling on the request's
        token ids, one row per step-tag token; for a scorer with no tokens, the text before each tag is a step."""
        try:
            if (why := refused_fields(req) or not_pooled) is not None:
                raise PoolingError(why)
            if pooler is None:
                rows, tokens, width = await _text_pooling(req), 0, 2
            else:
                (rows, tokens), width = await _step_pooling(req, pooler), pooler.pooling.width
        except PoolingError as err:
            raise HTTPException(422, str(err)) from None
        return PoolingResponse(
            id=f"pool-{req.request_id or uuid.uuid4().hex}",
            created=int(time.time()),
            model=req.model or model_name,
            data=[PoolingItem(index=i, data=encode_rows(r, width, req)) for i, r in enumerate(rows)],
            usage=PoolingUsage(prompt_tokens=tokens, total_tokens=tokens),
        )

    async def _step_pooling(req: PoolingRequest, pooler: PoolingScorer) -> tuple[list[list[float]], int]:
        """Limits first (texts in characters, ids in tokens), then tokenizing off the event loop, then
        the tokens counted against the model's length before the request joins the queue."""
        ids = token_inputs(req)
        if ids is not None:
            _check_count(len(ids), config)
            check_ids(ids, pooler.pooling, model_name)
            texts = await asyncio.to_thread(lambda: [pooler.pooling.tokenizer.decode(r) for r in ids])
        else:
            _check_raw(raw_texts(req), config)
            ids, texts = await asyncio.to_thread(tokenize, req, pooler.pooling)
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
            rows = await batcher.score(jobs)
        except ValueError as err:
            raise HTTPException(422, f"cannot pool this request: {err}") from None
        return rows, sum(len(r) for r in ids)

    async def _text_pooling(req: PoolingRequest) -> list[list[float]]:
        """A scorer with no tokens (the world's oracle, a remote server): steps end at each tag in the text."""
        if req.messages is not None or token_inputs(req) is not None or req.use_activation is False:
            raise PoolingError(
                f"/pooling: {model_name} is not a checkpoint, so it has no tokens, chat template or "
                "logits; send text 'input' only (the text before each step tag is a step)"
            )
        inputs = raw_texts(req)
        _check_raw(inputs, config)
        rows = await score_all([_pooling_trace(text, step_tag, config, i) for i, text in enumerate(inputs)])
        return [[x for p in r for x in (1.0 - p, p)] for r in rows]

    return app


def _check_aggregation(how: str) -> None:
    try:
        aggregate([0.5], how)
    except (KeyError, ValueError) as err:
        raise HTTPException(422, f"aggregation: {err}") from None


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


CPU_BATCH_TOKENS = 1024
"""Token budget per forward pass of a checkpoint served on a CPU (``ServerConfig.batch_tokens``)."""


def serving_batch_tokens(model: str, config: ServerConfig) -> int | None:
    """The forward-pass token budget :func:`serve` gives ``model``: ``config.batch_tokens`` when set, else
    :data:`CPU_BATCH_TOKENS` for a checkpoint on a machine without CUDA, else None (the scorer's default).

    On a CPU the matrix work per token is about the same at any batch size, so what a batch can share
    is the per-call overhead (Python, masks, one tokenizer call). One large pass over traces of mixed
    lengths costs more per trace than scoring them one at a time (padding, an attention mask over it,
    activations that outgrow the cache: 1.6-1.9x for the random PRMs of bench/bench_serving.py); a budget of
    1024 tokens keeps each pass to a few traces of similar length and does share the overhead.
    """
    from prmkit.scoring import scorer_form

    if scorer_form(model) != "checkpoint":
        return None  # a budget of forward passes means nothing to the oracle, a server or stored labels
    if config.batch_tokens is not None:
        return config.batch_tokens
    import torch

    return None if torch.cuda.is_available() else CPU_BATCH_TOKENS


def uvicorn_config(app: FastAPI, config: ServerConfig, **options: Any) -> Any:
    """The ``uvicorn.Config`` ``prmkit serve`` runs ``app`` with: its host and port, and the bounds on
    what one client's connections may hold (``prmkit.core.http_limits``)."""
    return bounded_config(
        app,
        host=config.host,
        port=config.port,
        keep_alive_s=config.keep_alive_s,
        header_timeout_s=config.header_timeout_s,
        connections_per_client=config.connections_per_client,
        trusted_proxies=config.trusted_proxies,
        **options,
    )


def serve(model: str, config: ServerConfig | None = None) -> None:
    """Load ``model`` (any scorer spec: ``prmkit.scoring.SCORER_HELP``) and serve it until stopped."""
    import uvicorn

    from prmkit.scoring import load_scorer

    config = config or ServerConfig()
    scorer = load_scorer(model, load=config.load, batch_tokens=serving_batch_tokens(model, config))
    uvicorn.Server(uvicorn_config(create_app(scorer, config), config, log_level="info")).run()

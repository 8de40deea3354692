"""The reward server: any StepScorer (a PRM checkpoint, an ORM, the world's oracle) behind HTTP.

Endpoints (OpenAPI page at ``/docs``):

- ``POST /score``      prmkit's own: per-step scores and the aggregate for a batch of traces
- ``POST /get_reward`` OpenRLHF's remote reward shape: ``{query, prompts, labels}`` -> ``{rewards, scores, extra_logs}``
- ``POST /pooling``    vLLM's (``serving.pooling``): STEP pooling on the request's tokens, one row per step tag
- ``POST /verify``     the deployment gate (``serving.verify``): accept, flag at the first doubtful step, or
  resample through a policy endpoint; 404 unless the server was started with a gate (``--gate-threshold``)
- ``GET /health`` (with ``max_steps_per_trace``), ``GET /metrics`` (Prometheus text)

``/get_reward`` is a reward, so it always answers a number per query: an empty batch gets empty lists,
and an over-long response is paid by the unfinished rule and counted instead of refused (``/score``, a
scoring API, keeps its 422 for an explicit over-long trace).

All scoring goes through one :class:`~prmkit.serving.batching.DynamicBatcher`, so concurrent requests
share forward passes and a full queue answers 503 with ``Retry-After`` instead of growing without bound.
The cost of a request is bounded before any work: :mod:`~prmkit.serving.guard` checks the body (size,
strict JSON, API key), then every limit that needs no tokenizer (traces, steps, characters per step
and per trace, queue cost) is checked by :mod:`~prmkit.serving.limits`. Each answers with a message
naming the place, the limit and the option that sets it (docs/serving.md lists them).

This module builds the app and runs it; the endpoints themselves are :mod:`~prmkit.serving.routes` and
:mod:`~prmkit.serving.verify`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from prmkit.core.http_limits import bounded_config
from prmkit.core.protocols import StepScorer
from prmkit.core.steps import StepFormat
from prmkit.serving.batching import DynamicBatcher, QueueFull
from prmkit.serving.config import ServerConfig
from prmkit.serving.gate import build_gate
from prmkit.serving.guard import Guard
from prmkit.serving.metrics import Metrics
from prmkit.serving.pooling import PoolingError, PoolingScorer, step_pooling
from prmkit.serving.routes import ServerState, router
from prmkit.serving.verify import router as verify_router


def create_app(scorer: StepScorer, config: ServerConfig | None = None) -> FastAPI:
    """A FastAPI app serving ``scorer``; run it with uvicorn (see :func:`serve`).

    The endpoints are the routers of :mod:`~prmkit.serving.routes` and :mod:`~prmkit.serving.verify`;
    this only builds the state they read from ``app.state.server``, the guard before them and the 503
    answer of a full queue, so one process can hold several apps, each with its own scorer, queue and
    metrics.
    """
    config = config or ServerConfig()
    server = _server_state(scorer, config)
    app = FastAPI(title="prmkit reward server", version="1", lifespan=_lifespan)
    app.state.server = server
    app.state.batcher = server.batcher  # the two a caller of create_app reads (tests, benchmarks)
    app.state.config = config
    # The guard labels requests by route template, so it gets the routes themselves: FastAPI includes a
    # router as one entry of app.router.routes, which has no path of its own (every request: <other>).
    routes = [*app.router.routes, *router.routes, *verify_router.routes]  # /docs first, as FastAPI matches
    app.add_middleware(Guard, config=config, metrics=server.metrics, routes=routes)
    app.add_exception_handler(QueueFull, _busy)
    app.include_router(router)
    app.include_router(verify_router)
    return app


def _server_state(scorer: StepScorer, config: ServerConfig) -> ServerState:
    """What the endpoints need from ``scorer``, read once: STEP pooling where the scorer has step-tag
    classes (else why not, so every other endpoint still works), the batcher every request shares, and
    the name, threshold and step tag the answers report, and the gate of ``/verify`` (its monitor file
    read now, so a bad one stops the server before it listens)."""
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
    stored = getattr(scorer, "threshold", None)
    template = getattr(getattr(scorer, "convention", None), "template", None)
    return ServerState(
        config=config,
        batcher=batcher,
        metrics=metrics,
        pooler=pooler,
        not_pooled=not_pooled,
        model_name=getattr(scorer, "name", "prmkit"),
        threshold=stored if isinstance(stored, float) else None,
        step_tag=config.step_tag or getattr(template, "tag", None) or "<extra_0>",
        gate=build_gate(config.gate, StepFormat(step_separator=config.split.step_separator)),
    )


@contextlib.asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """The batcher's worker runs exactly while the app serves, so a stopped server leaves no task behind;
    the tokenizing threads and the gate's policy threads end with it."""
    server = app.state.server
    await server.batcher.start()
    yield
    await server.batcher.stop()
    server.cpu_pool.shutdown(wait=False, cancel_futures=True)
    if server.gate is not None:
        server.gate.close()


async def _busy(_: Request, err: QueueFull) -> JSONResponse:
    """A full queue is a 503 with ``Retry-After``, so a client backs off instead of the queue growing."""
    return JSONResponse({"detail": str(err)}, status_code=503, headers={"Retry-After": str(err.retry_after)})


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
        body_timeout_s=config.body_timeout_s,
        min_body_rate=config.min_body_rate,
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

"""A StepScorer that asks a prmkit reward server over HTTP (scorer form ``http(s)://HOST:PORT``), so
search and RL code need not know where the model runs. Sync (:meth:`RemoteScorer.score`) for search, async (:meth:`RemoteScorer.ascore`) for
TRL's async reward functions. 503 (server busy) is retried after its ``Retry-After``; other 4xx errors
are raised with the server's message, because retrying a malformed request cannot help. With
``skip_refused`` (``prmkit score``'s default) a refused chunk is halved until the traces the server
refuses stand alone: each is left unscored and listed in :attr:`RemoteScorer.failures`, the rest scored.

The API key of a server started with ``--api-key`` is read from ``PRMKIT_API_KEY``, the variable
``prmkit serve`` itself reads, so every command that takes a scorer (``score``, ``bon``, ``vote``,
``beam``, ``audit``, ``eval ...``) can reach it without a flag of its own.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Sequence
from typing import Any

import httpx

from prmkit.core.model import Trace
from prmkit.core.render import step_inputs


class RemoteScoringError(OSError):
    """The server refused the request (4xx) or stayed busy/unreachable through every retry.

    An ``OSError`` like any other failed read, so every command reports it in one line (exit 2)."""


class RefusedScoringError(RemoteScoringError):
    """The server refused these traces (a 4xx other than 401: too many steps, too large): another
    request without them can succeed."""


CHUNK_TRACES = 256
"""Most traces in one request: half ``prmkit serve``'s default ``--max-traces-per-request`` (512)."""
CHUNK_BYTES = 1_000_000
"""Most JSON in one request (a single larger trace goes alone): a quarter of the default body limit."""
IN_FLIGHT = 4
"""Chunks of one :meth:`RemoteScorer.ascore` call in flight at once."""
DEFAULT_MAX_STEPS = 256
"""``prmkit serve``'s default ``--max-steps-per-trace``: assumed of a server whose ``/health`` omits it."""


def _chunks(traces: Sequence[Trace]) -> list[dict[str, Any]]:
    """Request bodies for ``traces`` in order, each within :data:`CHUNK_TRACES` and :data:`CHUNK_BYTES`,
    so any number of traces is scored within the server's default limits (one body of all of them got a
    413 past 512 traces)."""
    bodies: list[dict[str, Any]] = []
    items: list[dict[str, Any]] = []
    size = 0
    for t in traces:
        item = {"problem": t.problem.text, "steps": step_inputs(t.steps)}
        cost = len(json.dumps(item))
        if items and (len(items) >= CHUNK_TRACES or size + cost > CHUNK_BYTES):
            bodies.append({"traces": items})
            items, size = [], 0
        items.append(item)
        size += cost
    if items:
        bodies.append({"traces": items})
    return bodies


API_KEY_ENV = "PRMKIT_API_KEY"
"""Where the client reads the key of a server started with ``--api-key`` (the server reads it there too)."""


def _rows(response: httpx.Response) -> list[list[float]]:
    if response.status_code == 401:
        raise RemoteScoringError(
            f"{response.request.url}: HTTP 401: the server needs its API key; set {API_KEY_ENV} to the key "
            f"it was started with ({response.text[:200]})"
        )
    if response.status_code >= 400:
        raise RefusedScoringError(
            f"{response.request.url}: HTTP {response.status_code}: {response.text[:500]}"
        )
    return [r["step_scores"] for r in response.json()["results"]]


class RemoteScorer:
    """``StepScorer`` backed by ``POST {url}/score`` of a prmkit reward server (``api_key``: default
    ``$PRMKIT_API_KEY``)."""

    def __init__(
        self,
        url: str,
        api_key: str | None = None,
        timeout: float = 180.0,
        retries: int = 5,
        skip_refused: bool = False,
    ):
        api_key = api_key if api_key is not None else os.environ.get(API_KEY_ENV) or None
        self.skip_refused = skip_refused
        self.failures: list[dict[str, str]] = []
        """The traces :meth:`score` left unscored because the server refused them: id and reason."""
        self.url = url.rstrip("/")
        self.name = f"remote:{self.url}"
        self.timeout = timeout
        self.retries = retries
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def _health(self) -> dict[str, Any]:
        """``GET /health``'s answer, asked once; empty where the server cannot be asked or says nothing."""
        if not hasattr(self, "_health_reply"):
            try:
                reply = httpx.get(f"{self.url}/health", headers=self.headers, timeout=min(self.timeout, 10.0))
                found = reply.json() if reply.status_code == 200 else {}
            except (httpx.HTTPError, ValueError):
                found = {}
            self._health_reply = found if isinstance(found, dict) else {}
        return self._health_reply

    @property
    def threshold(self) -> float | None:
        """The served checkpoint's stored threshold (``GET /health``), read once; None where the server
        reports none or cannot be asked (the caller then falls back to 0.5 and says so)."""
        value = self._health().get("threshold")
        return float(value) if isinstance(value, int | float) else None

    @property
    def max_steps_per_trace(self) -> int:
        """How many steps a trace may have on this server (``GET /health``), read once; 256 (the
        server's default) where it does not say. An RL reward pays a longer response by its unfinished
        rule instead of sending it to a certain 422."""
        value = self._health().get("max_steps_per_trace")
        return value if isinstance(value, int) and value > 0 else DEFAULT_MAX_STEPS

    def _wait(self, result: httpx.Response | httpx.TransportError, attempt: int) -> float:
        if (
            isinstance(result, httpx.Response)
            and result.headers.get("retry-after", "").replace(".", "", 1).isdigit()
        ):
            return float(result.headers["retry-after"])
        return min(8.0, 0.25 * 2**attempt)

    def _settle(self, result: httpx.Response | httpx.TransportError) -> tuple[list[list[float]] | None, str]:
        """The rows of an answer, or (None, why) for a try worth repeating (busy, unreachable); a refusal
        (other 4xx) raises, since retrying a malformed request cannot help."""
        if isinstance(result, httpx.TransportError):
            return None, f"{type(result).__name__}: {result}"
        if result.status_code == 503:
            return None, result.text[:200]
        return _rows(result), ""

    def _gave_up(self, last: str) -> RemoteScoringError:
        return RemoteScoringError(f"{self.url}/score: gave up after {self.retries + 1} tries: {last}")

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        """Step scores of ``traces``, asked in chunks within the server's limits (one after another);
        with ``skip_refused`` a trace the server refuses gets no scores (an empty row) and is listed."""
        rows: list[list[float]] = []
        with httpx.Client(timeout=self.timeout, headers=self.headers) as client:
            for body in _chunks(traces):
                rows += self._scored(
                    client, body["traces"], traces[len(rows) : len(rows) + len(body["traces"])]
                )
        return rows

    def _scored(
        self, client: httpx.Client, items: list[dict[str, Any]], traces: Sequence[Trace]
    ) -> list[list[float]]:
        """The rows of one chunk; a refused chunk halved until each refused trace stands alone."""
        try:
            return self._post(client, {"traces": items})
        except RefusedScoringError as err:
            if not self.skip_refused:
                raise
            if len(items) == 1:
                self.failures.append({"trace": traces[0].id, "reason": str(err)})
                return [[]]
            mid = len(items) // 2
            return self._scored(client, items[:mid], traces[:mid]) + self._scored(
                client, items[mid:], traces[mid:]
            )

    def _post(self, client: httpx.Client, body: dict[str, Any]) -> list[list[float]]:
        last = ""
        for attempt in range(self.retries + 1):
            try:
                result: httpx.Response | httpx.TransportError = client.post(f"{self.url}/score", json=body)
            except httpx.TransportError as err:
                result = err
            rows, last = self._settle(result)
            if rows is not None:
                return rows
            if attempt < self.retries:
                time.sleep(self._wait(result, attempt))
        raise self._gave_up(last)

    async def ascore(
        self, traces: Sequence[Trace], client: httpx.AsyncClient | None = None
    ) -> list[list[float]]:
        """Like :meth:`score`, without blocking the event loop, with :data:`IN_FLIGHT` chunks at once
        (pass a shared client to reuse connections)."""
        bodies = _chunks(traces)
        if not bodies:
            return []
        own = client is None
        client = client or httpx.AsyncClient(timeout=self.timeout, headers=self.headers)
        slots = asyncio.Semaphore(IN_FLIGHT)

        async def one(body: dict[str, Any]) -> list[list[float]]:
            async with slots:
                return await self._apost(client, body)

        try:
            parts = await asyncio.gather(*(one(b) for b in bodies))
        finally:
            if own:
                await client.aclose()
        return [row for part in parts for row in part]

    async def _apost(self, client: httpx.AsyncClient, body: dict[str, Any]) -> list[list[float]]:
        last = ""
        for attempt in range(self.retries + 1):
            try:
                result: httpx.Response | httpx.TransportError = await client.post(
                    f"{self.url}/score", json=body, headers=self.headers
                )
            except httpx.TransportError as err:
                result = err
            rows, last = self._settle(result)
            if rows is not None:
                return rows
            if attempt < self.retries:
                await asyncio.sleep(self._wait(result, attempt))
        raise self._gave_up(last)


def load_remote(
    spec: str, api_key: str | None = None, timeout: float = 180.0, retries: int = 5
) -> RemoteScorer:
    """The ``http(s)://HOST:PORT`` scorer form: a client of that reward server (``prmkit serve``)."""
    if not httpx.URL(spec).host:
        from prmkit.core.errors import InputError, Issue

        raise InputError(
            [Issue(spec, None, "(scorer)", "a server URL such as http://127.0.0.1:8000", "no host", "url")],
            skippable=False,
        )
    return RemoteScorer(spec, api_key=api_key, timeout=timeout, retries=retries)

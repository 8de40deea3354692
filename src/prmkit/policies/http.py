"""A small, careful client for OpenAI-compatible servers (vLLM, SGLang, prmkit's own policy server).

Why not the ``openai`` package: prmkit needs only two POST routes, and it needs control of the parts that
bite in long labelling jobs: a concurrency cap shared by every thread, retries with exponential backoff
on connection errors, 429 and 5xx (never on 4xx, which will not heal), a timeout per request, a bound on
the size of an answer, several servers as one pool, and errors that say which URL failed and why.

Every failure is an :class:`EndpointError`, an :class:`~prmkit.core.errors.ItemError`: a labelling job
records it against the one item that caused it and goes on (:class:`RefusedError` for a request the
server will not serve, e.g. a prompt past its context length; :class:`BadAnswerError` for an answer that
is not one). A server that is down fails every item, and the job stops after a run of failures.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import threading
import time
from collections.abc import Sequence
from typing import Any

import httpx

from prmkit.core.errors import ItemError

RETRY_STATUS = {408, 429, 500, 502, 503, 504}
MAX_RESPONSE_BYTES = 64 * 2**20
"""The default bound on one answer's body: 1,024 rollouts of 4,096 tokens fit in a tenth of it; a server
that sends more is misbehaving, and reading it whole once cost 840 MB of memory."""


class EndpointError(ItemError):
    """The endpoint could not answer this request: unreachable after retries, refused, or no answer."""


class RefusedError(EndpointError):
    """The server refused the request with a 4xx that retrying will not heal (e.g. context length)."""


class BadAnswerError(EndpointError):
    """The server answered, but not with an answer: not JSON, past the size bound, or the wrong shape."""


def endpoint_urls(urls: str | Sequence[str]) -> list[str]:
    """Base URLs from one URL, a comma-separated list or a sequence, without a trailing ``/v1``."""
    parts = urls.split(",") if isinstance(urls, str) else list(urls)
    out = []
    for part in parts:
        base = part.strip().rstrip("/")
        if base:
            out.append(base[: -len("/v1")] if base.endswith("/v1") else base)
    if not out:
        raise ValueError(f"expected at least one endpoint URL, found {urls!r}")
    return out


class OpenAIClient:
    """POSTs JSON to ``{base_url}/v1/...`` with a concurrency limit, retries, timeouts and a size bound.

    ``base_url`` may end in ``/v1`` or not; several URLs (a list, or comma-separated) are one pool, each
    request (and each retry) going to the next in turn, so a retried request moves off a failing server.
    The concurrency cap is per server. The API key is read from the environment variable named by
    ``api_key_env`` (never passed on a command line, where ``ps`` would show it).
    """

    def __init__(
        self,
        base_url: str | Sequence[str],
        *,
        concurrency: int = 8,
        retries: int = 3,
        timeout: float = 60.0,
        backoff: float = 0.5,
        api_key_env: str | None = "OPENAI_API_KEY",
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ):
        self.base_urls = endpoint_urls(base_url)
        self.base_url = self.base_urls[0]
        self.retries, self.backoff, self.timeout = retries, backoff, timeout
        self.max_response_bytes = max_response_bytes
        self._turn = itertools.count()
        self._slots = threading.BoundedSemaphore(max(1, concurrency) * len(self.base_urls))
        self._stopped = threading.Event()
        headers = {}
        key = os.environ.get(api_key_env) if api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._headers = headers
        self._tls = httpx.create_ssl_context()  # loaded once, shared by every thread's client (~40 ms each)
        self._local = threading.local()
        self._clients: list[httpx.Client] = []
        self._clients_lock = threading.Lock()

    def post(self, route: str, payload: dict[str, Any]) -> dict[str, Any]:
        """POST ``payload`` to ``route`` (e.g. ``/v1/completions``) and return the decoded JSON body."""
        last, url, first = "", self.base_url + route, next(self._turn)
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1) * (1 + 0.25 * random.random()))
            url = self.base_urls[(first + attempt) % len(self.base_urls)] + route  # a retry: the next server
            if self._stopped.is_set():
                raise EndpointError(f"{url}: not sent: the job is stopping ({last or 'stop() was called'})")
            try:
                with self._slots, self._http.stream("POST", url, json=payload) as resp:
                    if resp.status_code in RETRY_STATUS:
                        last = f"HTTP {resp.status_code}: {self._text(resp, 200)}"
                        continue
                    if resp.status_code >= 400:
                        raise RefusedError(
                            f"{url} refused the request: HTTP {resp.status_code}: {self._text(resp, 500)}"
                        )
                    body = self._body(resp, url)
            except httpx.TimeoutException as err:
                last = f"timed out ({type(err).__name__})"
                continue
            except httpx.TransportError as err:
                last = f"{type(err).__name__}: {err}"
                continue
            try:
                return _json_object(body)
            except ValueError as err:
                raise BadAnswerError(f"{url} answered with {err}: {body[:200]!r}") from None
        where = url if len(self.base_urls) == 1 else f"{len(self.base_urls)} servers (last {url})"
        raise EndpointError(
            f"could not get an answer from {where} after {self.retries + 1} tries ({last}). "
            "Is the server running, and is the URL right (e.g. http://localhost:8000)?"
        )

    @property
    def _http(self) -> httpx.Client:
        """This thread's client. One pool shared by hundreds of threads cost ~0.9 ms of client CPU per
        request at concurrency 64 (httpcore scans every connection on each request); a thread's own
        keeps its few keep-alive connections, one per server it talks to."""
        client = getattr(self._local, "http", None)
        if client is None:
            limits = httpx.Limits(
                max_connections=len(self.base_urls), max_keepalive_connections=len(self.base_urls)
            )
            client = httpx.Client(
                timeout=self.timeout, headers=self._headers, limits=limits, verify=self._tls
            )
            self._local.http = client
            with self._clients_lock:
                self._clients.append(client)
        return client

    def _body(self, resp: httpx.Response, url: str) -> bytes:
        """The body, read within the size bound and the request's timeout (a trickle is a timeout too)."""
        declared = resp.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_response_bytes:
            raise BadAnswerError(
                f"{url} answered with {int(declared):,} bytes, over the bound of {self.max_response_bytes:,}"
            )
        deadline = time.monotonic() + self.timeout
        chunks, size = [], 0
        for chunk in resp.iter_bytes():
            size += len(chunk)
            if size > self.max_response_bytes:
                raise BadAnswerError(
                    f"{url} answered with over {self.max_response_bytes:,} bytes; stopped reading"
                )
            if time.monotonic() > deadline:
                raise httpx.ReadTimeout(f"the answer took over {self.timeout:g} s to arrive")
            chunks.append(chunk)
        return b"".join(chunks)

    def _text(self, resp: httpx.Response, limit: int) -> str:
        """The start of an error answer (never the whole of a huge one)."""
        head = b""
        for chunk in resp.iter_bytes():
            head += chunk
            if len(head) >= limit:
                break
        return head[:limit].decode("utf-8", errors="replace")

    def get(self, route: str) -> dict[str, Any]:
        """GET ``route`` once (health checks, model lists); connection errors become :class:`EndpointError`."""
        url = self.base_url + route
        try:
            resp = self._http.get(url)
            resp.raise_for_status()
            return resp.json()
        except (httpx.HTTPError, ValueError) as err:
            raise EndpointError(f"{url}: {type(err).__name__}: {err}") from err

    def stop(self) -> None:
        """No new request and no retry from now on (requests already on the wire end at their timeout):
        a job that fails fast stops within one request timeout, not after every unit's retries."""
        self._stopped.set()

    def close(self) -> None:
        self._stopped.set()
        with self._clients_lock:
            for client in self._clients:
                client.close()
            self._clients.clear()


def _json_object(body: bytes) -> dict[str, Any]:
    """The JSON object in ``body``; ValueError (saying what was found instead) otherwise."""
    try:
        doc = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ValueError("non-JSON") from None
    if not isinstance(doc, dict):
        raise ValueError(f"JSON {type(doc).__name__}, not an object")
    return doc

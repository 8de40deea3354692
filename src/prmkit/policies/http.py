"""A small, careful client for OpenAI-compatible servers (vLLM, SGLang, prmkit's own policy server).

Why not the ``openai`` package: prmkit needs only two POST routes, and it needs control of the parts that
bite in long labelling jobs: a concurrency cap shared by every thread, retries with exponential backoff
on connection errors, 429 and 5xx (never on 4xx, which will not heal), the wait a server asks for in
``Retry-After``, a timeout per request, a bound on the size of an answer read as it streams, several
servers as one pool, and errors that say which URL failed and why.

Every failure is an :class:`EndpointError`, an :class:`~prmkit.core.errors.ItemError`: a labelling job
records it against the one item that caused it and goes on (:class:`RefusedError` for a request the
server will not serve, e.g. a prompt past its context length; :class:`BadAnswerError` for an answer that
is not one). A server that is down fails every item, and the job stops after a run of failures; one
that accepts and never answers is a :class:`SilentEndpointError`, which stops the job at once.
"""

from __future__ import annotations

import email.utils
import itertools
import json
import math
import os
import random
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import httpx

from prmkit.core.errors import ItemError

RETRY_STATUS = {408, 429, 500, 502, 503, 504}
MAX_RESPONSE_BYTES = 64 * 2**20
"""The bound on one answer's body whatever was asked; a request that says what it asked for is held to
the tighter :func:`answer_bound`. Reading a 63 MB answer whole took the client to 2.7 GB (issue 66)."""
TOKEN_BYTES = 256
"""Bytes one generated token may take in an answer: a long token (a run of spaces or dashes) with every
character JSON-escaped as ``\\uXXXX`` fits, with room to spare; real text takes 3 to 5."""
ANSWER_OVERHEAD = 64 * 2**10
"""Bytes of an answer that are not its choices' tokens (ids, usage, framing), plus 4 KiB per choice."""
PACED = {429, 503}
"""Statuses whose ``Retry-After`` is the server pacing the client, not failing: a try it paces is not one
of ``retries``; the wait must fit in the request's retry budget."""
SILENT_TIMEOUTS = 2
"""Timeouts in a row, with nothing heard from any server for a whole request timeout, that make an
endpoint silent (see :class:`SilentEndpointError`)."""


class EndpointError(ItemError):
    """The endpoint could not answer this request: unreachable after retries, refused, or no answer."""


class RefusedError(EndpointError):
    """The server refused the request with a 4xx that retrying will not heal (e.g. context length)."""


class BadAnswerError(EndpointError):
    """The server answered, but not with an answer: not JSON, past the size bound, or the wrong shape."""


class SilentEndpointError(EndpointError):
    """No server of the pool has answered anything (not even an error) for a whole request timeout, and
    requests keep timing out: the server accepts and never answers (hung, or overloaded past the
    timeout). Every other item would wait ``(retries + 1)`` timeouts to fail the same way (a job at
    concurrency 1 once took 8.6 h to say so), so a labelling job stops at this one, keeping its work."""


def answer_bound(n: int, max_tokens: int, top_logprobs: int = 0) -> int:
    """The most bytes an honest answer of ``n`` choices of at most ``max_tokens`` tokens takes (each
    token ``1 + top_logprobs`` entries when logprobs are asked), never over :data:`MAX_RESPONSE_BYTES`."""
    per_choice = max_tokens * TOKEN_BYTES * (1 + top_logprobs) + 4096
    return min(MAX_RESPONSE_BYTES, ANSWER_OVERHEAD + max(1, n) * per_choice)


def retry_after_s(value: str | None) -> float | None:
    """The seconds a ``Retry-After`` header asks to wait, in either form RFC 9110 allows (delay-seconds
    or an HTTP-date); None when there is none or it cannot be read (the usual backoff then applies)."""
    if not value or not value.strip():
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


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
        self._why = ""  # why the client stopped, for the requests it then refuses to send
        self._silence = _Silence(timeout)
        headers = {}
        key = os.environ.get(api_key_env) if api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._headers = headers
        self._tls = httpx.create_ssl_context()  # loaded once, shared by every thread's client (~40 ms each)
        self._local = threading.local()
        self._clients: list[httpx.Client] = []
        self._clients_lock = threading.Lock()

    def post(self, route: str, payload: dict[str, Any], max_bytes: int | None = None) -> dict[str, Any]:
        """POST ``payload`` to ``route`` (e.g. ``/v1/completions``) and return the decoded JSON body, read
        within ``max_bytes`` (:func:`answer_bound` of what was asked; default :data:`MAX_RESPONSE_BYTES`).

        A 429 or 503 with ``Retry-After`` is waited out as asked (with up to 10 % jitter, so paced
        threads do not all come back at once) and does not use up a retry, within the retry budget:
        ``(retries + 1) x timeout`` of waiting per request, what its tries may take anyway. A server that
        asks for longer fails the request at once, saying so, instead of sleeping past the budget."""
        limit = min(max_bytes or self.max_response_bytes, self.max_response_bytes)
        last, url, first = "", self.base_url + route, next(self._turn)
        budget = (self.retries + 1) * self.timeout
        tries, waited, paced = 0, 0.0, None
        while tries <= self.retries:
            if paced is not None:  # never under the backoff: "Retry-After: 0" must not spin
                wait = max(paced, self.backoff) * (1 + 0.1 * random.random())
            elif tries:
                wait = self.backoff * 2 ** (tries - 1) * (1 + 0.25 * random.random())
            else:
                wait = 0.0
            time.sleep(wait)
            waited += wait
            url = self.base_urls[(first + tries) % len(self.base_urls)] + route  # a retry: the next server
            if self._stopped.is_set():
                raise EndpointError(
                    f"{url}: not sent: the job is stopping ({self._why or last or 'stop() was called'})"
                )
            paced = None
            self._silence.sending()
            try:
                with self._slots, self._http.stream("POST", url, json=payload) as resp:
                    self._silence.answered()
                    if resp.status_code in RETRY_STATUS:
                        last = f"HTTP {resp.status_code}: {self._text(resp, 200)}"
                        paced = self._paced(resp, url, budget - waited, last)
                        tries += paced is None
                        continue
                    if resp.status_code >= 400:
                        raise RefusedError(
                            f"{url} refused the request: HTTP {resp.status_code}: {self._text(resp, 500)}"
                        )
                    body = self._body(resp, url, limit)
            except httpx.TimeoutException as err:
                last = f"timed out ({type(err).__name__})"
                self._timed_out(url)
                tries += 1
                continue
            except httpx.TransportError as err:
                last = f"{type(err).__name__}: {err}"
                tries += 1
                continue
            try:
                return _json_object(body)
            except ValueError as err:
                raise BadAnswerError(f"{url} answered with {err}: {bytes(body[:200])!r}") from None
        where = url if len(self.base_urls) == 1 else f"{len(self.base_urls)} servers (last {url})"
        raise EndpointError(
            f"could not get an answer from {where} after {self.retries + 1} tries ({last}). "
            "Is the server running, and is the URL right (e.g. http://localhost:8000)?"
        )

    def _paced(self, resp: httpx.Response, url: str, left: float, last: str) -> float | None:
        """The wait a 429/503's ``Retry-After`` asks for (None: no header, an ordinary retry); a wait past
        what is ``left`` of the retry budget fails the request now, never a sleep past the budget."""
        wait = retry_after_s(resp.headers.get("retry-after")) if resp.status_code in PACED else None
        if wait is not None and wait * 1.1 > left:
            raise EndpointError(
                f"{url}: {last.rstrip(': ')}; it asks to wait {wait:.0f} s (Retry-After), past the "
                f"{max(left, 0):.0f} s left of this request's retry budget ((retries + 1) x the request "
                "timeout); not waiting. Lower the request rate (--concurrency) or raise --request-timeout-s"
            )
        return wait

    def _timed_out(self, url: str) -> None:
        """Count a timeout; raise when the pool has gone silent. The client is not stopped here (a
        long-lived one, e.g. a serving gate's, must recover with its server): a job stops it."""
        silent_s = self._silence.timed_out()
        if silent_s is None:
            return
        where = url if len(self.base_urls) == 1 else f"{len(self.base_urls)} servers (last {url})"
        self._why = (
            f"the endpoint is silent: {where} accepted requests and answered none for {silent_s:.0f} s "
            f"(requests time out after {self.timeout:g} s, --request-timeout-s)"
        )
        raise SilentEndpointError(
            f"{self._why}. Is the server hung or overloaded? If it is only slow, raise --request-timeout-s"
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

    def _body(self, resp: httpx.Response, url: str, limit: int) -> bytearray:
        """The body, read as it streams within ``limit`` bytes and the request's timeout (a trickle is a
        timeout too): past the bound, reading stops and only this request fails."""
        declared = resp.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise BadAnswerError(f"{url} answered with {int(declared):,} bytes, over the bound of {limit:,}")
        deadline = time.monotonic() + self.timeout
        body = bytearray()
        for chunk in resp.iter_bytes():
            if len(body) + len(chunk) > limit:
                raise BadAnswerError(f"{url} answered with over {limit:,} bytes; stopped reading")
            if time.monotonic() > deadline:
                raise httpx.ReadTimeout(f"the answer took over {self.timeout:g} s to arrive")
            body += chunk
        return body

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


class _Silence:
    """When the last answer of any kind came from the pool, and how many timeouts came in a row since.

    Silent means :data:`SILENT_TIMEOUTS` timeouts in a row and nothing heard for a whole request timeout:
    at concurrency 64 the first wave of timeouts says it (one timeout after the start), at concurrency 1
    the first retry's (two timeouts and a backoff); a server that answers anything, even an error, is
    not silent."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        self.heard: float | None = None
        self.in_a_row = 0
        self.lock = threading.Lock()

    def sending(self) -> None:
        with self.lock:
            if self.heard is None:  # the clock starts with the first request, not the client
                self.heard = time.monotonic()

    def answered(self) -> None:
        with self.lock:
            self.heard, self.in_a_row = time.monotonic(), 0

    def timed_out(self) -> float | None:
        """Seconds of silence when the pool is silent, else None."""
        with self.lock:
            self.in_a_row += 1
            quiet = time.monotonic() - (self.heard or time.monotonic())
            return quiet if self.in_a_row >= SILENT_TIMEOUTS and quiet >= self.timeout else None


def _json_object(body: bytes | bytearray) -> dict[str, Any]:
    """The JSON object in ``body``; ValueError (saying what was found instead) otherwise."""
    try:
        doc = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ValueError("non-JSON") from None
    if not isinstance(doc, dict):
        raise ValueError(f"JSON {type(doc).__name__}, not an object")
    return doc

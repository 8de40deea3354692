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

The wire is the standard library's ``http.client``: one keep-alive connection per thread and server,
reopened when the server has closed it while idle. httpx, the wire before, took several times its client
CPU per request (issue 65: ``bench/bench_rollouts.py`` runs both side by side; docs/labeling.md,
Throughput, has the numbers).
"""

from __future__ import annotations

import base64
import email.utils
import http.client
import itertools
import json
import math
import os
import random
import select
import ssl
import threading
import time
import urllib.request
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote, urlsplit

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
TRANSPORT_ERRORS = (OSError, http.client.HTTPException)
"""What a request that got no usable answer raises on the wire (refused or reset connections, a broken
status line or headers): retried. A timeout (``TimeoutError``, an ``OSError``) is caught before these."""
READ_CHUNK = 2**16


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
    ``api_key_env`` (never passed on a command line, where ``ps`` would show it). ``HTTP(S)_PROXY`` and
    ``NO_PROXY`` are honoured as ``urllib`` reads them.
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
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "prmkit"}
        key = os.environ.get(api_key_env) if api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._servers = [_Server(url, headers) for url in self.base_urls]
        self._tls: ssl.SSLContext | None = None  # loaded once, on the first https connection (~40 ms)
        self._local = threading.local()
        self._conns: list[http.client.HTTPConnection] = []
        self._conns_lock = threading.Lock()

    def post(self, route: str, payload: dict[str, Any], max_bytes: int | None = None) -> dict[str, Any]:
        """POST ``payload`` to ``route`` (e.g. ``/v1/completions``) and return the decoded JSON body, read
        within ``max_bytes`` (:func:`answer_bound` of what was asked; default :data:`MAX_RESPONSE_BYTES`).

        A 429 or 503 with ``Retry-After`` is waited out as asked (with up to 10 % jitter, so paced
        threads do not all come back at once) and does not use up a retry, within the retry budget:
        ``(retries + 1) x timeout`` of waiting per request, what its tries may take anyway. A server that
        asks for longer fails the request at once, saying so, instead of sleeping past the budget."""
        limit = min(max_bytes or self.max_response_bytes, self.max_response_bytes)
        data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
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
            if wait:
                time.sleep(wait)
                waited += wait
            server = (first + tries) % len(self.base_urls)  # a retry: the next server
            url = self.base_urls[server] + route
            if self._stopped.is_set():
                raise EndpointError(
                    f"{url}: not sent: the job is stopping ({self._why or last or 'stop() was called'})"
                )
            paced, done = None, False
            self._silence.sending()
            try:
                with self._slots:
                    resp = self._send(server, "POST", route, data)
                    self._silence.answered()
                    if resp.status in RETRY_STATUS:
                        last = f"HTTP {resp.status}: {self._text(resp, 200)}"
                        paced = self._paced(resp, url, budget - waited, last)
                        tries += paced is None
                        continue
                    if resp.status >= 400:
                        raise RefusedError(
                            f"{url} refused the request: HTTP {resp.status}: {self._text(resp, 500)}"
                        )
                    body = self._body(resp, url, limit)
                    done = True
            except TimeoutError:
                last = f"timed out after {self.timeout:g} s"
                self._timed_out(url)
                tries += 1
                continue
            except TRANSPORT_ERRORS as err:
                last = f"{type(err).__name__}: {err}"
                tries += 1
                continue
            finally:
                if not done:
                    self._drop(server)  # a connection with an unread or broken answer is not reused
            try:
                return _json_object(body)
            except ValueError as err:
                raise BadAnswerError(f"{url} answered with {err}: {body[:200]!r}") from None
        where = url if len(self.base_urls) == 1 else f"{len(self.base_urls)} servers (last {url})"
        raise EndpointError(
            f"could not get an answer from {where} after {self.retries + 1} tries ({last}). "
            "Is the server running, and is the URL right (e.g. http://localhost:8000)?"
        )

    def _paced(self, resp: http.client.HTTPResponse, url: str, left: float, last: str) -> float | None:
        """The wait a 429/503's ``Retry-After`` asks for (None: no header, an ordinary retry); a wait past
        what is ``left`` of the retry budget fails the request now, never a sleep past the budget."""
        wait = retry_after_s(resp.getheader("retry-after")) if resp.status in PACED else None
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

    def _send(self, server: int, method: str, route: str, data: bytes | None) -> http.client.HTTPResponse:
        """Send one request on this thread's connection to ``server`` and read the answer's head. One
        connection per thread and server: a pool shared by hundreds of threads cost ~0.9 ms of client
        CPU per request at concurrency 64 (httpcore scans every connection on each request)."""
        conns = self._local.__dict__.setdefault("conns", {})
        conn = conns.get(server)
        if conn is None:
            conn = conns[server] = self._connection(self._servers[server])
        elif conn.sock is not None and _readable(conn.sock):
            conn.close()  # the server closed it while idle (or wrote out of turn): a fresh one
        to = self._servers[server]
        conn.request(method, to.path + route, data, to.headers)
        return conn.getresponse()

    def _connection(self, server: _Server) -> http.client.HTTPConnection:
        if server.tls and self._tls is None:
            import httpx  # its context: certifi's roots, or SSL_CERT_FILE / SSL_CERT_DIR, as before

            self._tls = httpx.create_ssl_context()
        if server.tls:
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                *server.connect_to, timeout=self.timeout, context=self._tls
            )
        else:
            conn = http.client.HTTPConnection(*server.connect_to, timeout=self.timeout)
        if server.tunnel is not None:
            conn.set_tunnel(server.host, server.port, server.tunnel)
        with self._conns_lock:
            self._conns.append(conn)
        return conn

    def _drop(self, server: int) -> None:
        conn = self._local.__dict__.get("conns", {}).get(server)
        if conn is not None:
            conn.close()  # reopened on its next request

    def _body(self, resp: http.client.HTTPResponse, url: str, limit: int) -> bytes:
        """The body, read as it arrives within ``limit`` bytes and the request's timeout (a trickle is a
        timeout too): past the bound, reading stops and only this request fails."""
        if resp.length is not None and resp.length > limit:
            raise BadAnswerError(f"{url} answered with {resp.length:,} bytes, over the bound of {limit:,}")
        deadline = time.monotonic() + self.timeout
        chunk = resp.read1(READ_CHUNK)
        if resp.length == 0 and len(chunk) <= limit:  # all at once: the usual answer, read with its head
            resp.close()  # read to its end: the connection is free for the next request
            return chunk
        parts, size = [], 0
        while chunk:
            size += len(chunk)
            if size > limit:
                raise BadAnswerError(f"{url} answered with over {limit:,} bytes; stopped reading")
            parts.append(chunk)
            if resp.length == 0:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"the answer took over {self.timeout:g} s to arrive")
            chunk = resp.read1(READ_CHUNK)
        if resp.length:  # the connection ended before the Content-Length it announced
            raise http.client.IncompleteRead(b"".join(parts), resp.length)
        resp.close()
        return b"".join(parts)

    def _text(self, resp: http.client.HTTPResponse, limit: int) -> str:
        """The start of an error answer (never the whole of a huge one)."""
        head = b""
        while len(head) < limit and (chunk := resp.read1(limit - len(head))):
            head += chunk
        return head[:limit].decode("utf-8", errors="replace")

    def get(self, route: str) -> dict[str, Any]:
        """GET ``route`` once (health checks, model lists); connection errors become :class:`EndpointError`."""
        url, done = self.base_url + route, False
        try:
            resp = self._send(0, "GET", route, None)
            if resp.status >= 400:
                raise EndpointError(f"{url}: HTTP {resp.status}: {self._text(resp, 200)}")
            body = self._body(resp, url, self.max_response_bytes)
            done = True
            return _json_object(body)
        except (*TRANSPORT_ERRORS, ValueError) as err:
            raise EndpointError(f"{url}: {type(err).__name__}: {err}") from err
        finally:
            if not done:
                self._drop(0)

    def stop(self) -> None:
        """No new request and no retry from now on (requests already on the wire end at their timeout):
        a job that fails fast stops within one request timeout, not after every unit's retries."""
        self._stopped.set()

    def close(self) -> None:
        self._stopped.set()
        with self._conns_lock:
            for conn in self._conns:
                conn.close()
            self._conns.clear()


class _Server:
    """Where one base URL's requests go: its path prefix, the headers they carry, and the socket address
    to connect to (the server's, or the proxy's that ``HTTP(S)_PROXY`` names for it, with the proxy's
    credentials if it names some, tunnelled through for https)."""

    def __init__(self, base_url: str, headers: dict[str, str]):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EndpointError(
                f"{base_url!r} is not an http:// or https:// URL (e.g. http://localhost:8000)"
            )
        self.tls = parts.scheme == "https"
        self.host, self.port = parts.hostname, parts.port or (443 if self.tls else 80)
        self.path = parts.path
        self.headers, self.connect_to = headers, (self.host, self.port)
        self.tunnel: dict[str, str] | None = None  # the CONNECT request's headers, when tunnelled
        proxy = urllib.request.getproxies().get(parts.scheme)
        if proxy and not urllib.request.proxy_bypass(self.host):
            via = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
            self.connect_to = (via.hostname or "", via.port or 80)
            auth = {}
            if via.username:
                user = f"{unquote(via.username)}:{unquote(via.password or '')}"
                auth["Proxy-Authorization"] = "Basic " + base64.b64encode(user.encode()).decode()
            if self.tls:
                self.tunnel = auth  # CONNECT through the proxy, TLS to the server
            else:
                self.path = f"http://{parts.netloc}{parts.path}"  # a proxy takes the absolute URL
                self.headers = {**headers, **auth}


def _readable(sock) -> bool:
    """Whether an idle connection has something to read: the server closed it (or wrote out of turn)."""
    poll = select.poll()
    poll.register(sock, select.POLLIN)
    return bool(poll.poll(0))


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

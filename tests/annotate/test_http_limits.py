"""Issue 42, item 4: what one client's connections may cost ``prmkit annotate serve`` (the bounds of
``prmkit.core.http_limits``, set by ``Limits``), over real sockets on loopback.

Before the fix, uvicorn kept a connection that never sent a byte open for good and let one address hold
any number: 19,990 idle connections from one local client stayed open, and 200 more from a second process
made ``/health`` time out. Now connections past the per-client cap are answered 503 at once, an idle or
trickling one is closed when its request head is not whole within the header timeout, and an idle
keep-alive connection is closed after the keep-alive bound; other clients are answered meanwhile. The
bounds are set to about a second here so the test stays fast. 127.0.0.2 (loopback too) is a second client.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from prmkit.annotate import work
from prmkit.annotate.app import create_app
from prmkit.annotate.limits import Limits
from prmkit.annotate.store import Store

from .conftest import make_trace, serve_in_thread

CAP, IDLE = 4, 200
LIMITS = Limits(
    connections_per_client=CAP, header_timeout_s=1.0, keep_alive_s=0.5, body_timeout_s=1.0, min_body_rate=1000
)


@pytest.fixture
def server(tmp_path) -> Iterator[tuple[str, int]]:
    """(base URL, port) of the app served with LIMITS."""
    store = Store(f"sqlite:///{tmp_path / 'labels.db'}")
    work.load_items(store, [make_trace("t0", ["3 + 4 = 7.", "The answer is 7."])])
    with serve_in_thread(create_app(store, limits=LIMITS), LIMITS) as url:
        yield url, urlsplit(url).port or 0
    store.close()


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    return sock


def _read_until_closed(sock: socket.socket, timeout: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes, and when it closed (seconds from now); raises
    TimeoutError when it is still open after ``timeout``."""
    start, got = time.monotonic(), b""
    sock.settimeout(timeout)
    while True:
        try:
            chunk = sock.recv(4096)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return got, time.monotonic() - start
        got += chunk


def _health(url: str, source: str) -> tuple[int, float]:
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(base_url=url, transport=transport, timeout=5) as c:
        start = time.monotonic()
        r = c.get("/health")
        return r.status_code, time.monotonic() - start


def test_idle_connections_past_the_cap_are_refused_and_the_rest_time_out(server) -> None:
    url, port = server
    opened = time.monotonic()
    idle = [_connect(port) for _ in range(IDLE)]
    try:
        # another client is answered at once while one address holds all it may
        status, took = _health(url, "127.0.0.2")
        assert status == 200 and took < 0.5, (status, took)
        answers = [_read_until_closed(s, timeout=5) for s in idle]
    finally:
        for s in idle:
            s.close()
    refused = [body for body, _ in answers if body]
    assert len(refused) == IDLE - CAP, [b[:40] for b in refused]
    assert all(b.startswith(b"HTTP/1.1 503 ") and b"connections from your address" in b for b in refused)
    # the ones admitted sent nothing and were closed at the header timeout, not held
    assert time.monotonic() - opened < LIMITS.header_timeout_s + 1.5
    # once they are gone, the same address is served again
    status, _ = _health(url, "127.0.0.1")
    assert status == 200


def test_a_request_head_trickled_byte_by_byte_is_cut_at_the_header_timeout(server) -> None:
    port = server[1]
    sock = _connect(port)
    start = time.monotonic()
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
    closed = False
    try:
        for i in range(40):  # a header line every 0.1 s, for up to 4 s: never a whole head
            sock.sendall(b"X-%d: y\r\n" % i)
            time.sleep(0.1)
    except (BrokenPipeError, ConnectionResetError):
        closed = True
    if not closed:
        body, _ = _read_until_closed(sock, timeout=1)
        assert not body.startswith(b"HTTP/1.1 200")
    sock.close()
    assert time.monotonic() - start < LIMITS.header_timeout_s + 1.5


def test_an_idle_keep_alive_connection_is_closed_after_the_bound(server) -> None:
    port = server[1]
    sock = _connect(port)
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    sock.settimeout(5)
    first = sock.recv(4096)
    assert first.startswith(b"HTTP/1.1 200"), first[:100]
    start = time.monotonic()
    _, when = _read_until_closed(sock, timeout=5)
    sock.close()
    assert when < LIMITS.keep_alive_s + 0.7, when
    assert time.monotonic() - start < LIMITS.keep_alive_s + 0.7


def test_a_trusted_proxys_connections_are_not_capped(tmp_path) -> None:
    """Every client behind a proxy shares its address: capping it would cap them all together."""
    limits = LIMITS.model_copy(update={"trusted_proxies": ("127.0.0.1",)})
    store = Store(f"sqlite:///{tmp_path / 'labels.db'}")
    with serve_in_thread(create_app(store, limits=limits), limits) as url:
        port = urlsplit(url).port or 0
        held = [_connect(port) for _ in range(3 * CAP)]
        try:
            status, _ = _health(url, "127.0.0.1")
            assert status == 200
            for s in held:
                s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answers = [_read_until_closed(s, timeout=5)[0] for s in held]
        finally:
            for s in held:
                s.close()
    store.close()
    assert all(a.startswith(b"HTTP/1.1 200") for a in answers), [a[:40] for a in answers]


def _login_head(port: int, length: int) -> socket.socket:
    sock = _connect(port)
    sock.sendall(
        b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        b"Content-Length: %d\r\n\r\n" % length
    )
    return sock


def test_a_body_that_never_comes_or_trickles_is_answered_408_within_its_bound(server) -> None:
    """Issue 66, item 2: 60 connections that sent their headers and then trickled the body stayed open
    60 s. Now the body must start within ``body_timeout_s`` and keep up ``min_body_rate`` (1000 bytes/s
    here): the silent and the trickling one (10 bytes/s) get 408, closed, and a whole login is served."""
    url, port = server
    start = time.monotonic()
    silent = [_login_head(port, 100) for _ in range(CAP - 1)]
    trickling = _login_head(port, 5000)
    trickling.settimeout(0.1)
    answer = b""
    while time.monotonic() - start < 5 and not answer:
        try:
            trickling.sendall(b"a")
            answer = trickling.recv(4096)
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            break
    assert answer.startswith(b"HTTP/1.1 408"), answer[:60]
    answers = [_read_until_closed(s, timeout=3)[0] for s in silent]
    assert all(a.startswith(b"HTTP/1.1 408") and b"too slow" in a for a in answers), answers[:1]
    assert time.monotonic() - start < LIMITS.body_timeout_s + 1.5
    for s in [*silent, trickling]:
        s.close()
    with httpx.Client(base_url=url, timeout=5) as c:  # a login sent whole is read as ever
        r = c.post("/login", data={"user": "nobody", "token": "wrong"})
    assert r.status_code != 408 and r.status_code < 500, r.status_code

"""What one client's connections may cost ``prmkit serve`` (issue 42), over real sockets on loopback.

Before, 19,990 idle or slow partial connections from one local client were kept open for the whole
hold, and 200 more from a second process made ``/health`` time out. Now the server closes a connection
whose request head is not whole within ``header_timeout_s`` and answers 503 to connections past
``connections_per_client`` from one address, while other clients are served. 127.0.0.2 (loopback too) is
the hostile client; the bounds are about a second so the test stays fast.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from prmkit.core.http_limits import bounded_config
from prmkit.policies import load_policy
from prmkit.serving.policy_server import PolicyService, ServePolicyConfig, server_options
from prmkit.serving.policy_server import create_app as policy_app
from prmkit.serving.reward_server import ServerConfig, create_app
from prmkit.worlds.arithmetic import generate_problems
from tests.serving.conftest import HashScorer, free_port, run_server

CAP = 8
CONFIG = ServerConfig(port=0, header_timeout_s=1.0, keep_alive_s=0.5, connections_per_client=CAP)


def bounded_server(config: ServerConfig) -> contextlib.AbstractContextManager[str]:
    return run_server(create_app(HashScorer(), config), bounded=config)


def _closed_within(sock: socket.socket, seconds: float) -> bytes | None:
    """What the server sent before closing ``sock``, or None if it is still open after ``seconds``."""
    sock.settimeout(seconds)
    got = b""
    try:
        while chunk := sock.recv(4096):
            got += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return got


def test_idle_and_trickling_connections_are_bounded_and_others_are_served() -> None:
    with bounded_server(CONFIG) as url:
        port = int(url.rsplit(":", 1)[1])
        hostile = [
            socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.2", 0))
            for _ in range(CAP + 12)
        ]
        hostile[0].sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # a head that never ends
        started = time.monotonic()
        # another client is answered at once while the hostile one holds all it may
        with httpx.Client(base_url=url, timeout=3) as client:
            assert client.get("/health").status_code == 200
            assert (
                client.post("/score", json={"traces": [{"problem": "p", "steps": ["a"]}]}).status_code == 200
            )
        assert time.monotonic() - started < 1.0
        over = [_closed_within(s, 2.0) for s in hostile[CAP:]]
        assert all(o is not None and o.startswith(b"HTTP/1.1 503") for o in over), over[:2]
        # the CAP admitted ones, silent or trickling, are closed at the header timeout, not held
        admitted = [_closed_within(s, 3.0) for s in hostile[:CAP]]
        assert all(a == b"" for a in admitted), admitted
        assert time.monotonic() - started < 4.0
        for s in hostile:
            s.close()
        # the address may connect again once its connections are gone
        again = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.2", 0))
        again.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert (_closed_within(again, 3.0) or b"").startswith(b"HTTP/1.1 200")
        again.close()


def test_a_trusted_proxys_connections_are_not_capped() -> None:
    config = CONFIG.model_copy(update={"trusted_proxies": ["127.0.0.2"]})
    with bounded_server(config) as url:
        port = int(url.rsplit(":", 1)[1])
        proxy = [
            socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.2", 0))
            for _ in range(CAP + 4)
        ]
        last = proxy[-1]
        last.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert (_closed_within(last, 3.0) or b"").startswith(b"HTTP/1.1 200")
        for s in proxy:
            s.close()


def test_prmkit_serve_has_the_connection_flags() -> None:
    from typer.testing import CliRunner

    from prmkit.cli import app

    out = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "200"}).output
    for flag in ("--keep-alive-s", "--header-timeout-s", "--connections-per-client", "--max-batch-chars"):
        assert flag in out, flag


BODY_LIMITS = {"body_timeout_s": 1.0, "min_body_rate": 1000}
"""A body must start within 1 s of its head and then arrive at 1000 bytes/s or faster."""


@contextlib.contextmanager
def _served(config) -> Iterator[int]:
    """A uvicorn.Config served in a thread; yields its port."""
    import uvicorn

    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield config.port
    finally:
        server.should_exit = True
        thread.join(timeout=20)


@contextlib.contextmanager
def _reward_server() -> Iterator[tuple[int, str, bytes]]:
    """``prmkit serve``'s uvicorn config; yields (port, route, a good body)."""
    config = CONFIG.model_copy(update=BODY_LIMITS)
    with bounded_server(config) as url:
        yield int(url.rsplit(":", 1)[1]), "/score", b'{"traces": [{"problem": "p", "steps": ["a"]}]}'


@contextlib.contextmanager
def _policy_server() -> Iterator[tuple[int, str, bytes]]:
    """``prmkit serve-policy``'s uvicorn config (:func:`server_options`); yields (port, route, a body)."""
    problem = generate_problems(1, seed=0)[0]
    app = policy_app(PolicyService(load_policy("arithmetic"), [problem]))
    options = server_options(ServePolicyConfig(port=free_port(), **BODY_LIMITS))
    with _served(bounded_config(app, **options, log_level="warning")) as port:
        body = b'{"prompt": "%s\\n", "max_tokens": 8}' % problem.text.encode()
        yield port, "/v1/completions", body


def _post_head(port: int, route: str, length: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.2", 0))
    sock.sendall(
        f"POST {route} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n".encode()
    )
    return sock


def _trickle(sock: socket.socket, seconds: float) -> tuple[bytes, float]:
    """Send a byte every 0.1 s (10 bytes/s) until the server answers and closes, or ``seconds`` pass;
    what it sent, and when it closed (inf if it did not)."""
    start, got = time.monotonic(), b""
    sock.settimeout(0.1)
    while time.monotonic() - start < seconds:
        try:
            sock.sendall(b" ")
            chunk = sock.recv(4096)
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            return got, time.monotonic() - start
        if not chunk:
            return got, time.monotonic() - start
        got += chunk
    return got, float("inf")


@pytest.mark.parametrize("serve", [_reward_server, _policy_server], ids=["serve", "serve-policy"])
def test_a_body_that_never_comes_or_trickles_is_answered_408_within_its_bound(serve) -> None:
    """Issue 66, item 2: 200 connections that sent their headers on time and then trickled the body
    stayed open 90 s with no answer. Now a body must start within ``body_timeout_s`` and keep up
    ``min_body_rate``; past that the answer is 408 and the connection is closed, while others are served."""
    with serve() as (port, route, good):
        silent = [_post_head(port, route, 100) for _ in range(CAP // 2)]
        started = time.monotonic()
        trickled = _trickle(_post_head(port, route, 5000), seconds=6.0)
        answers = [_closed_within(s, 3.0) for s in silent]
        assert all(a is not None and a.startswith(b"HTTP/1.1 408") for a in answers), answers[:1]
        assert b"too slow" in (answers[0] or b"")
        assert time.monotonic() - started < BODY_LIMITS["body_timeout_s"] + 1.5
        assert trickled[0].startswith(b"HTTP/1.1 408"), trickled
        assert trickled[1] < BODY_LIMITS["body_timeout_s"] + 1.5, trickled[1]  # 10 B/s earns nothing
        # a body sent in pieces, with pauses, within the grace it has is served
        sock = _post_head(port, route, len(good))
        half = len(good) // 2
        time.sleep(0.4)
        sock.sendall(good[:half])
        time.sleep(0.4)
        sock.sendall(good[half:])
        sock.settimeout(5)
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        for s in [*silent, sock]:
            s.close()
        json_type = {"content-type": "application/json"}
        assert (
            httpx.post(f"http://127.0.0.1:{port}{route}", content=good, headers=json_type).status_code == 200
        )


def test_the_body_deadline_is_a_flag_of_both_servers() -> None:
    from typer.testing import CliRunner

    from prmkit.cli import app

    for command in ("serve", "serve-policy"):
        out = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"}).output
        assert "--body-timeout-s" in out and "--min-body-rate" in out, command

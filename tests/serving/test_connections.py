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
import time

import httpx

from prmkit.serving.reward_server import ServerConfig, create_app
from tests.serving.conftest import HashScorer, run_server

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

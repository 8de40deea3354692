"""The client's wire (issue 65): ``http.client`` keep-alive connections, one per thread and server, with
the guarantees the httpx client gave: a connection the server closed while idle is reopened, an answer
cut short is a transport error (retried, never read as a bad answer), a trickle is a timeout, a hostile
head is a clear :class:`EndpointError`, and ``HTTP_PROXY`` is honoured.

The servers here are scripted sockets on loopback: each connection is handed to a function that reads
requests and writes exactly the bytes a test needs, broken ones included.
"""

from __future__ import annotations

import base64
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

import pytest

from prmkit.policies.http import EndpointError, OpenAIClient

OK = b'{"choices": [{"index": 0, "text": "ok"}]}'
Script = Callable[[socket.socket, int, list[bytes]], None]


def answer(body: bytes = OK) -> bytes:
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
        len(body),
        body,
    )


def read_request(conn: socket.socket, buf: bytearray) -> bytes | None:
    """The next request (head and body) on ``conn``; None when the client closed it."""
    while b"\r\n\r\n" not in buf:
        data = conn.recv(65536)
        if not data:
            return None
        buf += data
    end = buf.index(b"\r\n\r\n") + 4
    length = next(
        (
            int(line.split(b":")[1])
            for line in buf[:end].split(b"\r\n")
            if line.lower().startswith(b"content-length")
        ),
        0,
    )
    while len(buf) < end + length:
        buf += conn.recv(65536)
    request = bytes(buf[: end + length])
    del buf[: end + length]
    return request


@contextmanager
def scripted(serve: Script, tls: ssl.SSLContext | None = None) -> Iterator[tuple[str, list[bytes]]]:
    """A loopback server handing its ``i``-th connection to ``serve(conn, i, seen)``; yields its URL and
    ``seen``, the list the script appends the requests it read to; with ``tls``, https."""
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[bytes] = []

    def accept() -> None:
        for i in range(1_000):
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=_run, args=(serve, conn, i, seen, tls), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http{'s' if tls else ''}://localhost:{listener.getsockname()[1]}", seen
    finally:
        listener.close()


def _run(serve: Script, conn: socket.socket, i: int, seen: list[bytes], tls: ssl.SSLContext | None) -> None:
    with conn, suppress(OSError):
        if tls:
            conn = tls.wrap_socket(conn, server_side=True)
        serve(conn, i, seen)


def keep_alive(conn: socket.socket, i: int, seen: list[bytes]) -> None:
    buf = bytearray()
    while (request := read_request(conn, buf)) is not None:
        seen.append(request)
        conn.sendall(answer())


def test_one_thread_keeps_one_connection_per_server() -> None:
    connections: list[int] = []

    def serve(conn: socket.socket, i: int, seen: list[bytes]) -> None:
        connections.append(i)
        keep_alive(conn, i, seen)

    with scripted(serve) as (url, seen):
        client = OpenAIClient(url, retries=0, timeout=5)
        for _ in range(20):
            assert client.post("/v1/completions", {"prompt": "x"})["choices"][0]["text"] == "ok"
        client.close()
    assert len(seen) == 20 and connections == [0]
    head = seen[0].split(b"\r\n\r\n")[0].lower()
    assert head.startswith(b"post /v1/completions http/1.1") and b"content-type: application/json" in head


def test_a_connection_the_server_closed_while_idle_is_reopened_without_a_failed_try() -> None:
    closed = threading.Semaphore(0)

    def serve(conn: socket.socket, i: int, seen: list[bytes]) -> None:  # one answer, then it hangs up
        seen.append(read_request(conn, bytearray()) or b"")
        conn.sendall(answer())
        conn.close()
        closed.release()

    with scripted(serve) as (url, seen):
        client = OpenAIClient(url, retries=0, timeout=5)
        for _ in range(3):
            client.post("/v1/completions", {"prompt": "x"})
            assert closed.acquire(timeout=10)  # the server hung up while the connection is idle
    assert len(seen) == 3


def test_an_answer_cut_short_of_its_length_is_retried_not_read_as_a_bad_answer() -> None:
    def serve(conn: socket.socket, i: int, seen: list[bytes]) -> None:
        read_request(conn, bytearray())
        if i == 0:
            conn.sendall(answer()[:-10])  # the head promises more than comes: the connection ends
            return
        conn.sendall(answer())

    with scripted(serve) as (url, _):
        assert OpenAIClient(url, retries=1, backoff=0.01, timeout=5).post("/v1/x", {})["choices"]
    with scripted(serve) as (url, _), pytest.raises(EndpointError, match=r"after 1 tries \(IncompleteRead"):
        OpenAIClient(url, retries=0, timeout=5).post("/v1/x", {})


def test_a_trickling_answer_is_a_timeout() -> None:
    def serve(conn: socket.socket, i: int, seen: list[bytes]) -> None:
        read_request(conn, bytearray())
        conn.sendall(answer(b" " * 100 + OK)[: -len(OK) - 100])
        for _ in range(40):  # a byte every 0.1 s: each read in time, the whole never
            conn.sendall(b" ")
            time.sleep(0.1)

    with scripted(serve) as (url, _):
        started = time.monotonic()
        with pytest.raises(EndpointError, match=r"after 1 tries \(timed out after 1 s\)"):
            OpenAIClient(url, retries=0, timeout=1).post("/v1/x", {})
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (
            b"HTTP/1.1 200 OK\r\n" + b"x-a: 1\r\n" * 200 + b"content-length: 2\r\n\r\n{}",
            "got more than 100 headers",
        ),
        (b"SMTP ready\r\n\r\n", "BadStatusLine"),
        (b"HTTP/1.1 200 OK\r\nx: " + b"a" * 70_000 + b"\r\n\r\n", "LineTooLong"),
    ],
)
def test_a_hostile_head_is_a_clear_endpoint_error(reply: bytes, reason: str) -> None:
    def serve(conn: socket.socket, i: int, seen: list[bytes]) -> None:
        read_request(conn, bytearray())
        conn.sendall(reply)

    with scripted(serve) as (url, _), pytest.raises(EndpointError, match=rf"after 1 tries .*{reason}"):
        OpenAIClient(url, retries=0, timeout=5).post("/v1/x", {})


def test_a_url_that_is_not_http_is_refused_when_the_client_is_made() -> None:
    with pytest.raises(EndpointError, match=r"'localhost:8000' is not an http:// or https:// URL"):
        OpenAIClient("localhost:8000")


def test_http_proxy_is_honoured_with_its_credentials_and_no_proxy_bypasses_it(monkeypatch) -> None:
    with scripted(keep_alive) as (proxy, seen):
        monkeypatch.setenv("HTTP_PROXY", proxy.replace("http://", "http://user:p%40ss@"))
        monkeypatch.delenv("http_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        OpenAIClient("http://model-server.internal:8000/v1", retries=0, timeout=5).post("/v1/completions", {})
        assert seen[-1].startswith(b"POST http://model-server.internal:8000/v1/completions HTTP/1.1")
        assert b"\r\nProxy-Authorization: Basic " + base64.b64encode(b"user:p@ss") + b"\r\n" in seen[-1]
        monkeypatch.setenv("NO_PROXY", "localhost")
        OpenAIClient(proxy, retries=0, timeout=5).post("/v1/completions", {})
        assert (
            seen[-1].startswith(b"POST /v1/completions HTTP/1.1") and b"Proxy-Authorization" not in seen[-1]
        )


@pytest.mark.skipif(shutil.which("openssl") is None, reason="makes its certificate with the openssl command")
def test_https_verifies_the_server_against_the_roots_ssl_cert_file_names(tmp_path, monkeypatch) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    with scripted(keep_alive, tls=server) as (url, seen):
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
        with pytest.raises(EndpointError, match=r"after 1 tries \(SSLCertVerificationError"):
            OpenAIClient(url, retries=0, timeout=5).post("/v1/completions", {})
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        client = OpenAIClient(url, retries=0, timeout=5)
        for _ in range(3):
            assert client.post("/v1/completions", {})["choices"][0]["text"] == "ok"
    assert len(seen) == 3

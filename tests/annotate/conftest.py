"""Fixtures for the annotate tests: hand-made traces with gold labels, a real PostgreSQL server started
for the session (skipped with the reason where it cannot start), a store per backend, a real uvicorn
server in a subprocess for HTTP tests, and one in a thread (real HTTP on loopback, started in
milliseconds) for the hardening tests."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import update

from prmkit.annotate import auth
from prmkit.annotate.api import server_config
from prmkit.annotate.limits import Limits
from prmkit.annotate.models import users
from prmkit.annotate.store import Store
from prmkit.core.model import Label, Observation, Problem, Provenance, Step, ToolCall, Trace

GOLD = Provenance(method="gold", actor="world:local")


def make_trace(
    tid: str, texts: list[str], gold: list[int] | None = None, problem: str | None = None
) -> Trace:
    """A core-model trace; with ``gold`` each step gets a gold Label (so it can be a gold item)."""
    steps = [Step(text=t) for t in texts]
    if gold is not None:
        for step, r in zip(steps, gold, strict=True):
            step.labels.append(Label(rating=r, provenance=GOLD))
    prob = Problem(
        id=f"p-{tid}", text=problem or f"Problem {tid}: Sam has 3 apples and buys 4 more.", answer="7"
    )
    return Trace(id=tid, problem=prob, steps=steps, final_answer="7")


HOSTILE_OBSERVATION = (
    "<script>window.pwned = 1</script>Population: $x$ = 2,102,650 <img src=x onerror=alert(1)>"
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Look a fact up in the encyclopedia.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        },
    },
    {"name": "calculator", "description": "Evaluate an arithmetic expression <exactly>.",
     "parameters": {"properties": {"expression": {}, "precision": {}}, "required": ["expression"]}},
]  # fmt: skip


def agent_trace(tid: str = "agent-0", gold: list[int] | None = None) -> Trace:
    """A five-step agent trajectory made by hand: search, search (a hostile result, the tool's name left
    out so only the call id names it), a malformed calculator call, the retry (with a user's turn after
    it) and the answer. Step and call metadata stand in for a world's truth an annotator must not see."""
    steps = [
        Step(
            text="I need the capital of France first.",
            kind="tool_call",
            tool_calls=[ToolCall(name="search", arguments='{"query": "capital of France"}', id="c1")],
            observations=[
                Observation(content="Paris is the capital of France.", call_id="c1", name="search")
            ],
        ),
        Step(
            text="",
            kind="tool_call",
            tool_calls=[ToolCall(name="search", arguments='{"query":"population of Paris"}', id="c2")],
            observations=[Observation(content=HOSTILE_OBSERVATION, call_id="c2")],
        ),
        Step(
            text="Doubling it with the calculator.",
            kind="tool_call",
            tool_calls=[
                ToolCall(
                    name="calculator",
                    arguments='{"expression": "2*2102650"',
                    id="c3",
                    metadata={"error": "args"},
                )
            ],
            observations=[Observation(content="error: arguments are not valid JSON", call_id="c3")],
            metadata={"error_kind": "malformed_arguments"},
        ),
        Step(
            text="Retrying with valid arguments.",
            kind="tool_call",
            tool_calls=[
                ToolCall(
                    name="calculator", arguments='{"expression": "2 * 2102650", "precision": 1.10}', id="c4"
                )
            ],
            observations=[
                Observation(content="4205300", call_id="c4", name="calculator"),
                Observation(content="Please give just the number.", role="user"),
            ],
        ),
        Step(text="The answer is 4205300."),
    ]
    if gold is not None:
        for step, r in zip(steps, gold, strict=True):
            step.labels.append(Label(rating=r, provenance=GOLD))
    prob = Problem(
        id=f"p-{tid}",
        text="What is twice the population of the capital of France?",
        answer="4205300",
        tools=TOOLS,
    )
    return Trace(id=tid, problem=prob, steps=steps, final_answer="4205300")


@pytest.fixture
def traces() -> list[Trace]:
    """Six small data traces (3 steps each), one with a model score label for Label Studio export."""
    out = [
        make_trace(
            f"t{i}", [f"Step one of {i}: 3 + 4 = 7.", "So there are $3 \\times 1 = 3$.", "The answer is 7."]
        )
        for i in range(6)
    ]
    model = Provenance(method="model", actor="tiny-prm")
    out[0].add_labels([Label(score=s, provenance=model) for s in (0.9, 0.2, 0.7)])
    return out


@pytest.fixture
def gold_traces() -> list[Trace]:
    """Gold items with known first errors (hand-made in the world's step style)."""
    return [
        make_trace(
            "g0",
            ["She has 3, so 3 + 4 = 7 apples.", "She gives 2, so 7 - 2 = 6 apples.", "The answer is 6."],
            [1, -1, -1],
        ),
        make_trace(
            "g1",
            ["She has 3, so 3 + 4 = 7 apples.", "She doubles, so 7 * 2 = 14.", "The answer is 14."],
            [1, 1, 1],
        ),
    ]


# --- PostgreSQL ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A throwaway PostgreSQL server on a free loopback port; yields its base URL (no database name).

    PostgreSQL refuses to run as root, so as root the server runs as the ``postgres`` OS user in a
    directory handed to it; otherwise as the current user.
    """
    bindir = _pg_bin()
    if bindir is None:
        pytest.skip(
            "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb); run `make system-deps`"
        )
    root = tempfile.mkdtemp(prefix="prmkit-pg-")
    as_user: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            pytest.skip(
                "running as root and `runuser` is missing, so PostgreSQL cannot be started as another user"
            )
        try:
            shutil.chown(root, "postgres", "postgres")
        except LookupError:
            pytest.skip("running as root and there is no `postgres` OS user to run PostgreSQL as")
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = f"{root}/data", free_port()
    init = subprocess.run(
        [*as_user, str(bindir / "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"],
        capture_output=True,
        text=True,
    )
    if init.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"initdb failed: {init.stderr.strip()[-300:]}")
    proc = subprocess.Popen(
        [
            *as_user,
            str(bindir / "postgres"),
            "-D",
            data,
            "-p",
            str(port),
            "-h",
            "127.0.0.1",
            "-k",
            root,
            "-c",
            "fsync=on",
            "-c",
            "max_connections=200",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    try:
        import psycopg

        for _ in range(100):
            try:
                psycopg.connect(f"host=127.0.0.1 port={port} user=postgres dbname=postgres").close()
                break
            except psycopg.OperationalError:
                if proc.poll() is not None:
                    pytest.skip(
                        f"postgres exited: {proc.stderr.read().decode()[-300:] if proc.stderr else ''}"
                    )
                time.sleep(0.1)
        else:
            pytest.skip("postgres did not accept connections within 10 s")
        yield url
    finally:
        # a throwaway server: "immediate" stops at once instead of waiting for clients to leave
        subprocess.run(
            [*as_user, str(bindir / "pg_ctl"), "stop", "-D", data, "-m", "immediate"], capture_output=True
        )
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        if proc.poll() is None:
            proc.kill()
        shutil.rmtree(root, ignore_errors=True)


def new_pg_database(base: str) -> str:
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    dsn = base.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{base}/{name}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def db_url(request, tmp_path: Path) -> str:
    """The same test against SQLite (a file in tmp_path) and a real PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'labels.db'}"
    return new_pg_database(request.getfixturevalue("postgres_server"))


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    s = Store(db_url)
    yield s
    s.close()


# --- a real server ---------------------------------------------------------------------------------


class LiveServer:
    """``prmkit annotate serve`` in a subprocess on a loopback port; can be killed and started again."""

    def __init__(self, db: str, tmp: Path):
        self.db, self.port, self.tmp = db, free_port(), tmp
        self.proc: subprocess.Popen | None = None
        self.url = f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> None:
        code = "from prmkit.cli import main; main()"
        cmd = [sys.executable, "-c", code, "annotate", "serve", "--db", self.db, "--port", str(self.port)]
        log = open(self.tmp / f"server-{self.port}.log", "ab")  # noqa: SIM115 - owned by the process
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError((self.tmp / f"server-{self.port}.log").read_text()[-2000:])
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(self.url + "/login", timeout=2).status_code == 200:
                    return
            time.sleep(0.1)
        raise RuntimeError("server did not start in time")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()  # SIGKILL: no shutdown handler runs
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def live_server(tmp_path: Path):
    servers: list[LiveServer] = []

    def make(db: str) -> LiveServer:
        server = LiveServer(db, tmp_path)
        servers.append(server)
        return server

    yield make
    for s in servers:
        s.stop()


@contextlib.contextmanager
def serve_in_thread(app: Any, limits: Limits | None = None) -> Iterator[str]:
    """``app`` served by uvicorn on a free loopback port in a thread, with the config ``prmkit annotate
    serve`` uses (``limits``' connection bounds and trusted proxies); yields its base URL."""
    import uvicorn

    config = server_config(app, "127.0.0.1", free_port(), limits or Limits(), lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


_HASHES: dict[str, str] = {}


def add_password_user(store: Store, user: str, password: str, role: str = "annotator") -> str:
    """``auth.add_user`` with a password whose scrypt hash is computed once per test session (each costs
    about a second at the OWASP cost). The stored hash is a real one: logging in still pays the full cost."""
    token = auth.add_user(store, user, role)
    if password not in _HASHES:
        _HASHES[password] = auth.hash_password(password)
    with store.write() as conn:
        conn.execute(update(users).where(users.c.id == user).values(password_hash=_HASHES[password]))
    return token

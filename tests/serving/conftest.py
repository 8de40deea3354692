"""Fixtures for the serving tests: a deterministic scorer and a real uvicorn server on loopback."""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import pytest

from prmkit.core.model import Trace
from prmkit.core.render import step_inputs
from prmkit.serving.config import ServerConfig
from prmkit.testing import make_random_prm


class HashScorer:
    """A deterministic StepScorer: each step's score is a hash of (problem, steps so far), in [0, 1].

    ``delay`` seconds per call (plus ``per_trace`` per trace) stand in for a forward pass, so batching
    and overload behaviour can be tested without a model. It records the batch sizes it saw.
    """

    name = "hash"

    def __init__(self, delay: float = 0.0, per_trace: float = 0.0):
        self.delay, self.per_trace = delay, per_trace
        self.calls: list[int] = []
        self._lock = threading.Lock()

    @staticmethod
    def step_score(problem: str, steps: Sequence[str]) -> float:
        digest = hashlib.sha256(("\x00".join([problem, *steps])).encode()).digest()
        return int.from_bytes(digest[:4], "big") / 2**32

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        with self._lock:
            self.calls.append(len(traces))
        time.sleep(self.delay + self.per_trace * len(traces))
        out = []
        for t in traces:
            texts = step_inputs(t.steps)  # what a model reads: an agent's calls and results count
            out.append([self.step_score(t.problem.text, texts[: i + 1]) for i in range(len(texts))])
        return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def run_server(app, bounded: ServerConfig | None = None) -> Iterator[str]:
    """Run ``app`` with uvicorn in a thread on a free 127.0.0.1 port; yield its base URL. With
    ``bounded``, as ``prmkit serve`` runs it: with that config's connection bounds."""
    import uvicorn

    from prmkit.serving.reward_server import uvicorn_config

    port = free_port()
    if bounded is None:
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    else:
        config = uvicorn_config(app, bounded.model_copy(update={"port": port}), log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


@contextlib.contextmanager
def prmkit_serve(spec: str, *flags: str, log: Path) -> Iterator[str]:
    """``prmkit serve SPEC FLAGS`` in its own process on a free 127.0.0.1 port, its output in ``log``;
    yield its base URL once ``/health`` answers (60 s at most, or the log in the failure)."""
    port = free_port()
    cmd = [str(Path(sys.executable).with_name("prmkit")), "serve", spec, "--port", str(port), *flags]
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "server did not come up in 60 s"
                time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=30)


@pytest.fixture
def hash_scorer() -> HashScorer:
    return HashScorer()


@pytest.fixture(scope="session")
def random_prm(tmp_path_factory) -> str:
    return make_random_prm(tmp_path_factory.mktemp("random-prm"))

"""A real ``prmkit serve-policy`` on a free loopback port, started once and always shut down."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.processes import stop

PRMKIT = str(Path(sys.executable).parent / "prmkit")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(args: list[str], log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            [PRMKIT, "serve-policy", "--port", str(port), *args], stdout=fh, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"serve-policy exited with {proc.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.2)
    proc.kill()
    pytest.fail(f"serve-policy did not come up in 60 s:\n{log.read_text()}")


@pytest.fixture(scope="session")
def world_traces_file(tmp_path_factory) -> Path:
    from prmkit.core.dataset import write_traces
    from prmkit.worlds.arithmetic import generate_problems, gold_label, sample_traces

    path = tmp_path_factory.mktemp("served") / "traces.jsonl"
    write_traces(path, gold_label(sample_traces(generate_problems(30, seed=5, split="test"), 2, seed=5)))
    return path


@pytest.fixture(scope="session")
def policy_server(world_traces_file, tmp_path_factory) -> Iterator[str]:
    """Base URL of ``prmkit serve-policy --policy world --judge world`` serving the traces' problems."""
    log = tmp_path_factory.mktemp("server") / "server.log"
    proc, url = start_server(
        ["--policy", "arithmetic", "--judge", "arithmetic", "--problems", str(world_traces_file)], log
    )
    try:
        yield url
    finally:
        stop(proc)

"""Schemathesis against the reward server's own OpenAPI page, over real HTTP on loopback (slow suite).

Its checks: no 5xx, every status and content type the server answers is declared, every response body
matches its declared schema (the refusals the server writes itself included: 401, 413, 422, 503), and
schema-invalid requests are refused. Left out: ``positive_data_acceptance``, because three rules of the
API are not JSON Schema: a trace gives exactly one of ``steps`` and ``completion``, ``prompts`` has as
many items as ``query``, and ``aggregation`` names a registered aggregation (the registry can grow at
run time); each is refused with a 422 that says so. The server has a gate (``flag``), so ``/verify`` is
tested with the others.

Every operation (6 of 6) goes through schemathesis's coverage phase (its deterministic boundary and
schema-violating cases, whatever ``--max-examples`` is) and its fuzzing phase with up to 50 generated
examples each: about 740 requests in ~9 s (150 examples: ~1,140 requests in ~24 s, on 2 shared cores).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from prmkit.serving.config import GateOptions
from prmkit.serving.reward_server import ServerConfig, create_app
from tests.serving.conftest import HashScorer, run_server

CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
]


@pytest.mark.slow
def test_schemathesis_finds_no_server_error_and_the_schema_matches(tmp_path: Path) -> None:
    st = Path(sys.executable).with_name("st")
    config = ServerConfig(
        max_body_bytes=100_000,
        max_step_chars=2_000,
        max_traces_per_request=8,
        gate=GateOptions(threshold=0.5),
    )
    with run_server(create_app(HashScorer(), config)) as url:
        run = subprocess.run(
            [
                str(st),
                "run",
                f"{url}/openapi.json",
                "--checks",
                ",".join(CHECKS),
                "--max-examples",
                "50",
                "--seed",
                "21",
                "--workers",
                "1",
                "--no-color",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=500,
        )
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-2000:]
    assert "6 selected / 6 total" in run.stdout, run.stdout[-3000:]  # every operation was tested
    for phase in ("Coverage", "Fuzzing"):  # ... by both phases, each passed
        assert re.search(rf"✅\s+{phase} \(in", run.stdout), run.stdout[-3000:]

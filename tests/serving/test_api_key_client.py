"""Every command that takes a scorer reaches a reward server started with ``--api-key`` (issue 42).

A server with a key answered 401 to ``prmkit score http://...``, ``bon``, ``vote``, ``beam`` and
``audit`` alike: the remote scorer had no way to send the key. It now reads ``PRMKIT_API_KEY``, the
variable ``prmkit serve`` reads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prmkit.core.dataset import write_traces
from prmkit.scoring.remote import RemoteScorer, RemoteScoringError
from prmkit.serving.reward_server import ServerConfig, create_app
from prmkit.serving.steps import make_trace
from tests.serving.conftest import HashScorer, run_server

KEY = "s3cret-key"


def test_the_remote_scorer_sends_the_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    trace = make_trace("Tom has 3 apples and buys 4 more.", ["3 + 4 = 7", "The answer is 7."])
    with run_server(create_app(HashScorer(), ServerConfig(api_key=KEY))) as url:
        monkeypatch.delenv("PRMKIT_API_KEY", raising=False)
        with pytest.raises(
            RemoteScoringError, match="HTTP 401: the server needs its API key; set PRMKIT_API_KEY"
        ):
            RemoteScorer(url, retries=0).score([trace])
        monkeypatch.setenv("PRMKIT_API_KEY", KEY)
        assert RemoteScorer(url).score([trace]) == HashScorer().score([trace])
        assert RemoteScorer(url, api_key="wrong", retries=0).headers["Authorization"] == "Bearer wrong"


def test_prmkit_score_reaches_a_server_with_a_key(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    write_traces(traces, [make_trace("Tom has 3 apples and buys 4 more.", ["3 + 4 = 7", "The answer is 7."])])
    prmkit = str(Path(sys.executable).with_name("prmkit"))
    with run_server(create_app(HashScorer(), ServerConfig(api_key=KEY))) as url:
        env = {k: v for k, v in os.environ.items() if k != "PRMKIT_API_KEY"}
        cmd = [prmkit, "score", url, str(traces), "--output", str(tmp_path / "scored.jsonl")]
        refused = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert refused.returncode == 2, refused.stderr
        assert "set PRMKIT_API_KEY" in refused.stderr and "Traceback" not in refused.stderr
        done = subprocess.run(
            cmd, env={**env, "PRMKIT_API_KEY": KEY}, capture_output=True, text=True, timeout=120
        )
    assert done.returncode == 0, done.stderr
    scored = [json.loads(line) for line in (tmp_path / "scored.jsonl").read_text().splitlines()]
    assert len(scored) == 1

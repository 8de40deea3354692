"""Every client reaches a reward server started with ``--api-key`` the way it can send a key.

Issue 42: ``prmkit score http://...``, ``bon``, ``vote``, ``beam`` and ``audit`` answered 401 alike: the
remote scorer had no way to send the key; it now reads ``PRMKIT_API_KEY``, the variable ``prmkit serve``
reads. Issue 36: OpenRLHF sends no header of its own, only what ``requests`` / ``aiohttp`` make of
userinfo in ``--reward.remote_url`` (HTTP Basic auth), so the server takes the key as a Basic password
too; and OpenRLHF's local ``reward_func`` passes ``PRMKIT_API_KEY`` on.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import requests

from prmkit.core.dataset import write_traces
from prmkit.core.steps import make_trace
from prmkit.rl.openrlhf import reward_func
from prmkit.scoring.remote import RemoteScorer, RemoteScoringError
from prmkit.serving.guard import presented_keys
from prmkit.serving.reward_server import ServerConfig, create_app
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


def _basic(user_pass: bytes) -> dict[bytes, bytes]:
    return {b"authorization": b"Basic " + base64.b64encode(user_pass)}


def test_presented_keys_reads_every_way_a_client_sends_one() -> None:
    assert presented_keys({b"authorization": b"Bearer  k "}) == [b"k"]
    assert presented_keys({b"authorization": b"bearer k", b"x-api-key": b"x"}) == [b"x", b"k"]
    assert presented_keys(_basic(b"prmkit:k:with:colons")) == [b"k:with:colons"]  # the user ends at ':'
    assert presented_keys(_basic(b":k")) == [b"k"]  # any user name, the empty one too
    assert presented_keys(_basic(b"k")) == []  # no password: the key is never read from the user name
    assert presented_keys({b"authorization": b"Basic not-base64!"}) == []
    assert presented_keys({b"authorization": b"Digest k"}) == []


def test_openrlhf_url_userinfo_reaches_a_server_with_a_key() -> None:
    """``requests`` (OpenRLHF 0.9's ``request_api_wrapper``) turns ``http://user:KEY@host`` into Basic
    auth; the key is its password, whatever the user name. A wrong key is a 401 naming every way."""
    body = {"query": ["Tom has 3 apples.\n3 + 4 = 7\nThe answer is 7."], "prompts": ["Tom has 3 apples.\n"]}
    with run_server(create_app(HashScorer(), ServerConfig(api_key=KEY))) as url:
        keyed = url.replace("http://", f"http://prmkit:{KEY}@") + "/get_reward"
        ok = requests.post(keyed, json=body, timeout=30)
        assert ok.status_code == 200, ok.text
        assert ok.request.headers["Authorization"].startswith("Basic ")  # what requests made of the URL
        assert httpx.post(f"{url}/get_reward", json=body, auth=("anyone", KEY)).status_code == 200
        assert httpx.post(f"{url}/get_reward", json=body, headers={"X-API-Key": KEY}).status_code == 200
        wrong = requests.post(keyed.replace(KEY, "wrong"), json=body, timeout=30)
        as_user = requests.post(
            url.replace("http://", f"http://{KEY}@") + "/get_reward", json=body, timeout=30
        )
    assert wrong.status_code == 401 and as_user.status_code == 401
    detail = wrong.json()["detail"]
    assert "'Authorization: Bearer KEY'" in detail and "HTTP Basic auth with KEY as the password" in detail
    assert "http://prmkit:KEY@host:port/get_reward" in detail
    assert wrong.headers["www-authenticate"] == 'Bearer, Basic realm="prmkit"'


def test_openrlhf_reward_func_sends_the_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local ``reward_func`` (``--reward.remote_url reward.py``) reads ``PRMKIT_API_KEY`` and passes
    it on; scorers are cached per (model, key), so a key set after a refused call is used."""
    prompt = "Tom has 3 apples.\n"
    queries = [prompt + "3 + 4 = 7\nThe answer is 7."]
    with run_server(create_app(HashScorer(), ServerConfig(api_key=KEY))) as url:
        monkeypatch.setenv("PRMKIT_REWARD_MODEL", url)
        monkeypatch.delenv("PRMKIT_API_KEY", raising=False)
        with pytest.raises(RemoteScoringError, match="HTTP 401"):
            reward_func(queries, [prompt], ["7"])
        monkeypatch.setenv("PRMKIT_API_KEY", KEY)
        out = reward_func(queries, [prompt], ["7"])
    (expected,) = HashScorer().score([make_trace("Tom has 3 apples.", ["3 + 4 = 7", "The answer is 7."])])
    assert out["rewards"].tolist() == pytest.approx([min(expected)])

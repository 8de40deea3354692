from __future__ import annotations

import time
from email.utils import formatdate, parsedate_to_datetime

import httpx
import pytest

from prmkit.core.model import Problem
from prmkit.formats.inputs import read_traces
from prmkit.labeling.judge import label_judge
from prmkit.labeling.mc import label_mc
from prmkit.policies import load_judge, load_policy
from prmkit.policies.http import EndpointError, OpenAIClient, retry_after_s
from prmkit.worlds.arithmetic import SimulatedJudge, WorldPolicy


def test_server_speaks_the_openai_protocol(policy_server, world_traces_file):
    models = httpx.get(policy_server + "/v1/models").json()
    assert models["data"][0]["id"] == "world"
    trace = read_traces(world_traces_file)[0]
    prompt = trace.problem.text + "\n" + trace.steps[0].text + "\n"
    body = httpx.post(
        policy_server + "/v1/completions", json={"prompt": [prompt, prompt], "n": 3, "seed": 1}
    ).json()
    assert [c["index"] for c in body["choices"]] == list(range(6))
    assert body["choices"][0]["text"] == body["choices"][3]["text"]  # same prompt, same seed
    bad = httpx.post(policy_server + "/v1/completions", json={"prompt": "Unknown problem\n"})
    assert bad.status_code == 400 and "does not start with a problem" in bad.json()["error"]["message"]


def test_mc_through_the_endpoint_equals_mc_in_process(policy_server, world_traces_file):
    traces = read_traces(world_traces_file)[:20]
    policy = load_policy("endpoint", url=policy_server + "/v1", model="world", concurrency=4)
    remote, s_remote = label_mc(traces, policy, rollouts=4, seed=2, concurrency=4)
    local, s_local = label_mc(traces, WorldPolicy(), rollouts=4, seed=2)
    assert s_remote["rollouts"] == s_local["rollouts"] > 0
    assert [t.ratings("mc_hard") for t in remote] == [t.ratings("mc_hard") for t in local]
    assert [t.ratings("mc_soft") for t in remote] == [t.ratings("mc_soft") for t in local]
    one = policy.continue_from(traces[0].problem, traces[0].steps[:1], 2, seed=0, max_steps=1)
    assert all(len(c.steps) <= 1 for c in one) and any(len(c.steps) == 1 for c in one)
    from prmkit.search.common import Compute, sample_candidates

    (drawn, *_) = sample_candidates(policy, traces[0].problem, 2, seed=5, compute=Compute())
    assert drawn.metadata["sampling"] == {"policy": "endpoint:world", "seed": 5, "per_problem": 2} | {
        "model": "world",
        "temperature": 1.0,
        "top_p": 1.0,
        "max_tokens": 512,
        "chat": False,
        "step_format": policy.format.model_dump(),
    }  # fmt: skip: how the candidates were drawn, as the card's policy role reads it


def test_judge_through_the_chat_protocol(policy_server, world_traces_file):
    traces = read_traces(world_traces_file)
    judge = load_judge("endpoint", url=policy_server, model="world", concurrency=4)
    remote, summary = label_judge(traces, judge, concurrency=4)
    local, _ = label_judge(traces, SimulatedJudge())
    assert summary["ok"] == len(traces)
    assert [t.first_error("judge") for t in remote] == [t.first_error("judge") for t in local]
    raw = remote[0].steps[0].label("judge").provenance.params["raw"]
    assert raw.rstrip().endswith("}") and "\\boxed{" in raw
    # the judge's own settings in every label (one source: the same in all), the URL not among them
    settings = {t.steps[0].label("judge").provenance.params["settings"]["template"] for t in remote}
    assert settings == {"processbench-critic"}
    assert remote[0].steps[0].label("judge").provenance.params["settings"] == {
        "model": "world", "temperature": 0.0, "max_tokens": 2048, "seed": 0, "format": "processbench",
        "template": "processbench-critic",
    }  # fmt: skip
    custom = load_judge("endpoint", url=policy_server, model="world", template="{problem} {tagged_response}")
    assert custom.settings()["template"].startswith("sha256:")


def test_a_down_endpoint_fails_clearly():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free now, and nobody listens on it
    client = OpenAIClient(f"http://127.0.0.1:{port}", retries=1, backoff=0.01, timeout=2)
    with pytest.raises(EndpointError, match=r"after 2 tries .*Is the server running"):
        client.post("/v1/completions", {"prompt": "x"})
    policy = load_policy("endpoint", url=client.base_url, model="m", retries=0)
    with pytest.raises(EndpointError, match=r"127\.0\.0\.1"):
        policy.continue_from(Problem(id="p", text="q", answer="1"), [], 1)


def _paced_app(retry_after: str, requests: list[float]):
    """A server that answers 429 with ``Retry-After: retry_after`` (a callable's value: seconds or an
    HTTP-date) until the wait it named has passed; a retry that comes early is paced again from then,
    as a gateway's rate limiter does. ``requests`` gets the time of each request."""
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    app = FastAPI()
    until: list[float] = []

    @app.post("/v1/completions")
    async def completions() -> JSONResponse:
        now = time.time()
        requests.append(now)
        if until and now >= until[-1]:
            return JSONResponse({"choices": [{"index": 0, "text": "ok", "finish_reason": "stop"}]})
        value = retry_after() if callable(retry_after) else retry_after
        wait = float(value) if value.isdigit() else parsedate_to_datetime(value).timestamp() - now
        until.append(now + wait)
        return JSONResponse({"error": "rate limited"}, 429, headers={"Retry-After": value})

    return app


@pytest.mark.parametrize("form", ["seconds", "http-date"])
def test_a_429_is_retried_after_the_wait_its_retry_after_asks_for(form) -> None:
    """Issue 66: 429/503 were retried after 0.5-2.5 s whatever Retry-After said (21 % of a rate-limited
    job's items failed); the wait asked for is honoured and a paced try uses up no retry."""
    from tests.serving.conftest import run_server

    header = "1" if form == "seconds" else (lambda: formatdate(time.time() + 2, usegmt=True))
    requests: list[float] = []
    with run_server(_paced_app(header, requests)) as url:
        client = OpenAIClient(url, retries=1, backoff=0.01, timeout=5)
        started = time.monotonic()
        body = client.post("/v1/completions", {"prompt": "x"})
    assert body["choices"][0]["text"] == "ok"
    assert len(requests) == 2 and requests[1] - requests[0] >= 0.95  # no early retry, no try lost
    assert time.monotonic() - started < 4


def test_a_retry_after_past_the_retry_budget_fails_at_once_saying_so() -> None:
    from tests.serving.conftest import run_server

    requests: list[float] = []
    with run_server(_paced_app("3600", requests)) as url:
        client = OpenAIClient(url, retries=1, backoff=0.01, timeout=1)
        started = time.monotonic()
        with pytest.raises(
            EndpointError, match=r"HTTP 429.*asks to wait 3600 s \(Retry-After\), past the 2 s"
        ):
            client.post("/v1/completions", {"prompt": "x"})
    assert time.monotonic() - started < 1 and len(requests) == 1


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("7", 7.0), ("0", 0.0), ("-3", 0.0), ("soon", None), ("", None), ("inf", None), (None, None)],
)
def test_retry_after_is_read_in_seconds_and_unreadable_values_are_ignored(value, seconds) -> None:
    assert retry_after_s(value) == seconds


def test_retry_after_as_an_http_date() -> None:
    assert 28 <= retry_after_s(formatdate(time.time() + 30, usegmt=True)) <= 30
    assert retry_after_s("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past: no wait

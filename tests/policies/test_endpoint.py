from __future__ import annotations

import httpx
import pytest

from prmkit.core.model import Problem
from prmkit.formats.inputs import read_traces
from prmkit.labeling.judge import label_judge
from prmkit.labeling.mc import label_mc
from prmkit.policies import load_judge, load_policy
from prmkit.policies.http import EndpointError, OpenAIClient
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

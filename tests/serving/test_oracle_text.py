"""``prmkit serve world-oracle`` scores text-only requests (OpenRLHF's ``/get_reward``, prmkit's own
RemoteScorer): the world problem is read back from its words, so gold scores come back instead of 422."""

from __future__ import annotations

import httpx

from prmkit.core.model import Problem, Trace
from prmkit.scoring.aggregate import aggregate
from prmkit.scoring.remote import RemoteScorer
from prmkit.serving.reward_server import ServerConfig, create_app
from prmkit.world import generate_problems, sample_traces
from prmkit.world.oracle import OracleScorer
from tests.serving.conftest import run_server


def test_openrlhf_text_requests_get_gold_rewards_from_the_oracle():
    traces = sample_traces(generate_problems(8, seed=2, split="test"), 2, seed=2)
    expected = [aggregate(row, "min") for row in OracleScorer().score(traces)]
    assert 0.0 in expected and 1.0 in expected  # both kinds of trace are in the batch
    prompts = [t.problem.text + "\n" for t in traces]
    queries = [p + "\n".join(s.text for s in t.steps) for p, t in zip(prompts, traces, strict=True)]
    with run_server(create_app(OracleScorer(), ServerConfig())) as url, httpx.Client(base_url=url) as c:
        r = c.post("/get_reward", json={"query": queries, "prompts": prompts})
        assert r.status_code == 200, r.text
        assert r.json()["rewards"] == expected
        bare = [
            Trace(id=t.id, problem=Problem(id=t.problem.id, text=t.problem.text), steps=t.steps)
            for t in traces
        ]
        assert RemoteScorer(url).score(bare) == OracleScorer().score(traces)

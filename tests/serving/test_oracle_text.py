"""``prmkit serve arithmetic-oracle`` scores text-only requests (OpenRLHF's ``/get_reward``, prmkit's own
RemoteScorer): the world problem is read back from its words, so gold scores come back instead of 422,
also where the trainer wraps it in instructions (issue 36: verl's MATH rows, OpenRLHF's templates)."""

from __future__ import annotations

import httpx
import pytest

from prmkit.core.model import Problem, Trace
from prmkit.scoring.aggregate import aggregate
from prmkit.scoring.remote import RemoteScorer
from prmkit.serving.reward_server import ServerConfig, create_app
from prmkit.worlds.arithmetic import generate_problems, sample_traces
from prmkit.worlds.arithmetic.oracle import OracleScorer
from tests.serving.conftest import run_server
from tests.worlds.arithmetic.test_parse import PROBLEM, VERL_MATH, WRAPPERS, wrap


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


@pytest.mark.parametrize("wrapper", [w for w in WRAPPERS if w != "bare"])
def test_a_problem_wrapped_in_a_trainers_instructions_gets_gold_rewards(wrapper: str) -> None:
    traces = sample_traces(generate_problems(6, seed=3, split="test"), 2, seed=3)
    expected = [aggregate(row, "min") for row in OracleScorer().score(traces)]
    assert 0.0 in expected and 1.0 in expected
    prompts = [wrap(wrapper, t.problem.text) + "\n" for t in traces]
    queries = [p + "\n".join(s.text for s in t.steps) for p, t in zip(prompts, traces, strict=True)]
    with run_server(create_app(OracleScorer(), ServerConfig())) as url, httpx.Client(base_url=url) as c:
        r = c.post("/get_reward", json={"query": queries, "prompts": prompts})
        assert r.status_code == 200, r.text
        assert r.json()["rewards"] == expected
        wrapped = [
            Trace(id=t.id, problem=Problem(id=t.problem.id, text=p), steps=t.steps)
            for p, t in zip(prompts, traces, strict=True)
        ]
        assert RemoteScorer(url).score(wrapped) == OracleScorer().score(traces)


def test_no_problem_or_two_problems_are_refused_with_the_reason() -> None:
    steps = "4 + 3 = 7 apples.\nThe answer is 7."
    two = f"Example: {PROBLEM.replace('4 apples', '5 apples')}\n{PROBLEM} {VERL_MATH}\n"
    none = f"Suppose {PROBLEM} {VERL_MATH}\n"
    with run_server(create_app(OracleScorer(), ServerConfig())) as url, httpx.Client(base_url=url) as c:
        r2 = c.post("/get_reward", json={"query": [two + steps], "prompts": [two]})
        r0 = c.post("/get_reward", json={"query": [none + steps], "prompts": [none]})
    assert r2.status_code == 422 and "2 different world problems" in r2.json()["detail"]
    assert r0.status_code == 422 and "not a world problem" in r0.json()["detail"]

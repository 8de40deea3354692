"""No 5xx for anything a client can send to any route of ``prmkit serve`` or ``prmkit serve-policy``
(issue 66, item 5), as ``tests/annotate/test_hostile.py`` does for the annotation app.

Every POST route gets the same hostile bodies (malformed JSON, bodies that are not UTF-8, NaN, numbers
past a float or past 4300 digits, a lone surrogate, deep nesting, the wrong top-level type, nothing at
all), then inputs of the right shape with wrong types, huge numbers and empty lists for that route.
Each must be a 4xx whose body says what is wrong, never a 500 (``raise_server_exceptions=False``, so a
crash shows as the 500 a client would get). The reward server runs the world's oracle with a gate (for
``/verify``) and a random checkpoint (for ``/pooling`` on tokens); the policy server the world policy.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from prmkit.policies import load_judge, load_policy
from prmkit.serving.config import GateOptions
from prmkit.serving.policy_server import PolicyService
from prmkit.serving.policy_server import create_app as policy_app
from prmkit.serving.reward_server import ServerConfig, create_app
from prmkit.worlds.arithmetic import OracleScorer, generate_problems

PROBLEM = generate_problems(1, seed=0)[0]
HUGE = 10**30
GENERIC = [
    b'{"a": ',
    b"\xff\xfe{}",
    b'{"a": "\xff"}',
    b"[" * 5000 + b"]" * 5000,
    b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"a": 1e999}',
    b'{"a": ' + b"9" * 5000 + b"}",
    b'{"a": NaN}',
    b'{"a": "\\ud800"}',
    b'"a string"',
    b"null",
    b"[]",
    b"{}",
    b"",
]
"""Bodies no route can take."""
REWARD_ROUTES = ["/score", "/get_reward", "/pooling", "/verify"]
POLICY_ROUTES = ["/v1/completions", "/v1/chat/completions"]
SPECIFIC: list[tuple[str, dict[str, Any]]] = [
    ("/score", {"traces": "x"}),
    ("/score", {"traces": [5]}),
    ("/score", {"traces": [{"problem": 5, "steps": ["a"]}]}),
    ("/score", {"traces": [{"problem": "p", "steps": [["a"]]}]}),
    ("/score", {"traces": [{"problem": "p", "steps": [{"text": 5}]}]}),
    ("/score", {"traces": [{"problem": "p", "completion": 5}]}),
    ("/score", {"traces": [{"messages": "x"}]}),
    ("/score", {"traces": [{"messages": []}]}),
    ("/score", {"traces": [{"messages": [{"role": 5, "content": "a"}]}]}),
    ("/score", {"traces": [{"problem": "p", "steps": ["a"]}], "aggregation": 5}),
    ("/score", {"traces": [{"problem": "p", "steps": ["a"]}], "aggregation": "x" * 10_000}),
    ("/score", {"traces": [{"problem": "p", "steps": ["a"]}] * 100_000}),
    ("/get_reward", {"query": "x"}),
    ("/get_reward", {"query": [5]}),
    ("/get_reward", {"query": ["a"], "prompts": [5]}),
    ("/get_reward", {"query": [], "prompts": ["a"]}),
    ("/get_reward", {"query": ["a"], "prompts": "a"}),
    ("/pooling", {"input": {"a": 1}}),
    ("/pooling", {"input": [1.5]}),
    ("/pooling", {"input": [HUGE]}),
    ("/pooling", {"input": [[HUGE]]}),
    ("/pooling", {"input": [-1]}),
    ("/pooling", {"input": []}),
    ("/pooling", {"input": [[]]}),
    ("/pooling", {"input": [""], "add_special_tokens": False}),
    ("/pooling", {"messages": []}),
    ("/pooling", {"messages": [{"role": "user", "content": 5}]}),
    ("/pooling", {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": "x"}]}]}),
    ("/pooling", {"input": "a<extra_0>", "truncate_prompt_tokens": HUGE}),
    ("/pooling", {"input": "a<extra_0>", "priority": HUGE}),
    ("/pooling", {"input": "a<extra_0>", "encoding_format": "x"}),
    ("/pooling", {"input": "a<extra_0>", "dimensions": -1}),
    ("/verify", {"problem": "p", "steps": "x"}),
    ("/verify", {"problem": 5, "steps": ["a"]}),
    ("/verify", {"problem": "p", "steps": ["a"], "seed": HUGE}),
    ("/verify", {"problem": "p", "steps": ["a"], "seed": -5}),
    ("/verify", {"problem": "p", "steps": []}),
    ("/verify", {"messages": []}),
    ("/verify", {"problem": "p", "steps": ["a"] * 100_000}),
    ("/v1/completions", {"prompt": 5}),
    ("/v1/completions", {"prompt": [5]}),
    ("/v1/completions", {"prompt": "not a problem this server knows"}),
    ("/v1/completions", {"prompt": f"{PROBLEM.text}\n", "n": HUGE}),
    ("/v1/completions", {"prompt": f"{PROBLEM.text}\n", "n": 0}),
    ("/v1/completions", {"prompt": f"{PROBLEM.text}\n", "n": -1}),
    ("/v1/completions", {"prompt": f"{PROBLEM.text}\n", "seed": 2**63}),
    ("/v1/completions", {"prompt": f"{PROBLEM.text}\n", "seed": HUGE}),
    ("/v1/completions", {"prompt": f"{PROBLEM.text}\n", "stop": 5}),
    ("/v1/completions", {"prompt": f"{PROBLEM.text}\n", "temperature": "hot"}),
    ("/v1/completions", {"prompt": [f"{PROBLEM.text}\n"] * 100_000}),
    ("/v1/chat/completions", {"messages": "x"}),
    ("/v1/chat/completions", {"messages": []}),
    ("/v1/chat/completions", {"messages": [5]}),
    ("/v1/chat/completions", {"messages": [{"role": "user"}]}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}]}]}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "a"}], "seed": HUGE}),
]
"""Inputs of about the right shape that are wrong for the route: each a 4xx naming the problem."""


@pytest.fixture(scope="module")
def clients(random_prm: str) -> Iterator[dict[str, TestClient]]:
    """A client per route: the oracle reward server with a gate, the checkpoint for /pooling, the
    policy server."""
    from prmkit.scoring import load_scorer

    gate = GateOptions(threshold=0.5)
    oracle = TestClient(create_app(OracleScorer(), ServerConfig(gate=gate)), raise_server_exceptions=False)
    checkpoint = TestClient(
        create_app(load_scorer(random_prm), ServerConfig()), raise_server_exceptions=False
    )
    service = PolicyService(load_policy("arithmetic"), [PROBLEM], judge=load_judge("arithmetic"))
    policy = TestClient(policy_app(service), raise_server_exceptions=False)
    with oracle, checkpoint, policy:
        yield {
            **{route: oracle for route in REWARD_ROUTES},
            "/pooling": checkpoint,
            **{route: policy for route in POLICY_ROUTES},
        }


def _refused(r: Any) -> str:
    """The message of a 4xx answer (FastAPI's ``detail`` or OpenAI's ``error.message``); fails on
    anything else, naming the status."""
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
    body = r.json()
    message = body.get("detail") or body.get("error", {}).get("message")
    assert message, body
    return json.dumps(message)


@pytest.mark.parametrize("route", [*REWARD_ROUTES, "/pooling text", *POLICY_ROUTES])
@pytest.mark.parametrize("body", GENERIC, ids=range(len(GENERIC)))
def test_hostile_bodies_get_a_4xx_on_every_route(clients, route: str, body: bytes) -> None:
    client = clients["/score"] if route == "/pooling text" else clients[route]
    r = client.post(route.split()[0], content=body, headers={"content-type": "application/json"})
    _refused(r)


@pytest.mark.parametrize(("route", "body"), SPECIFIC, ids=[f"{r}-{i}" for i, (r, _) in enumerate(SPECIFIC)])
def test_wrong_types_huge_numbers_and_empty_lists_get_a_4xx(clients, route: str, body: dict) -> None:
    _refused(clients[route].post(route, json=body))

"""No 5xx for anything a client can send (issue 21, finding 5): strict JSON before FastAPI sees a body.

Each listed input used to end in a 500 (NaN echoed into a validation error FastAPI cannot encode, a
lone surrogate in ``model`` echoed into the response) or in a vague 400; each is now a 422 naming the
place. A hypothesis property then sends arbitrary JSON, and arbitrary bytes, to every POST endpoint.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from prmkit.serving.reward_server import ServerConfig, create_app
from tests.serving.conftest import HashScorer, run_server

JSON = {"content-type": "application/json"}
DEEP = b'{"traces": ' + b"[" * 5000 + b"]" * 5000 + b"}"
BAD_BODIES = [
    ("/score", b'{"traces": [{"problem": NaN, "steps": ["a"]}]}', "body: NaN is not JSON"),
    ("/score", b'{"traces": [{"problem": "p", "steps": [Infinity]}]}', "body: Infinity is not JSON"),
    ("/get_reward", b'{"query": ["a"], "labels": [-Infinity]}', "body: -Infinity is not JSON"),
    ("/score", b'{"traces": [{"problem": 1e999, "steps": ["a"]}]}', "1e999 overflows a 64-bit float"),
    ("/score", b'{"traces": [{"problem": "p", "steps": ["ok", "\\ud800x"]}]}', "body.traces[0].steps[1]: "),
    ("/score", b'{"traces": [{"problem": "p", "steps": ["a"]}], "\\udfff": 1}', "a key holds a lone UTF-16"),
    ("/pooling", b'{"model": "\\udc00", "input": "a<extra_0>"}', "body.model: holds a lone UTF-16 surrogate"),
    ("/get_reward", b'{"query": ["' + b"\\ud83d" + b'"]}', "body.query[0]: holds a lone UTF-16 surrogate"),
    ("/score", b'{"traces": [{"problem": ' + b"9" * 5000 + b', "steps": ["a"]}]}', "more than 4300 digits"),
    ("/score", DEEP, "body: nested deeper than 32 levels"),
    ("/get_reward", b'{"query": ["a"], "labels": ' + b"[" * 40 + b"]" * 40 + b"}", "nested deeper than 32"),
    (
        "/score",
        b'{"traces": [{"problem": "\xff", "steps": ["a"]}]}',
        "body: not UTF-8 (byte 0xff at offset 25)",
    ),
]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with run_server(create_app(HashScorer(), ServerConfig(max_body_bytes=200_000))) as base:
        yield base


@pytest.fixture(scope="module")
def client(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, headers=JSON, timeout=30) as c:
        yield c


@pytest.mark.parametrize(("path", "body", "message"), BAD_BODIES)
def test_hostile_json_gets_422_naming_the_place(url: str, path: str, body: bytes, message: str) -> None:
    r = httpx.post(url + path, content=body, headers=JSON, timeout=30)
    assert r.status_code == 422, r.text
    assert message in r.json()["detail"], r.json()


def test_text_that_only_looks_like_a_surrogate_is_scored(url: str) -> None:
    body = (
        '{"traces": [{"problem": "p", "steps": ["\\ud83d\\ude00 is a pair", "\\\\ud800 is six characters"]}]}'
    )
    r = httpx.post(url + "/score", content=body.encode(), headers=JSON, timeout=30)
    assert r.status_code == 200, r.text
    assert HashScorer().step_score("p", ["😀 is a pair"]) == r.json()["results"][0]["step_scores"][0]
    depth_4 = {"query": ["a"], "labels": [[[["nested", 1.5, None]]]]}  # the deepest a real client needs
    assert httpx.post(url + "/get_reward", json=depth_4, timeout=30).status_code == 200


SURROGATES = st.characters(codec=None, categories=["Cs"])
TEXT = st.text(st.one_of(st.characters(), SURROGATES), max_size=12)
HUGE_INT = st.integers(1, 4300).map(lambda digits: int("9" * digits))  # Python writes at most 4300
LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    HUGE_INT,
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
)
ANY_JSON = st.recursive(
    LEAF, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4), max_leaves=12
)
PLAIN = st.text(st.characters(), max_size=12)
TEXTISH = st.one_of(
    PLAIN, PLAIN, PLAIN, PLAIN, PLAIN, TEXT, ANY_JSON
)  # mostly well-typed, so many reach the scorer
AGGREGATION = st.one_of(st.sampled_from(["min", "prod", "last", "mean"]), TEXTISH)
SCORE = st.fixed_dictionaries(
    {"traces": st.lists(st.fixed_dictionaries({"problem": TEXTISH, "steps": st.lists(TEXTISH, max_size=4)}))},
    optional={"aggregation": AGGREGATION},
)
REWARD = st.fixed_dictionaries(
    {"query": st.lists(TEXTISH, max_size=3)}, optional={"prompts": ANY_JSON, "labels": ANY_JSON}
)
POOLING = st.fixed_dictionaries(
    {"input": st.one_of(TEXTISH, st.lists(TEXTISH, max_size=3))}, optional={"model": TEXTISH}
)
DEPTH = st.sampled_from([0] * 12 + [1, 40, 900, 3000])


def _encode(doc: object, depth: int) -> bytes:
    """JSON as a careless client writes it: NaN allowed, surrogates escaped, optionally nested deep."""
    text = json.dumps(doc, allow_nan=True)
    return ("[" * depth + text + "]" * depth).encode()


PATHS = st.sampled_from(["/score", "/get_reward", "/pooling"])
REQUESTS = st.one_of(
    st.tuples(st.just("/score"), st.builds(_encode, SCORE, DEPTH)),  # the right shape, hostile leaves
    st.tuples(st.just("/get_reward"), st.builds(_encode, REWARD, DEPTH)),
    st.tuples(st.just("/pooling"), st.builds(_encode, POOLING, DEPTH)),
    st.tuples(PATHS, st.builds(_encode, ANY_JSON, DEPTH)),
    st.tuples(PATHS, st.integers(4301, 20_000).map(lambda digits: b'{"query": [' + b"9" * digits + b"]}")),
    st.tuples(PATHS, st.binary(max_size=64)),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=REQUESTS)
def test_arbitrary_json_never_gets_a_5xx(client: httpx.Client, request: tuple[str, bytes]) -> None:
    path, body = request
    r = client.post(path, content=body)
    event(f"HTTP {r.status_code}")  # --hypothesis-show-statistics: how many reached the scorer
    assert r.status_code < 500, (r.status_code, r.text[:300])
    answer = r.json()  # every answer, error or not, is JSON
    if r.status_code >= 400:
        assert answer["detail"], answer

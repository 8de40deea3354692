"""No 5xx for anything a client can send to the annotation app (issue 21, finding 5), over real HTTP.

Each listed input used to end in a 500 (an id the database cannot hold, a total time of 10**30 ms, a
lone surrogate reaching SQLite, NaN echoed into a validation error FastAPI could not encode); each is
now a 4xx naming the field. A hypothesis property then sends arbitrary JSON (NaN, huge integers, lone
surrogates, deep nesting) and arbitrary bytes to every endpoint, and hostile login forms.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prmkit.annotate import auth, work
from prmkit.annotate.app import create_app
from prmkit.annotate.assign import assign_items
from prmkit.annotate.limits import Limits
from prmkit.annotate.store import Store

from .conftest import add_password_user, make_trace, serve_in_thread

JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[str, str, int]]:
    """(base URL, alice's bearer token, one of her assignment ids) on one server for the module."""
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('hostile') / 'labels.db'}")
    work.load_items(store, [make_trace(f"t{i}", ["3 + 4 = 7.", "The answer is 7."]) for i in range(4)])
    add_password_user(store, "alice", "pw-alice")
    token = auth.add_user(store, "alice")
    assign_items(store, ["alice"])
    aid = work.next_assignment(store, auth.User("alice", "annotator"))
    with serve_in_thread(create_app(store, limits=Limits(client_logins=1000))) as url:
        yield url, token, aid
    store.close()


@pytest.fixture(scope="module")
def client(server: tuple[str, str, int]) -> Iterator[httpx.Client]:
    url, token, _ = server
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
        yield c


def cases(aid: int) -> list[tuple[str, str, bytes | None, int, str]]:
    """(method, path, body, status, part of the message) for each input of the issue and its kin."""
    a = f"/api/assignments/{aid}"
    return [
        ("GET", f"/api/assignments/{2**70}", None, 422, "aid: Input should be less than or equal to"),
        ("GET", "/api/assignments/0", None, 422, "aid: Input should be greater than or equal to 1"),
        ("POST", f"/api/assignments/{2**70}/rate", b'{"step": 0, "rating": 1}', 422, "aid"),
        ("POST", f"{a}/finish", b'{"reason": "give_up", "total_time_ms": 1%s}' % (b"0" * 30), 422, "total_time_ms"),
        ("POST", f"{a}/rate", b'{"step": 0, "rating": NaN}', 422, "rating: Input should be a valid integer, found nan"),
        ("POST", f"{a}/rate", b'{"step": 0, "rating": 1, "time_ms": Infinity}', 422, "time_ms"),
        ("POST", f"{a}/rate", b'{"step": "0", "rating": 1}', 422, "step: Input should be a valid integer"),
        ("POST", f"{a}/flag", b'{"step": 0, "flagged": 1}', 422, "flagged: Input should be a valid boolean"),
        ("POST", f"{a}/rewrite", b'{"step": 0, "text": "ok \\ud800"}', 422, "text: expected Unicode text, found a lone"),
        ("POST", f"{a}/rewrite", b'{"step": 0, "text": "\xed\xa0\x80"}', 422, "lone surrogate"),
        ("POST", f"{a}/finish", b'{"reason": "give_up", "note": "\\udfff"}', 422, "note: expected Unicode text"),
        ("POST", f"{a}/finish", b'{"reason": "\\ud800"}', 422, "finish_reason: expected one of"),
        ("POST", f"{a}/rate", b'{"step": 0, "rating": 1, "\\ud800": 1}', 422, "unable to parse raw data as a unicode string"),
        ("POST", f"{a}/rate", b'{"step": %s, "rating": 1}' % (b"9" * 5000), 400, "body: expected JSON, found Exceeds"),
        ("POST", f"{a}/rate", b"[" * 5000 + b"]" * 5000, 400, "body: expected JSON, found maximum recursion"),
        ("POST", f"{a}/rate", b'{"step": 0, "rating": 1', 422, "body: expected JSON, found Expecting ',' delimiter at character 23"),
        ("POST", f"{a}/rate", b'{"step": 0, "rating": "\xff"}', 400, "body: expected JSON, found 'utf-8' codec"),
        ("POST", f"{a}/rate", b'{"step": %d, "rating": 1}' % 2**70, 422, "step: expected an index in 0..1"),
    ]  # fmt: skip


def test_each_listed_input_gets_a_4xx_naming_the_field(server, client: httpx.Client) -> None:
    for method, path, body, status, message in cases(server[2]):
        r = client.request(method, path, content=body, headers=JSON)
        assert r.status_code == status, (path, body and body[:60], r.status_code, r.text[:300])
        assert message in r.json()["detail"], (path, body and body[:60], r.json())
    # and valid requests are answered as before
    ok = client.post(f"/api/assignments/{server[2]}/rate", json={"step": 0, "rating": -1, "time_ms": 10**30})
    assert ok.status_code == 200 and ok.json()["rating"] == -1  # time is clamped, as it always was


def test_hostile_login_forms_are_4xx_or_the_form_again(server) -> None:
    url = server[0]
    with httpx.Client(base_url=url) as c:
        page = c.get("/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)[1]
        forms = [
            f"user=%ED%A0%80&password=x&csrf={csrf}",  # a lone surrogate, percent-encoded
            f"user=alice&password=%FF%FE&csrf={csrf}&next=%ED%A0%80",
            f"user={'a' * 5000}&password=x&csrf={csrf}",
            f"user=alice&password=x&csrf=%C3%A9{csrf}",  # non-ASCII CSRF token: compared, refused
            f"user=alice&password=x&csrf={csrf}&token=%ED%A0%80",
        ]
        for form in forms:
            r = c.post("/login", content=form, headers={"content-type": "application/x-www-form-urlencoded"})
            assert r.status_code in (303, 403), (form[:60], r.status_code, r.text[:200])
        multipart = c.post(
            "/login",
            files={"user": (None, b"\xff\xfe"), "password": (None, b"\xed\xa0\x80"), "csrf": (None, csrf)},
        )
        assert 300 <= multipart.status_code < 500, multipart.text[:200]


# --- arbitrary JSON ---------------------------------------------------------------------------------

TEXT = st.text(st.one_of(st.characters(), st.characters(categories=["Cs"])), max_size=20)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([2**31, 2**63, 2**70, 10**30, -(2**63) - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)
FIELDS = st.sampled_from(["step", "rating", "time_ms", "flagged", "text", "reason", "note", "total_time_ms"])
BODIES = st.one_of(
    st.dictionaries(st.one_of(FIELDS, TEXT), VALUES, max_size=5).map(lambda d: json.dumps(d).encode()),
    VALUES.map(lambda v: json.dumps(v).encode()),  # NaN and Infinity as Python writes them; \ud800 escapes
    st.integers(1, 3000).map(lambda d: b'{"step": ' + b"[" * d + b"]" * d + b"}"),  # deep nesting
    st.binary(max_size=60),
)
ACTIONS = st.sampled_from(["rate", "flag", "rewrite", "undo", "finish"])


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    action=ACTIONS,
    aid=st.one_of(st.none(), st.integers(), TEXT),
    body=BODIES,
    get=st.booleans(),
)
def test_arbitrary_json_never_gets_a_5xx(server, client: httpx.Client, action, aid, body, get) -> None:
    target = server[2] if aid is None else quote(str(aid).encode("utf-8", "surrogatepass"), safe="")
    if get:
        r = client.get(f"/api/assignments/{target}")
    else:
        r = client.post(f"/api/assignments/{target}/{action}", content=body, headers=JSON)
    assert r.status_code < 500, (action, target, body[:100], r.status_code, r.text[:300])
    if r.status_code >= 400 and r.headers.get("content-type") == "application/json":
        assert r.json()["detail"]

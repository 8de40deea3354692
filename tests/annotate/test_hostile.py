"""No 5xx for anything a client can send to the annotation app (issues 21 and 42), over real HTTP, against
SQLite and a real PostgreSQL server (where stricter types turned some inputs into 500s SQLite took).

Each listed input used to end in a 500 (an id the database cannot hold, a total time of 10**30 ms, a
lone surrogate reaching SQLite, NaN echoed into a validation error FastAPI could not encode; on
PostgreSQL a NUL character in a text, an id from 2**31 on, an account name with a NUL, a total time
summed past the 32-bit column); each is now a 4xx naming the field. A hypothesis property then sends
arbitrary JSON (NaN, huge integers, lone surrogates, deep nesting) and arbitrary bytes to every endpoint,
and hostile login forms.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import NamedTuple
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

from .conftest import add_password_user, make_trace, new_pg_database, serve_in_thread

JSON = {"content-type": "application/json"}
LONG_STEPS = 30
"""Steps of the long item: 30 steps rated at the 24-hour cap each sum past the 32-bit total column."""


class Server(NamedTuple):
    url: str
    token: str
    """alice's bearer token"""
    aid: int
    """one of alice's assignments (the listed inputs and the property use it)"""
    long_aid: int
    """alice's assignment of the long item"""


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def server(request, tmp_path_factory) -> Iterator[Server]:
    """One server per backend for the module, alice's work queued on it, and a lead with a password."""
    if request.param == "sqlite":
        db = f"sqlite:///{tmp_path_factory.mktemp('hostile') / 'labels.db'}"
    else:
        db = new_pg_database(request.getfixturevalue("postgres_server"))
    store = Store(db)
    work.load_items(store, [make_trace(f"t{i}", ["3 + 4 = 7.", "The answer is 7."]) for i in range(4)])
    work.load_items(store, [make_trace("long", [f"Step {i}: 3 + 4 = 7." for i in range(LONG_STEPS)])])
    add_password_user(store, "alice", "pw-alice")
    add_password_user(store, "lead", "pw-lead", "lead")
    token = auth.add_user(store, "alice")
    assign_items(store, ["alice"])
    alice = auth.User("alice", "annotator")
    aid = work.next_assignment(store, alice)
    long_aid = next(a["id"] for a in work.queue(store, alice) if a["n_steps"] == LONG_STEPS)
    with serve_in_thread(create_app(store, limits=Limits(client_logins=1000))) as url:
        yield Server(url, token, aid, long_aid)
    store.close()


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {server.token}"}, timeout=30
    ) as c:
        yield c


def cases(aid: int) -> list[tuple[str, str, bytes | None, int, str]]:
    """(method, path, body, status, part of the message) for each input of the issues and its kin."""
    a = f"/api/assignments/{aid}"
    return [
        ("GET", f"/api/assignments/{2**70}", None, 422, "aid: Input should be less than or equal to"),
        ("GET", f"/api/assignments/{2**31}", None, 422, "aid: Input should be less than or equal to 2147483647"),
        ("GET", f"/api/assignments/{2**63 - 1}", None, 422, "aid: Input should be less than or equal to 2147483647"),
        ("GET", "/api/assignments/0", None, 422, "aid: Input should be greater than or equal to 1"),
        ("POST", f"/api/assignments/{2**70}/rate", b'{"step": 0, "rating": 1}', 422, "aid"),
        ("POST", f"/api/assignments/{2**31}/rate", b'{"step": 0, "rating": 1}', 422, "aid: Input should be less"),
        ("POST", f"/api/assignments/{2**62}/flag", b'{"step": 0}', 422, "aid: Input should be less"),
        ("POST", f"/api/assignments/{2**31}/rewrite", b'{"step": 0, "text": "x"}', 422, "aid: Input should be less"),
        ("POST", f"/api/assignments/{2**31}/undo", None, 422, "aid: Input should be less"),
        ("POST", f"/api/assignments/{2**31}/finish", b'{"reason": "give_up"}', 422, "aid: Input should be less"),
        ("POST", f"{a}/finish", b'{"reason": "give_up", "total_time_ms": 1%s}' % (b"0" * 30), 422, "total_time_ms"),
        ("POST", f"{a}/rate", b'{"step": 0, "rating": NaN}', 422, "rating: Input should be a valid integer, found nan"),
        ("POST", f"{a}/rate", b'{"step": 0, "rating": 1, "time_ms": Infinity}', 422, "time_ms"),
        ("POST", f"{a}/rate", b'{"step": "0", "rating": 1}', 422, "step: Input should be a valid integer"),
        ("POST", f"{a}/flag", b'{"step": 0, "flagged": 1}', 422, "flagged: Input should be a valid boolean"),
        ("POST", f"{a}/rewrite", b'{"step": 0, "text": "ok \\ud800"}', 422, "text: expected Unicode text, found a lone"),
        ("POST", f"{a}/rewrite", b'{"step": 0, "text": "\xed\xa0\x80"}', 422, "lone surrogate"),
        ("POST", f"{a}/rewrite", b'{"step": 0, "text": "a\\u0000b"}', 422, "text: expected text without NUL characters"),
        ("POST", f"{a}/finish", b'{"reason": "give_up", "note": "\\udfff"}', 422, "note: expected Unicode text"),
        ("POST", f"{a}/finish", b'{"reason": "give_up", "note": "ok\\u0000"}', 422, "note: expected text without NUL characters"),
        ("POST", f"{a}/finish", b'{"reason": "\\ud800"}', 422, "finish_reason: expected one of"),
        ("POST", f"{a}/finish", b'{"reason": "give_up\\u0000"}', 422, "finish_reason: expected one of"),
        ("POST", f"{a}/rate", b'{"step": 0, "rating": 1, "\\ud800": 1}', 422, "unable to parse raw data as a unicode string"),
        ("POST", f"{a}/rate", b'{"step": %s, "rating": 1}' % (b"9" * 5000), 400, "body: expected JSON, found Exceeds"),
        ("POST", f"{a}/rate", b"[" * 5000 + b"]" * 5000, 400, "body: expected JSON, found maximum recursion"),
        ("POST", f"{a}/rate", b'{"step": 0, "rating": 1', 422, "body: expected JSON, found Expecting ',' delimiter at character 23"),
        ("POST", f"{a}/rate", b'{"step": 0, "rating": "\xff"}', 400, "body: expected JSON, found 'utf-8' codec"),
        ("POST", f"{a}/rate", b'{"step": %d, "rating": 1}' % 2**70, 422, "step: expected an index in 0..1"),
        ("POST", f"{a}/rate", b'{"step": %d, "rating": 1}' % 2**31, 422, "step: expected an index in 0..1"),
    ]  # fmt: skip


def test_each_listed_input_gets_a_4xx_naming_the_field(server: Server, client: httpx.Client) -> None:
    for method, path, body, status, message in cases(server.aid):
        r = client.request(method, path, content=body, headers=JSON)
        assert r.status_code == status, (path, body and body[:60], r.status_code, r.text[:300])
        assert message in r.json()["detail"], (path, body and body[:60], r.json())
    # and valid requests are answered as before
    ok = client.post(f"/api/assignments/{server.aid}/rate", json={"step": 0, "rating": -1, "time_ms": 10**30})
    assert ok.status_code == 200 and ok.json()["rating"] == -1  # time is clamped, as it always was


def test_a_total_time_summed_past_the_column_is_clamped(server: Server, client: httpx.Client) -> None:
    """Each step's time is clamped to a day, but 30 of them sum past what the 32-bit total holds."""
    rate = f"/api/assignments/{server.long_aid}/rate"
    for step in range(LONG_STEPS):
        r = client.post(rate, json={"step": step, "rating": 1, "time_ms": 10**30})
        assert r.status_code == 200, r.text[:300]
    done = client.post(f"/api/assignments/{server.long_aid}/finish", json={"reason": "solution"})
    assert done.status_code == 200, done.text[:300]
    assert done.json()["total_time_ms"] == work.MAX_TOTAL_MS


def test_lead_pages_refuse_ids_and_names_the_store_cannot_hold(server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        page = c.get("/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)[1]
        form = {"user": "lead", "password": "pw-lead", "csrf": csrf, "next": "/"}
        assert c.post("/login", data=form).status_code == 303
        for name in ("a%00b", "%00", "lead%00", "%ED%A0%80"):
            r = c.get(f"/lead/annotators/{name}")
            assert r.status_code == 404, (name, r.status_code, r.text[:300])
        assert c.get("/lead/annotators/alice").status_code == 200
        for aid in (2**31, 2**63 - 1):
            r = c.get(f"/annotate/{aid}")
            assert r.status_code == 422 and "aid: Input should be less than or equal to 2147483647" in r.text
        assert c.get(f"/annotate/{server.aid}").status_code == 200


def test_hostile_login_forms_are_4xx_or_the_form_again(server: Server) -> None:
    with httpx.Client(base_url=server.url) as c:
        page = c.get("/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)[1]
        forms = [
            f"user=%ED%A0%80&password=x&csrf={csrf}",  # a lone surrogate, percent-encoded
            f"user=alice&password=%FF%FE&csrf={csrf}&next=%ED%A0%80",
            f"user={'a' * 5000}&password=x&csrf={csrf}",
            f"user=alice&password=x&csrf=%C3%A9{csrf}",  # non-ASCII CSRF token: compared, refused
            f"user=alice&password=x&csrf={csrf}&token=%ED%A0%80",
            f"user=al%00ice&password=x&csrf={csrf}",  # NUL: PostgreSQL text cannot hold it
            f"user=alice&password=x%00&csrf={csrf}&token=%00&next=/%00",
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
def test_arbitrary_json_never_gets_a_5xx(
    server: Server, client: httpx.Client, action, aid, body, get
) -> None:
    target = server.aid if aid is None else quote(str(aid).encode("utf-8", "surrogatepass"), safe="")
    if get:
        r = client.get(f"/api/assignments/{target}")
    else:
        r = client.post(f"/api/assignments/{target}/{action}", content=body, headers=JSON)
    assert r.status_code < 500, (action, target, body[:100], r.status_code, r.text[:300])
    if r.status_code >= 400 and r.headers.get("content-type") == "application/json":
        assert r.json()["detail"]

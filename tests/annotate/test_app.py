"""The web app in-process (FastAPI's TestClient): login, CSRF, sessions that expire, escaping of hostile
problem text, what annotators and leads may see."""

from __future__ import annotations

import re
import time
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from prmkit.annotate import auth, work
from prmkit.annotate.app import create_app
from prmkit.annotate.assign import assign_items
from prmkit.annotate.render import math_html
from prmkit.annotate.store import Store

from .conftest import add_password_user, make_trace

EVIL = '<script>alert("pwned")</script><img src=x onerror=alert(1)> $a<b$'


@pytest.fixture
def app_store(tmp_path, traces, gold_traces) -> Store:
    store = Store(f"sqlite:///{tmp_path / 'labels.db'}")
    evil = make_trace("evil", [EVIL, "Then $\\frac{1}{2} \\times 4 = 2$.", "The answer is 2."], problem=EVIL)
    work.load_items(store, [evil, *traces])
    work.load_items(store, gold_traces, gold=True)
    add_password_user(store, "alice", "pw-alice")
    add_password_user(store, "bob", "pw-bob")
    add_password_user(store, "lead", "pw-lead", "lead")
    assign_items(store, ["alice", "bob"], overlap=1.0, seed=0)
    return store


def login(client: TestClient, user: str, password: str) -> str:
    """Log in through the form; returns the page's CSRF token."""
    page = client.get("/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)[1]
    resp = client.post(
        "/login", data={"user": user, "password": password, "csrf": csrf, "next": "/"}, follow_redirects=False
    )
    assert resp.status_code == 303 and resp.headers["location"] == "/"
    home = client.get("/annotate" if user != "lead" else "/lead")
    return re.search(r'name="csrf-token" content="([^"]+)"', home.text)[1]


def test_problem_text_is_escaped_never_run(app_store: Store) -> None:
    client = TestClient(create_app(app_store))
    login(client, "alice", "pw-alice")
    evil_id = next(
        a["id"] for a in work.queue(app_store, auth.User("alice", "annotator")) if a["n_steps"] == 3
    )
    page = None
    for a in work.queue(app_store, auth.User("alice", "annotator")):
        text = client.get(f"/annotate/{a['id']}").text
        if "pwned" in text:
            page = text
    assert evil_id and page is not None
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in page
    assert '<span class="math">a&lt;b</span>' in page
    assert '<span class="math">(1)/(2) × 4 = 2</span>' in page
    assert "script-src 'self'" in client.get("/login").headers["content-security-policy"]


def test_math_rendering_is_legible_and_safe() -> None:
    assert (
        str(math_html(r"$x^2 + y_{10} \le \sqrt{9}$"))
        == '<span class="math">x<sup>2</sup> + y<sub>10</sub> ≤ √(9)</span>'
    )
    assert str(math_html(r"cost $\$1.24$ and \(\boxed{29}\)")) == (
        'cost <span class="math">$1.24</span> and <span class="math"><span class="boxed">29</span></span>'
    )
    assert "<script" not in str(math_html(r"$\text{<script>}$ $x^<b>$"))


def test_login_csrf_and_session_expiry(app_store: Store) -> None:
    # 3 s: long enough that a loaded machine reaches the first rating inside it, short enough to wait out.
    client = TestClient(create_app(app_store, session_ttl=timedelta(seconds=3)))
    assert client.get("/annotate", follow_redirects=False).headers["location"].startswith("/login")
    page = client.get("/login")
    csrf_login = re.search(r'name="csrf" value="([^"]+)"', page.text)[1]
    forged = client.post("/login", data={"user": "alice", "password": "pw-alice", "csrf": "forged"})
    assert forged.status_code == 403
    wrong = client.post(
        "/login", data={"user": "alice", "password": "nope", "csrf": csrf_login}, follow_redirects=False
    )
    assert wrong.headers["location"] == "/login?error=1"
    csrf = login(client, "alice", "pw-alice")
    aid = work.next_assignment(app_store, auth.User("alice", "annotator"))
    body = {"step": 0, "rating": 1}
    assert client.post(f"/api/assignments/{aid}/rate", json=body).status_code == 403  # no CSRF header
    bad = client.post(f"/api/assignments/{aid}/rate", json=body, headers={"X-CSRF-Token": "x" + csrf})
    assert bad.status_code == 403
    ok = client.post(f"/api/assignments/{aid}/rate", json=body, headers={"X-CSRF-Token": csrf})
    assert ok.status_code == 200 and ok.json()["rating"] == 1
    time.sleep(3.2)
    assert (
        client.post(f"/api/assignments/{aid}/rate", json=body, headers={"X-CSRF-Token": csrf}).status_code
        == 401
    )
    assert client.get("/annotate", follow_redirects=False).headers["location"].startswith("/login")


def test_bearer_tokens_and_isolation_over_http(app_store: Store) -> None:
    client = TestClient(create_app(app_store))
    tokens = {
        u: auth.add_user(app_store, u, "lead" if u == "lead" else "annotator")
        for u in ("alice", "bob", "lead")
    }
    h = {u: {"Authorization": f"Bearer {t}"} for u, t in tokens.items()}
    alice_q = client.get("/api/queue", headers=h["alice"]).json()
    bob_q = client.get("/api/queue", headers=h["bob"]).json()
    assert alice_q and bob_q and {a["id"] for a in alice_q}.isdisjoint(a["id"] for a in bob_q)
    mine, theirs = alice_q[0]["id"], bob_q[0]["id"]
    got = client.get(f"/api/assignments/{mine}", headers=h["alice"]).json()
    assert set(got) >= {"problem", "steps", "ratings"} and "labels" not in str(got)  # no gold or model labels
    assert client.get(f"/api/assignments/{theirs}", headers=h["alice"]).status_code == 404
    assert (
        client.post(
            f"/api/assignments/{theirs}/rate", json={"step": 0, "rating": -1}, headers=h["alice"]
        ).status_code
        == 404
    )
    assert (
        client.post(
            f"/api/assignments/{mine}/rate", json={"step": 0, "rating": 5}, headers=h["alice"]
        ).status_code
        == 422
    )
    assert client.get(f"/api/assignments/{theirs}", headers=h["lead"]).status_code == 200
    assert client.get("/api/lead/report", headers=h["alice"]).status_code == 403
    assert client.get("/api/queue", headers={"Authorization": "Bearer nope"}).status_code == 401
    report = client.get("/api/lead/report", headers=h["lead"]).json()
    assert {a["user"] for a in report["annotators"]} == {"alice", "bob"}


def test_lead_page_and_annotator_forbidden(app_store: Store) -> None:
    client = TestClient(create_app(app_store))
    login(client, "alice", "pw-alice")
    assert client.get("/lead").status_code == 403
    lead = TestClient(create_app(app_store))
    login(lead, "lead", "pw-lead")
    page = lead.get("/lead").text
    assert "Fleiss" in page and "alice" in page and "bob" in page

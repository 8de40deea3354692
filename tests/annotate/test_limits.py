"""The annotation app's limits over real HTTP on loopback: login throttling (a burst from one client, the
lockout of one account that refuses even the right password until it ends), scrypt at the current cost
with old hashes upgraded, unknown names costing as much as real ones, and the request body limit.
Also the throttle's own rules with a fake clock (backoff, forgetting, bounded memory)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import select

from prmkit.annotate import auth, limits, work
from prmkit.annotate.app import create_app
from prmkit.annotate.assign import assign_items
from prmkit.annotate.limits import Limits, LoginThrottle
from prmkit.annotate.models import assignments, users
from prmkit.annotate.store import Store

from .conftest import add_password_user, make_trace, serve_in_thread


@pytest.fixture
def small_store(tmp_path) -> Iterator[Store]:
    store = Store(f"sqlite:///{tmp_path / 'labels.db'}")
    work.load_items(store, [make_trace("t0", ["3 + 4 = 7.", "The answer is 7."])])
    add_password_user(store, "alice", "pw-alice")
    assign_items(store, ["alice"])
    yield store
    store.close()


def _post_login(client: httpx.Client, user: str, password: str) -> httpx.Response:
    page = client.get("/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)[1]
    return client.post("/login", data={"user": user, "password": password, "csrf": csrf, "next": "/"})


def test_login_burst_from_one_client_is_throttled(
    small_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    scrypts: list[int] = []  # how many scrypt checks each attempt ran (counted, not timed)
    real = auth._scrypt
    monkeypatch.setattr(auth, "_scrypt", lambda *a: scrypts.append(1) or real(*a))
    app = create_app(small_store, limits=Limits(client_logins=3, client_window_s=60))
    with serve_in_thread(app) as url, httpx.Client(base_url=url) as client:
        answers, ran = [], []
        for i in range(12):
            before = len(scrypts)
            answers.append(_post_login(client, f"guess{i}", "wrong"))
            ran.append(len(scrypts) - before)
    codes = [r.status_code for r in answers]
    assert codes == [303] * 3 + [429] * 9, codes  # three tries (wrong: back to the form), then throttled
    refused = answers[-1]
    assert "Too many login attempts from this address; try again in" in refused.text
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert refused.headers["content-security-policy"]  # a normal page, with the security headers
    assert ran == [1] * 3 + [0] * 9, ran  # a throttled attempt hashes nothing


def test_spoofed_forwarded_for_from_loopback_does_not_reset_the_client_limit(small_store: Store) -> None:
    """Issue 42: uvicorn believed ``X-Forwarded-For`` from 127.0.0.1, so a local client sending a fresh
    address each time made 25 of 25 attempts (25 scrypt checks). By default no proxy is trusted."""
    limits = Limits(client_logins=3, client_window_s=60)
    with serve_in_thread(create_app(small_store, limits=limits)) as url, httpx.Client(base_url=url) as client:
        codes = []
        for i in range(8):
            client.headers["x-forwarded-for"] = f"203.0.113.{i}"
            client.headers["forwarded"] = f"for=203.0.113.{i}"
            codes.append(_post_login(client, f"guess{i}", "wrong").status_code)
    assert codes == [303] * 3 + [429] * 5, codes


def test_forwarded_for_is_believed_from_a_trusted_proxy(small_store: Store) -> None:
    """With the proxy's address trusted, each client behind it is counted on its own (by the address the
    proxy appends last); an IPv6 client is counted by its /64, which it commonly owns whole."""
    limits = Limits(client_logins=2, client_window_s=60, trusted_proxies=("127.0.0.0/8",))
    app = create_app(small_store, limits=limits)
    with serve_in_thread(app, limits) as url, httpx.Client(base_url=url) as client:

        def attempt(forwarded_for: str) -> int:
            client.headers["x-forwarded-for"] = forwarded_for
            return _post_login(client, f"nobody-{forwarded_for}", "wrong").status_code  # no lockout

        # a client's own header is kept by the proxy in front of what it appends: only the last counts
        first = [attempt(f"198.51.100.{i}, 203.0.113.7") for i in range(3)]
        assert first == [303, 303, 429], first
        assert attempt("203.0.113.8") == 303  # another client behind the same proxy
        assert [attempt(f"2001:db8:1:2::{i}") for i in (1, 2, 3)] == [303, 303, 429]
        assert attempt("2001:db8:1:3::1") == 303  # another /64


def test_right_password_is_refused_until_the_lockout_ends(small_store: Store) -> None:
    app = create_app(small_store, limits=Limits(login_failures=3, lockout_s=2.0))
    with serve_in_thread(app) as url, httpx.Client(base_url=url) as client:
        wrong = [_post_login(client, "alice", f"guess{i}") for i in range(3)]
        assert [r.headers["location"] for r in wrong] == ["/login?error=1"] * 3
        locked = _post_login(client, "alice", "pw-alice")  # the right one, inside the lockout
        assert locked.status_code == 429 and "retry-after" in locked.headers
        assert "Too many wrong passwords for this name" in locked.text
        assert client.get("/annotate").status_code == 303  # not logged in
        # a name that does not exist is locked the same way: the answer tells nothing about accounts
        for i in range(3):
            _post_login(client, "nobody", f"guess{i}")
        assert _post_login(client, "nobody", "x").status_code == 429
        time.sleep(float(locked.headers["retry-after"]) + 0.2)
        ok = _post_login(client, "alice", "pw-alice")
        assert ok.status_code == 303 and ok.headers["location"] == "/"
        assert client.get("/annotate", follow_redirects=True).url.path.startswith("/annotate/")


def test_scrypt_cost_is_current_and_old_hashes_are_upgraded_on_login(small_store: Store) -> None:
    def stored() -> str:
        with small_store.read() as conn:
            return conn.execute(select(users.c.password_hash).where(users.c.id == "bob")).scalar_one()

    auth.add_user(small_store, "bob")
    old = auth.hash_password("pw-bob", n=2**14)  # what prmkit wrote before: N=2**14
    with small_store.write() as conn:
        conn.execute(users.update().where(users.c.id == "bob").values(password_hash=old))
    assert auth.needs_rehash(stored())
    assert auth.login_password(small_store, "bob", "wrong") is None and stored() == old
    assert auth.login_password(small_store, "bob", "pw-bob") == auth.User("bob", "annotator")
    upgraded = stored()
    assert upgraded.startswith("scrypt$131072$8$1$") and not auth.needs_rehash(upgraded)
    assert auth.login_password(small_store, "bob", "pw-bob") == auth.User("bob", "annotator")


def test_unknown_names_cost_the_same_scrypt_as_real_accounts(
    small_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer's timing must not tell which accounts exist: every failed login runs exactly one scrypt
    at the current cost, whether the name is a real account, unknown, or an account without a password.
    (Counted, not timed: wall-clock ratios under a loaded test run say nothing; before the dummy hash an
    unknown name ran no scrypt at all.)"""
    auth.add_user(small_store, "tokenonly")  # an account without a password
    calls: list[tuple[int, int, int, int]] = []
    real = auth.hashlib.scrypt

    def counted(password: bytes, *, salt: bytes, n: int, r: int, p: int, dklen: int, maxmem: int) -> bytes:
        calls.append((n, r, p, dklen))
        return real(password, salt=salt, n=n, r=r, p=p, dklen=dklen, maxmem=maxmem)

    monkeypatch.setattr(auth.hashlib, "scrypt", counted)
    current = (auth.SCRYPT["n"], auth.SCRYPT["r"], auth.SCRYPT["p"], 32)
    for user in ("alice", "nobody", "tokenonly", "not a valid id"):
        calls.clear()
        assert auth.login_password(small_store, user, "wrong") is None
        assert calls == [current], user


def test_request_bodies_over_the_limit_get_413_and_nothing_is_stored(small_store: Store) -> None:
    token = auth.add_user(small_store, "alice")
    aid = work.next_assignment(small_store, auth.User("alice", "annotator"))
    h = {"Authorization": f"Bearer {token}"}
    with serve_in_thread(create_app(small_store)) as url, httpx.Client(base_url=url, headers=h) as client:
        note = "x" * 30_000_000
        big = client.post(f"/api/assignments/{aid}/finish", json={"reason": "give_up", "note": note})
        assert big.status_code == 413
        assert "request body: expected at most 1048576 bytes, found 30000" in big.json()["detail"]

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
            yield b'{"reason": "give_up", "note": "'
            for _ in range(40):
                yield b"y" * 100_000
            yield b'"}'

        chunked = client.post(
            f"/api/assignments/{aid}/finish", content=chunks(), headers={"content-type": "application/json"}
        )
        assert chunked.status_code == 413 and "--max-body-bytes" in chunked.json()["detail"]
        with small_store.read() as conn:
            row = conn.execute(select(assignments).where(assignments.c.id == aid)).one()
        assert row.status == "pending" and row.finish_note is None
        # under the limit, as before: a long rewritten step (chunked too) is saved
        text = "z" * 15_000
        ok = client.post(f"/api/assignments/{aid}/rewrite", json={"step": 0, "text": text})
        assert ok.status_code == 200 and ok.json()["rewrite"] == text
        small = client.post(
            f"/api/assignments/{aid}/rate",
            content=iter([b'{"step": 0,', b' "rating": 1}']),
            headers={"content-type": "application/json"},
        )
        assert small.status_code == 200 and small.json()["rating"] == 1


# --- the throttle's rules, with a fake clock -----------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_lockout_doubles_up_to_the_cap_and_a_success_resets_it() -> None:
    clock = Clock()
    throttle = LoginThrottle(Limits(login_failures=3, lockout_s=10, max_lockout_s=35), clock)
    for _ in range(2):
        throttle.failed("alice")
    assert throttle.account_wait("alice") == 0
    waits = []
    for _ in range(4):
        throttle.failed("alice")
        waits.append(throttle.account_wait("alice"))
        clock.t += waits[-1]
    assert waits == [10, 20, 35, 35]
    assert throttle.account_wait("bob") == 0  # per account
    throttle.succeeded("alice")
    throttle.failed("alice")
    assert throttle.account_wait("alice") == 0
    clock.t += limits.FORGET_S + 1  # old failures are forgotten
    throttle.failed("alice")
    throttle.failed("alice")
    assert throttle.account_wait("alice") == 0


def test_client_window_slides_and_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    throttle = LoginThrottle(Limits(client_logins=2, client_window_s=10), clock)
    assert throttle.client_wait("1.2.3.4") == 0 and throttle.client_wait("1.2.3.4") == 0
    assert throttle.client_wait("1.2.3.4") == 10
    assert throttle.client_wait("5.6.7.8") == 0  # per client
    clock.t += 10
    assert throttle.client_wait("1.2.3.4") == 0
    monkeypatch.setattr(limits, "MAX_TRACKED", 100)
    for i in range(1000):
        throttle.client_wait(f"10.0.{i // 256}.{i % 256}")
        throttle.failed(f"user{i}")
    assert len(throttle._clients) == 100 and len(throttle._accounts) == 100

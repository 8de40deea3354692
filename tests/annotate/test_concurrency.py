"""20 annotator clients over real HTTP (httpx against ``prmkit annotate serve`` on loopback) make 1,000
ratings while the server is SIGKILLed and restarted mid-run: no acknowledged rating is lost, and no
annotator can read or write another's work. Runs against SQLite and a real PostgreSQL server."""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from sqlalchemy import select

from prmkit.annotate import auth, work
from prmkit.annotate.assign import assign_items
from prmkit.annotate.models import assignments, events, ratings
from prmkit.annotate.store import Store

from .conftest import make_trace

CLIENTS, ITEMS_EACH, STEPS = 20, 10, 5  # 20 x 10 x 5 = 1,000 ratings


class Acks:
    """Ratings the server acknowledged (HTTP 200), by (assignment, step)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done: dict[tuple[int, int], int] = {}

    def add(self, aid: int, step: int, rating: int) -> None:
        with self.lock:
            self.done[(aid, step)] = rating

    def snapshot(self) -> dict[tuple[int, int], int]:
        with self.lock:
            return dict(self.done)


def _post_until_acked(client: httpx.Client, url: str, body: dict, deadline: float) -> httpx.Response:
    """Retry through a dead or restarting server; a request that got no answer was never acknowledged."""
    while True:
        try:
            return client.post(url, json=body)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _annotator(base: str, token: str, victim: int, acks: Acks, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    deadline = time.monotonic() + 150
    out = {"forbidden_reads": 0, "forbidden_writes": 0}
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        mine = client.get("/api/queue").json()
        # someone else's assignment: reading and writing it must both look like "not found"
        out["forbidden_reads"] += client.get(f"/api/assignments/{victim}").status_code == 404
        out["forbidden_writes"] += (
            _post_until_acked(
                client, f"/api/assignments/{victim}/rate", {"step": 0, "rating": -1}, deadline
            ).status_code
            == 404
        )
        for a in mine:
            for step in range(STEPS):
                rating = rng.choice((-1, 0, 1))
                body = {"step": step, "rating": rating, "time_ms": rng.randint(100, 5000)}
                resp = _post_until_acked(client, f"/api/assignments/{a['id']}/rate", body, deadline)
                assert resp.status_code == 200, resp.text
                acks.add(a["id"], step, rating)
    return out


@pytest.mark.slow
def test_concurrent_annotators_survive_a_server_kill(db_url: str, live_server, tmp_path) -> None:
    store = Store(db_url)
    traces = [
        make_trace(f"c{i}", [f"Step {j}: {i} + {j} = {i + j}." for j in range(STEPS)])
        for i in range(CLIENTS * ITEMS_EACH)
    ]
    work.load_items(store, traces)
    names = [f"ann{i:02d}" for i in range(CLIENTS)]
    tokens = {n: auth.add_user(store, n) for n in names}
    assign_items(store, names, seed=0)
    queues = {n: [a["id"] for a in work.queue(store, auth.User(n, "annotator"))] for n in names}
    assert all(len(q) == ITEMS_EACH for q in queues.values())
    server = live_server(db_url)
    server.start()

    acks = Acks()
    started = time.monotonic()
    with ThreadPoolExecutor(CLIENTS) as pool:
        futures = [
            pool.submit(_annotator, server.url, tokens[n], queues[names[(i + 1) % CLIENTS]][0], acks, i)
            for i, n in enumerate(names)
        ]
        while len(acks.snapshot()) < 300 and not any(f.done() for f in futures):
            time.sleep(0.01)
        server.kill()  # SIGKILL mid-run
        before = acks.snapshot()
        with store.read() as conn:
            on_disk = {(r.assignment_id, r.step_index): r.rating for r in conn.execute(select(ratings))}
        lost = {k: v for k, v in before.items() if on_disk.get(k) != v}
        server.start()
        results = [f.result() for f in futures]
    elapsed = time.monotonic() - started
    print(
        f"\n{db_url.split(':')[0]}: {len(before)} ratings acknowledged before the SIGKILL; all 1,000 in {elapsed:.1f} s"
    )

    assert 300 <= len(before) < CLIENTS * ITEMS_EACH * STEPS, "the kill must land mid-run"
    assert lost == {}, f"{len(lost)} acknowledged rating(s) missing right after the kill"
    final = acks.snapshot()
    assert len(final) == CLIENTS * ITEMS_EACH * STEPS
    with store.read() as conn:
        stored = {(r.assignment_id, r.step_index): r.rating for r in conn.execute(select(ratings))}
        owner = dict(conn.execute(select(assignments.c.id, assignments.c.user_id)).all())
        writers = conn.execute(select(events.c.assignment_id, events.c.user_id)).all()
    assert stored == final  # every acknowledged rating, and nothing else (no stray cross-writes)
    assert all(owner[aid] == user for aid, user in writers), "an event was written by someone else"
    assert sum(r["forbidden_reads"] for r in results) == CLIENTS
    assert sum(r["forbidden_writes"] for r in results) == CLIENTS
    store.close()

"""Issue 22, items 4 and 6: prices are text, not TeX; the lead page links each annotator's items (read only)
with counts that agree with ``assign``; ``--overlap`` is an exact share; ``serve`` prints its URL.

Real HTTP on loopback throughout (uvicorn in a thread, or ``prmkit annotate serve`` in a subprocess).
Before the fix ``$50 ... $10`` became a math span, the lead page had no links and no per-kind counts,
``--overlap 0.2`` of 10 items double-labelled anywhere from 0 to 5 depending on the seed, and ``serve``
printed nothing when the store already had a lead.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from prmkit.annotate import work
from prmkit.annotate.app import create_app
from prmkit.annotate.assign import assign_items
from prmkit.annotate.render import math_html
from prmkit.annotate.store import Store

from .conftest import add_password_user, make_trace, serve_in_thread

PRICES = "Janet pays $50 for the lessons and $10 for the book. How much is left of $100?"


def test_prices_are_text_and_tex_is_still_math() -> None:
    assert str(math_html(PRICES)) == PRICES
    assert str(math_html("$5.50 each, and $6.50 for two")) == "$5.50 each, and $6.50 for two"
    assert str(math_html("she has$5 and$10")) == "she has$5 and$10"
    assert str(math_html("$x$ costs $5")) == '<span class="math">x</span> costs $5'
    assert str(math_html("$5 and $x^2$")) == '$5 and <span class="math">x<sup>2</sup></span>'


def login(c: httpx.Client, user: str, password: str) -> None:
    page = c.get("/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)[1]
    form = {"user": user, "password": password, "csrf": csrf, "next": "/"}
    r = c.post("/login", data=form, follow_redirects=False)
    assert r.status_code == 303, r.text


@pytest.fixture(scope="module")
def lead_server(tmp_path_factory, request) -> Iterator[tuple[str, dict]]:
    traces = [make_trace(f"t{i}", ["3 + 4 = 7.", "The answer is 7."], problem=PRICES) for i in range(10)]
    gold = [make_trace(f"g{i}", ["3 + 4 = 7.", "The answer is 7."], [1, 1]) for i in range(3)]
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('lead') / 'labels.db'}")
    work.load_items(store, traces)
    work.load_items(store, gold[:2], gold=True)
    work.load_items(store, gold[2:], gold=True, screening=True)
    for name in ("alice", "bob"):
        add_password_user(store, name, "pw-" + name)
    add_password_user(store, "lead", "pw-lead", "lead")
    report = assign_items(store, ["alice", "bob"], overlap=0.2, gold_rate=0.2, seed=0)
    with serve_in_thread(create_app(store)) as url:
        yield url, {n: (report.data[n], report.gold[n], report.screening[n]) for n in ("alice", "bob")}
    store.close()


def test_item_page_shows_prices_as_text(lead_server) -> None:
    url, _ = lead_server
    with httpx.Client(base_url=url, follow_redirects=True, timeout=30) as c:
        login(c, "alice", "pw-alice")
        pages = [c.get(f"/annotate/{a['id']}").text for a in c.get("/api/queue").json()]
    page = next(p for p in pages if "Janet" in p)
    assert "$50 for the lessons and $10 for the book" in page
    assert '<span class="math">50' not in page


def test_lead_page_links_each_annotators_items_read_only(lead_server) -> None:
    url, counts = lead_server
    with httpx.Client(base_url=url, follow_redirects=True, timeout=30) as c:
        login(c, "lead", "pw-lead")
        lead = c.get("/lead").text
        for name, (data, gold, screening) in counts.items():
            assert f'href="/lead/annotators/{name}"' in lead
            # the counts assign printed, on the lead page and on the annotator's own page
            assert f'<td class="counts">{data} · {gold} · {screening}</td>' in lead
            mine = c.get(f"/lead/annotators/{name}")
            assert mine.status_code == 200
            assert f"{data + gold + screening} item(s):" in mine.text
            assert f"{data} data,\n    {gold} gold,\n    {screening} screening" in mine.text
            links = re.findall(r'href="/annotate/(\d+)"', mine.text)
            assert len(links) == data + gold + screening
            item = c.get(f"/annotate/{links[0]}").text
            assert 'data-readonly="true"' in item and f"by {name}" in item
            # and the lead cannot rate it through the API
            r = c.post(f"/api/assignments/{links[0]}/rate", json={"step": 0, "rating": 1})
            assert r.status_code in (403, 404), r.text
        assert c.get("/lead/annotators/nobody").status_code == 404
        assert c.get("/lead/annotators/" + "a" * 300).status_code == 422
    with httpx.Client(base_url=url, follow_redirects=True, timeout=30) as c:
        login(c, "alice", "pw-alice")
        assert c.get("/lead/annotators/bob").status_code == 403


@pytest.mark.parametrize(
    "n_items, overlap, expected", [(10, 0.2, 2), (10, 0.25, 3), (7, 0.5, 4), (5, 1.0, 5)]
)
def test_overlap_is_an_exact_share(tmp_path: Path, n_items, overlap, expected) -> None:
    for seed in range(8):  # a per-item coin flip would give a different count for some seed
        store = Store(f"sqlite:///{tmp_path / f'{seed}.db'}")
        work.load_items(store, [make_trace(f"t{i}", ["1 + 1 = 2."]) for i in range(n_items)])
        report = assign_items(store, ["a", "b", "c"], overlap=overlap, seed=seed, create_users=True)
        store.close()
        assert report.double_labelled == expected, seed
        assert sum(report.data.values()) == n_items + expected  # each double-labelled item held twice


def test_serve_prints_its_url_at_start_up(live_server, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'labels.db'}"
    store = Store(db)
    add_password_user(store, "lead", "pw-lead", "lead")  # a lead exists: no token line to carry the URL
    store.close()
    server = live_server(db)
    server.start()
    log = tmp_path / f"server-{server.port}.log"
    deadline = time.monotonic() + 10
    while "serving at" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    text = log.read_text()
    assert f"serving at {server.url}/" in text and f"{server.url}/lead" in text, text

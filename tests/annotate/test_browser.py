"""A real browser (headless Chromium through Playwright) annotates with the keyboard against a real
server (which is killed and restarted under it: the rating made meanwhile is kept and sent later); the
database holds the ratings, export gives the right labels, and both pages are saved as screenshots
under tmp_path (annotator.png, lead.png). An agent trajectory is rated the same way, its tool calls
and results shown (annotate-agent.png)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from prmkit.annotate import auth, work
from prmkit.annotate.assign import assign_items
from prmkit.annotate.export import export_traces
from prmkit.annotate.store import Store

from .conftest import HOSTILE_OBSERVATION, agent_trace, make_trace

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _launch(p):
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed (/usr/bin/chromium); run `make system-deps`")
    return p.chromium.launch(executable_path=CHROMIUM, args=ARGS)


def _login(page, base: str, user: str, password: str) -> None:
    page.goto(f"{base}/login")
    page.fill("#user", user)
    page.fill("#password", password)
    page.click("#login")


@pytest.mark.slow
def test_keyboard_annotation_in_a_real_browser(tmp_path: Path, live_server, gold_traces) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    db = f"sqlite:///{tmp_path / 'labels.db'}"
    store = Store(db)
    data = make_trace(
        "t-browser",
        [
            "Sam has $3$ apples and buys $4$ more, so $3 + 4 = 7$ apples.",
            "Half of them are red: $\\frac{7}{2} = 3.5$, which is not a whole number of apples.",
            "The answer is $\\boxed{7}$.",
        ],
        problem="Sam has $3$ apples and buys $4$ more. How many apples does he have? (Use $x^2 \\le 10$.)",
    )
    work.load_items(store, [data])
    work.load_items(store, gold_traces[:1], gold=True)
    auth.add_user(store, "alice", password="alice-pw")
    auth.add_user(store, "bob", password="bob-pw")
    auth.add_user(store, "lead", "lead", password="lead-pw")
    assign_items(store, ["alice", "bob"], overlap=1.0, gold_rate=0.5, seed=0)
    alice = auth.User("alice", "annotator")
    first, second = [a["id"] for a in work.queue(store, alice)]
    server = live_server(db)
    server.start()

    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        _login(page, server.url, "alice", "alice-pw")
        page.wait_for_url(f"**/annotate/{first}")
        items = {first: None, second: None}
        for aid in (first, second):
            trace_id = work.assignment_state(store, alice, aid)["trace"].id
            items[aid] = trace_id
        data_aid = next(a for a, t in items.items() if t == "t-browser")
        gold_aid = next(a for a, t in items.items() if t != "t-browser")
        saved = "#step-{} .saved[data-ok=true]"

        def annotate_data_item() -> None:
            kb = page.keyboard
            kb.press("3")  # step 1: great
            page.wait_for_selector(saved.format(0))
            kb.press("1")  # step 2: bad -> with "stop at first bad step" on, the rest stays hidden
            page.wait_for_selector(saved.format(1))
            assert page.is_hidden("#step-2")
            kb.press("u")  # undo the -1
            page.wait_for_selector('#step-1[data-rating=""]')  # (the page's CSP forbids eval-based waits)
            kb.press("k")  # back to step 1 ...
            kb.press("f")  # ... mark it unsure
            kb.press("j")
            kb.press("0")  # step 2: okay
            page.wait_for_selector("#step-2:not([hidden])")
            kb.press("+")  # step 3: great
            page.wait_for_selector(saved.format(2))
            page.wait_for_selector("#submit:not([disabled])")

        def annotate_gold_item() -> None:
            page.keyboard.press("3")
            page.wait_for_selector(saved.format(0))
            server.kill()  # the server dies; the next rating waits in the page's outbox
            page.keyboard.press("-")  # first error at step 2: stop there
            page.wait_for_selector("#status:has-text('server unreachable')")
            assert page.is_disabled("#submit")  # nothing can be submitted past an unsaved rating
            server.start()
            page.wait_for_selector(saved.format(1), timeout=30_000)  # replayed once it is back
            page.wait_for_selector("#submit:not([disabled])")
            assert "first error at step 2" in page.inner_text("#verdict")

        for aid in (first, second):
            page.wait_for_url(f"**/annotate/{aid}")
            if aid == data_aid:
                annotate_data_item()
                page.screenshot(path=str(tmp_path / "annotator.png"), full_page=True)
            else:
                annotate_gold_item()
            page.keyboard.press("Enter")
            page.wait_for_url(lambda url, aid=aid: not url.endswith(f"/annotate/{aid}"))
        page.wait_for_selector("text=Queue finished")

        # bob labels the same two items through the API functions, so the lead sees agreement
        bob = auth.User("bob", "annotator")
        for a in work.queue(store, bob):
            is_gold = work.assignment_state(store, bob, a["id"])["trace"].id != "t-browser"
            for step, r in enumerate([1, -1] if is_gold else [1, 1, 1]):
                work.rate(store, bob, a["id"], step, r, time_ms=1500)
            work.finish(store, bob, a["id"], "found_error" if is_gold else "solution")

        lead = browser.new_page(viewport={"width": 1100, "height": 900})
        _login(lead, server.url, "lead", "lead-pw")
        lead.wait_for_url("**/lead")
        lead.wait_for_selector("#annotators")
        lead.screenshot(path=str(tmp_path / "lead.png"), full_page=True)
        lead_text = lead.inner_text("main")
        browser.close()

    print(f"\nscreenshots: {tmp_path / 'annotator.png'} {tmp_path / 'lead.png'}")
    state = work.assignment_state(store, alice, data_aid)
    assert state["status"] == "done" and state["finish_reason"] == "solution"
    assert {i: (r["rating"], r["flagged"]) for i, r in state["ratings"].items()} == {
        0: (1, True),
        1: (0, False),
        2: (1, False),
    }
    assert state["total_time_ms"] > 0
    gold_state = work.assignment_state(store, alice, gold_aid)
    assert gold_state["finish_reason"] == "found_error"
    assert {i: r["rating"] for i, r in gold_state["ratings"].items()} == {0: 1, 1: -1}

    exported = {t.id: t for t in export_traces(store)}
    labelled = exported["t-browser"]
    assert labelled.ratings("human:alice") == [1, 0, 1]
    assert labelled.ratings("human:bob") == [1, 1, 1]
    lab = labelled.steps[0].label("human:alice")
    assert lab.provenance.method == "human" and lab.provenance.actor == "alice"
    assert lab.metadata["flagged"] is True and lab.provenance.params["time_ms"] >= 0
    assert lab.provenance.params["finish_reason"] == "solution"
    assert exported[gold_traces[0].id].first_error("human:alice") == 1 == gold_traces[0].first_error("gold")
    assert "alice" in lead_text and "100%" in lead_text  # alice's gold accuracy
    assert (tmp_path / "annotator.png").stat().st_size > 10_000 and (
        tmp_path / "lead.png"
    ).stat().st_size > 10_000
    store.close()


@pytest.mark.slow
def test_an_agent_trajectory_in_a_real_browser(tmp_path: Path, live_server) -> None:
    """Tool calls shown, results collapsed until opened (by a click and by ``o``), a hostile result shown
    as text, every assistant message rated with keys and clicks; the stored labels and the export match.
    With PRMKIT_SCREENSHOTS=DIR the page is also saved as DIR/annotate-agent.png (the docs' picture)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    db = f"sqlite:///{tmp_path / 'labels.db'}"
    store = Store(db)
    work.load_items(store, [agent_trace()])
    auth.add_user(store, "alice", password="alice-pw")
    assign_items(store, ["alice"])
    alice = auth.User("alice", "annotator")
    (aid,) = [a["id"] for a in work.queue(store, alice)]
    server = live_server(db)
    server.start()
    shot = tmp_path / "annotate-agent.png"
    saved = "#step-{} .saved[data-ok=true]"

    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        _login(page, server.url, "alice", "alice-pw")
        page.wait_for_url(f"**/annotate/{aid}")
        assert page.is_hidden("#tools dl") and page.is_hidden("#obs-0-0 .obs-content")  # all collapsed
        assert "search: Paris is the capital of France." in page.inner_text("#obs-0-0 summary")
        page.click("#obs-0-0 summary")  # a click opens a result ...
        page.wait_for_selector("#obs-0-0 .obs-content", state="visible")
        page.click("#stop-first")  # rate past the first bad step: every message gets a rating
        kb = page.keyboard
        kb.press("3")  # step 1: great
        page.wait_for_selector(saved.format(0))
        kb.press("o")  # ... and so does "o", for the current step (2: the hostile result)
        page.wait_for_selector("#obs-1-0 .obs-content", state="visible")
        hostile = page.inner_text("#obs-1-0 .obs-content")
        assert hostile == HOSTILE_OBSERVATION  # shown as text: markup and TeX exactly as written
        assert page.locator("#steps script, #steps img, .observations .math").count() == 0
        kb.press("3")  # step 2: great
        page.wait_for_selector(saved.format(1))
        assert "malformed" in page.inner_text("#call-2-0") and '"2*2102650"' in page.inner_text(
            "#call-2-0 pre"
        )
        page.click("#step-2 button.rate.bad")  # step 3, the malformed call: bad, by mouse
        page.wait_for_selector(saved.format(2))
        assert '  "precision": 1.10\n' in page.inner_text("#call-3-0 pre")  # pretty, numbers as written
        page.click("#step-3 button.rate.great")
        page.wait_for_selector(saved.format(3))
        page.click("#obs-3-1 summary")  # the user's turn (a click in step 4 makes it the current step)
        kb.press("j")
        kb.press("2")  # step 5, the answer: okay
        page.wait_for_selector(saved.format(4))
        page.click("#tools summary")
        page.wait_for_selector("#tools dl", state="visible")
        page.wait_for_selector("#submit:not([disabled])")
        assert "first error at step 3" in page.inner_text("#verdict")
        page.screenshot(path=str(shot), full_page=True)
        kb.press("Enter")
        page.wait_for_selector("text=Queue finished")
        browser.close()

    if os.environ.get("PRMKIT_SCREENSHOTS"):
        shutil.copy(shot, Path(os.environ["PRMKIT_SCREENSHOTS"]) / shot.name)
    state = work.assignment_state(store, alice, aid)
    assert state["status"] == "done" and state["finish_reason"] == "found_error"
    assert {i: r["rating"] for i, r in state["ratings"].items()} == {0: 1, 1: 1, 2: -1, 3: 1, 4: 0}
    (got,) = export_traces(store)
    assert got.ratings("human:alice") == [1, 1, -1, 1, 0] and got.first_error("human:alice") == 2
    original = agent_trace()
    assert [s.tool_calls for s in got.steps] == [s.tool_calls for s in original.steps]
    assert [s.observations for s in got.steps] == [s.observations for s in original.steps]
    assert shot.stat().st_size > 10_000
    store.close()

"""The store and the annotator's actions, on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import inspect, select

from prmkit.annotate import auth, work
from prmkit.annotate.assign import assign_items
from prmkit.annotate.models import events, metadata
from prmkit.annotate.store import Store, alembic_config


def test_migrations_build_exactly_the_models_schema(store: Store) -> None:
    """Alembic's autogenerate finds nothing to change: migrations and models.py agree on both backends."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), metadata)
        tables = set(inspect(conn).get_table_names())
    assert diff == []
    assert {"users", "sessions", "items", "assignments", "ratings", "events", "alembic_version"} <= tables
    Store(store.url).close()  # reopening migrates nothing and fails on nothing
    assert alembic_config(store).get_main_option("script_location").endswith("migrations")


def test_sqlite_runs_in_wal_mode(tmp_path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'x.db'}")
    with store.read() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
    store.close()


def test_passwords_tokens_and_expiring_sessions(store: Store) -> None:
    token = auth.add_user(store, "alice", "annotator", password="correct horse")
    stored = store.engine.connect().execute(select(auth.users.c.password_hash, auth.users.c.token_hash)).one()
    assert stored.password_hash.startswith("scrypt$") and "correct horse" not in stored.password_hash
    assert stored.token_hash != token and len(stored.token_hash) == 64  # only the sha256 is kept
    assert auth.login_password(store, "alice", "correct horse") == auth.User("alice", "annotator")
    assert auth.login_password(store, "alice", "wrong") is None
    assert auth.user_for_token(store, token) == auth.User("alice", "annotator")
    assert auth.user_for_token(store, token + "x") is None
    sid, csrf = auth.create_session(store, auth.User("alice", "annotator"), timedelta(hours=1))
    assert auth.session_user(store, sid) == (auth.User("alice", "annotator"), csrf)
    old, _ = auth.create_session(store, auth.User("alice", "annotator"), timedelta(seconds=-1))
    assert auth.session_user(store, old) is None  # expired
    auth.end_session(store, sid)
    assert auth.session_user(store, sid) is None
    with pytest.raises(ValueError, match="role"):
        auth.add_user(store, "bob", "admin")


def _setup(store: Store, traces, gold_traces) -> tuple[auth.User, auth.User]:
    work.load_items(store, traces)
    work.load_items(store, gold_traces, gold=True)
    for name in ("alice", "bob"):
        auth.add_user(store, name)
    assign_items(store, ["alice", "bob"], overlap=1.0, gold_rate=0.25, seed=1)
    return auth.User("alice", "annotator"), auth.User("bob", "annotator")


def test_rate_flag_rewrite_undo_finish(store: Store, traces, gold_traces) -> None:
    alice, _ = _setup(store, traces, gold_traces)
    aid = work.next_assignment(store, alice)
    assert aid is not None
    assert work.rate(store, alice, aid, 0, 1, time_ms=1200)["rating"] == 1
    work.rate(store, alice, aid, 1, 0, time_ms=800)
    work.rate(store, alice, aid, 1, -1, time_ms=900)  # changed their mind
    work.flag(store, alice, aid, 1, True)
    work.rewrite(store, alice, aid, 1, "So there are 3 * 1 = 3 apples.")
    state = work.assignment_state(store, alice, aid)
    assert state["status"] == "started"
    assert state["ratings"][1] == {
        "rating": -1,
        "flagged": True,
        "rewrite": "So there are 3 * 1 = 3 apples.",
        "time_ms": 900,
    }
    # undo walks back one action at a time: rewrite, flag, then the -1 (restoring the earlier 0)
    assert work.undo(store, alice, aid)["rewrite"] is None
    assert work.undo(store, alice, aid)["flagged"] is False
    assert work.undo(store, alice, aid)["rating"] == 0
    with pytest.raises(work.Conflict, match="found_error"):
        work.finish(store, alice, aid, "found_error")
    work.rate(store, alice, aid, 1, -1)
    with pytest.raises(work.Conflict, match="solution"):
        work.finish(store, alice, aid, "solution")
    done = work.finish(store, alice, aid, "found_error", total_time_ms=5000)
    assert done == {"id": aid, "status": "done", "finish_reason": "found_error", "total_time_ms": 5000}
    with pytest.raises(work.Conflict, match="already finished"):
        work.rate(store, alice, aid, 2, 1)
    with store.read() as conn:
        kinds = [
            e.kind
            for e in conn.execute(select(events).where(events.c.assignment_id == aid).order_by(events.c.id))
        ]
    assert kinds == ["rate", "rate", "rate", "flag", "rewrite", "undo", "undo", "undo", "rate", "finish"]


def test_bad_input_names_the_field(store: Store, traces, gold_traces) -> None:
    alice, _ = _setup(store, traces, gold_traces)
    aid = work.next_assignment(store, alice)
    with pytest.raises(work.BadInput, match=r"rating: expected -1, 0 or 1, found 2"):
        work.rate(store, alice, aid, 0, 2)
    with pytest.raises(work.BadInput, match=r"step: expected an index in 0..2, found 7"):
        work.rate(store, alice, aid, 7, 1)
    with pytest.raises(work.BadInput, match="finish_reason"):
        work.finish(store, alice, aid, "bored")


def test_annotators_cannot_read_or_write_each_others_work(store: Store, traces, gold_traces) -> None:
    alice, bob = _setup(store, traces, gold_traces)
    lead = auth.User("lead", "lead")
    auth.add_user(store, "lead", "lead")
    bobs = work.next_assignment(store, bob)
    work.rate(store, bob, bobs, 0, 1)
    for attempt in (
        lambda: work.assignment_state(store, alice, bobs),
        lambda: work.rate(store, alice, bobs, 0, -1),
        lambda: work.flag(store, alice, bobs, 0, True),
        lambda: work.undo(store, alice, bobs),
        lambda: work.finish(store, alice, bobs, "give_up"),
        lambda: work.rate(store, lead, bobs, 0, -1),  # leads read everything, write only their own
    ):
        with pytest.raises(work.NotFound):
            attempt()
    assert work.assignment_state(store, lead, bobs)["ratings"][0]["rating"] == 1
    assert {a["id"] for a in work.queue(store, alice)}.isdisjoint({a["id"] for a in work.queue(store, bob)})


def test_assign_mixes_gold_at_the_rate_and_double_labels(store: Store, traces, gold_traces) -> None:
    work.load_items(store, traces)
    work.load_items(store, gold_traces[:1], gold=True)
    work.load_items(store, gold_traces[1:], screening=True)
    report = assign_items(store, ["a", "b", "c"], overlap=0.5, gold_rate=0.25, seed=3, create_users=True)
    assert set(report.tokens) == {"a", "b", "c"}
    data_total = sum(report.data.values())
    assert data_total == len(traces) + report.double_labelled  # each double-labelled item counted twice
    assert report.double_labelled >= 1
    for name in ("a", "b", "c"):
        q = work.queue(store, auth.User(name, "annotator"))
        # the screening item comes first in every queue; gold is ~1/4 of the rest (one gold item exists)
        assert report.screening[name] == 1
        assert report.gold[name] == min(1, round(report.data[name] / 3))
        assert len(q) == report.data[name] + report.gold[name] + 1
    again = assign_items(store, ["a", "b", "c"], overlap=0.5, gold_rate=0.25, seed=3)
    assert sum(again.data.values()) == 0  # nothing left unassigned: re-running adds nothing
    with pytest.raises(work.BadInput, match="existing account"):
        assign_items(store, ["zed"])

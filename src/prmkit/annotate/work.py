"""What annotators do, as plain functions over the store: load items, read a queue, rate, flag, write a
better step, undo, finish. The web app is a thin layer over these, so tests and scripts use them too.

Every action is one write transaction: the rating and its event row are on disk before the caller
hears "ok". Ownership is checked here, not only in the app: an annotator can touch only their own
assignments, and asking for someone else's answers "not found" (its existence is not leaked).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from prmkit.annotate.auth import User
from prmkit.annotate.models import assignments, events, items, ratings
from prmkit.annotate.store import Store, now
from prmkit.core.model import Trace

FINISH_REASONS = ("found_error", "solution", "bad_problem", "give_up")
MAX_TEXT = 20_000
"""Characters in a rewritten step or a finish note."""
MAX_TOTAL_MS = 2**31 - 1
"""Largest total time (ms, about 24.8 days) the store's 32-bit column holds; more is refused."""


class NotFound(LookupError):
    """No such assignment for this user (also what another annotator's assignment looks like)."""


class Conflict(RuntimeError):
    """The action does not fit the assignment's state (e.g. rating a finished assignment)."""


class BadInput(ValueError):
    """A field of the request is out of range; the message names it, what was expected and found."""


def load_items(store: Store, traces: Iterable[Trace], gold: bool = False, screening: bool = False) -> int:
    """Add traces as items (skipping trace ids already there); returns how many were added.

    A gold item's first error comes from its ``gold`` labels (the embedded world's checker).
    """
    added = 0
    with store.write() as conn:
        known = set(conn.execute(select(items.c.trace_id)).scalars())
        for trace in traces:
            if trace.id in known:
                continue
            gold_fe = trace.first_error("gold") if gold else None
            if gold and all(r is None for r in trace.ratings("gold")):
                raise BadInput(f"trace {trace.id}: gold item expected gold labels, found none")
            conn.execute(
                insert(items).values(
                    trace_id=trace.id,
                    trace_json=trace.model_dump_json(exclude_defaults=True),
                    n_steps=len(trace.steps),
                    is_gold=gold or screening,
                    is_screening=screening,
                    gold_first_error=gold_fe,
                    created_at=now(),
                )
            )
            known.add(trace.id)
            added += 1
    return added


def _owned(conn: Connection, user: User, assignment_id: int, write: bool) -> Any:
    row = conn.execute(
        select(assignments, items.c.n_steps)
        .join(items, items.c.id == assignments.c.item_id)
        .where(assignments.c.id == assignment_id)
    ).first()
    # Leads may read everyone's work; nobody writes anyone else's.
    if row is None or (row.user_id != user.id and (write or not user.is_lead)):
        raise NotFound(f"assignment {assignment_id}: not found")
    if write and row.status == "done":
        raise Conflict(f"assignment {assignment_id}: already finished ({row.finish_reason})")
    return row


def queue(store: Store, user: User) -> list[dict[str, Any]]:
    """The user's own assignments in queue order, with progress (gold items are not marked as such)."""
    with store.read() as conn:
        rated = (
            select(ratings.c.assignment_id, func.count().label("n"))
            .where(ratings.c.rating.is_not(None))
            .group_by(ratings.c.assignment_id)
            .subquery()
        )
        rows = conn.execute(
            select(
                assignments.c.id,
                assignments.c.status,
                assignments.c.finish_reason,
                items.c.n_steps,
                rated.c.n,
            )
            .join(items, items.c.id == assignments.c.item_id)
            .outerjoin(rated, rated.c.assignment_id == assignments.c.id)
            .where(assignments.c.user_id == user.id)
            .order_by(assignments.c.position)
        ).all()
    return [
        {
            "id": r.id,
            "status": r.status,
            "finish_reason": r.finish_reason,
            "n_steps": r.n_steps,
            "rated": r.n or 0,
        }
        for r in rows
    ]


def next_assignment(store: Store, user: User) -> int | None:
    """The first assignment in the user's queue that is not finished."""
    return next((a["id"] for a in queue(store, user) if a["status"] != "done"), None)


def assignment_state(store: Store, user: User, assignment_id: int) -> dict[str, Any]:
    """Everything the annotator page needs: the trace, the current step states, the assignment status."""
    with store.read() as conn:
        row = _owned(conn, user, assignment_id, write=False)
        item = conn.execute(
            select(items.c.trace_json, items.c.n_steps).where(items.c.id == row.item_id)
        ).one()
        steps = conn.execute(
            select(ratings).where(ratings.c.assignment_id == assignment_id).order_by(ratings.c.step_index)
        ).all()
    trace = Trace.model_validate_json(item.trace_json)
    return {
        "id": row.id,
        "user_id": row.user_id,
        "status": row.status,
        "finish_reason": row.finish_reason,
        "finish_note": row.finish_note,
        "stop_at_first_error": row.stop_at_first_error,
        "total_time_ms": row.total_time_ms,
        "trace": trace,
        "n_steps": item.n_steps,
        "ratings": {
            s.step_index: {
                "rating": s.rating,
                "flagged": s.flagged,
                "rewrite": s.rewrite,
                "time_ms": s.time_ms,
            }
            for s in steps
        },
    }


def _check_text(field: str, text: str) -> str:
    """``text`` stripped, when it fits the store: at most MAX_TEXT characters, valid Unicode, no NUL
    (PostgreSQL's text cannot hold one; refused on SQLite too, so both stores take the same texts)."""
    text = text.strip()
    if len(text) > MAX_TEXT:
        raise BadInput(f"{field}: expected at most {MAX_TEXT} characters, found {len(text)}")
    nul = text.find("\x00")
    if nul >= 0:
        raise BadInput(f"{field}: expected text without NUL characters (\\x00), found one at character {nul}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        found = repr(text[err.start : err.end])
        raise BadInput(
            f"{field}: expected Unicode text, found a lone surrogate {found} at {err.start}"
        ) from None
    return text


def _check_step(row: Any, step: int) -> None:
    if not 0 <= step < row.n_steps:
        raise BadInput(f"step: expected an index in 0..{row.n_steps - 1}, found {step}")


def _upsert(conn: Connection, assignment_id: int, step: int, values: dict[str, Any]) -> Any:
    """Insert or update one step's state in one statement; returns the row as stored."""
    table_insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    stmt = table_insert(ratings).values(
        assignment_id=assignment_id, step_index=step, updated_at=now(), **{"flagged": False, **values}
    )
    stmt = stmt.on_conflict_do_update(
        index_elements=["assignment_id", "step_index"], set_={**values, "updated_at": now()}
    )
    return conn.execute(stmt.returning(ratings.c.rating, ratings.c.flagged, ratings.c.rewrite)).one()


def _act(
    store: Store,
    user: User,
    assignment_id: int,
    step: int,
    kind: str,
    values: dict[str, Any],
    event: dict[str, Any],
) -> dict[str, Any]:
    with store.write() as conn:
        row = _owned(conn, user, assignment_id, write=True)
        _check_step(row, step)
        if row.status == "pending":
            conn.execute(
                update(assignments)
                .where(assignments.c.id == assignment_id)
                .values(status="started", started_at=now())
            )
        state = _upsert(conn, assignment_id, step, values)
        conn.execute(
            insert(events).values(
                assignment_id=assignment_id,
                user_id=user.id,
                kind=kind,
                step_index=step,
                undone=False,
                at=now(),
                **event,
            )
        )
    return {"step": step, "rating": state.rating, "flagged": state.flagged, "rewrite": state.rewrite}


def rate(
    store: Store, user: User, assignment_id: int, step: int, rating: int, time_ms: int = 0
) -> dict[str, Any]:
    """Rate one step -1 / 0 / +1 (PRM800K's bad / okay / great); committed before it returns."""
    if rating not in (-1, 0, 1):
        raise BadInput(f"rating: expected -1, 0 or 1, found {rating!r}")
    time_ms = max(0, min(int(time_ms), 24 * 3600 * 1000))
    values = {"rating": rating, "time_ms": time_ms}
    return _act(store, user, assignment_id, step, "rate", values, {"rating": rating, "time_ms": time_ms})


def flag(store: Store, user: User, assignment_id: int, step: int, flagged: bool) -> dict[str, Any]:
    """Mark a step "unsure" (PRM800K's ``flagged``)."""
    return _act(
        store, user, assignment_id, step, "flag", {"flagged": bool(flagged)}, {"flagged": bool(flagged)}
    )


def rewrite(store: Store, user: User, assignment_id: int, step: int, text: str) -> dict[str, Any]:
    """Store the better step the annotator wrote (PRM800K's ``human_completion``); empty text clears it."""
    text = _check_text("text", text)
    return _act(store, user, assignment_id, step, "rewrite", {"rewrite": text or None}, {"text": text})


def _replay(conn: Connection, assignment_id: int, step: int) -> dict[str, Any]:
    """A step's state rebuilt from its events that were not undone (the event log is the truth)."""
    rows = conn.execute(
        select(events)
        .where(
            events.c.assignment_id == assignment_id, events.c.step_index == step, events.c.undone.is_(False)
        )
        .order_by(events.c.id)
    ).all()
    state: dict[str, Any] = {"rating": None, "flagged": False, "rewrite": None, "time_ms": 0}
    for ev in rows:
        if ev.kind == "rate":
            state["rating"], state["time_ms"] = ev.rating, ev.time_ms or 0
        elif ev.kind == "flag":
            state["flagged"] = bool(ev.flagged)
        elif ev.kind == "rewrite":
            state["rewrite"] = ev.text or None
    return state


def undo(store: Store, user: User, assignment_id: int) -> dict[str, Any] | None:
    """Undo the user's last rating, flag or rewrite on this assignment; returns the step's new state."""
    with store.write() as conn:
        _owned(conn, user, assignment_id, write=True)
        last = conn.execute(
            select(events)
            .where(
                events.c.assignment_id == assignment_id,
                events.c.kind.in_(("rate", "flag", "rewrite")),
                events.c.undone.is_(False),
            )
            .order_by(events.c.id.desc())
            .limit(1)
        ).first()
        if last is None:
            return None
        conn.execute(update(events).where(events.c.id == last.id).values(undone=True))
        conn.execute(
            insert(events).values(
                assignment_id=assignment_id,
                user_id=user.id,
                kind="undo",
                step_index=last.step_index,
                text=str(last.id),
                undone=False,
                at=now(),
            )
        )
        state = _replay(conn, assignment_id, last.step_index)
        _upsert(conn, assignment_id, last.step_index, state)
    return {"step": last.step_index, **{k: state[k] for k in ("rating", "flagged", "rewrite")}}


def finish(
    store: Store,
    user: User,
    assignment_id: int,
    reason: str,
    note: str = "",
    total_time_ms: int | None = None,
) -> dict[str, Any]:
    """Close an assignment with PRM800K's finish reason; the reason must fit the ratings given."""
    if reason not in FINISH_REASONS:
        raise BadInput(f"finish_reason: expected one of {', '.join(FINISH_REASONS)}, found {reason!r}")
    note = _check_text("note", note)
    if total_time_ms is not None and total_time_ms > MAX_TOTAL_MS:
        raise BadInput(f"total_time_ms: expected at most {MAX_TOTAL_MS}, found {total_time_ms}")
    with store.write() as conn:
        row = _owned(conn, user, assignment_id, write=True)
        n = row.n_steps
        rows = conn.execute(select(ratings).where(ratings.c.assignment_id == assignment_id)).all()
        given = [r.rating for r in rows if r.rating is not None]
        if reason == "found_error" and -1 not in given:
            raise Conflict("finish_reason found_error: expected a step rated -1, found none")
        if reason == "solution" and (len(given) < n or -1 in given):
            raise Conflict(f"finish_reason solution: expected all {n} steps rated and none -1, found {given}")
        # the steps' times (each clamped to a day) can sum past the 32-bit column: clamped like them
        spent = sum(r.time_ms for r in rows) if total_time_ms is None else int(total_time_ms)
        spent = max(0, min(spent, MAX_TOTAL_MS))
        conn.execute(
            update(assignments)
            .where(assignments.c.id == assignment_id)
            .values(
                status="done",
                finish_reason=reason,
                finish_note=note or None,
                total_time_ms=spent,
                finished_at=now(),
            )
        )
        conn.execute(
            insert(events).values(
                assignment_id=assignment_id,
                user_id=user.id,
                kind="finish",
                text=reason,
                time_ms=spent,
                undone=False,
                at=now(),
            )
        )
    return {"id": assignment_id, "status": "done", "finish_reason": reason, "total_time_ms": spent}

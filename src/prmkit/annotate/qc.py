"""Quality control for leads: each annotator's accuracy on gold items, progress and time, and the queue
of flagged ("unsure") steps to review.

Gold items are traces whose per-step truth is known: the embedded world's checker labels every step
(+1 valid, 0 true but useless, -1 error) and so its first error. An annotator is scored on the steps
they rated (3-way exact and error-vs-not), and on whether their first error matches the gold one for
gold items they finished with found_error or solution.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import func, select

from prmkit.annotate.agreement import first_error
from prmkit.annotate.auth import valid_user_id
from prmkit.annotate.models import assignments, items, ratings, users
from prmkit.annotate.store import Store
from prmkit.core.model import Trace


@dataclass
class AnnotatorStats:
    user: str
    assigned: int = 0
    """Every item in the annotator's queue: data + gold + screening, the three counts ``assign`` prints."""
    data_assigned: int = 0
    gold_assigned: int = 0
    """Quality-control items mixed into the queue (screening items not included)."""
    screening_assigned: int = 0
    done: int = 0
    steps_rated: int = 0
    flagged: int = 0
    time_ms: int = 0
    gold_items: int = 0
    gold_steps: int = 0
    gold_step_accuracy: float | None = None
    """Share of rated gold steps whose rating equals the gold rating exactly (-1 / 0 / +1)."""
    gold_error_accuracy: float | None = None
    """Share of rated gold steps where "is it an error?" matches gold (0 and +1 both count as no)."""
    gold_first_error_accuracy: float | None = None
    gold_first_error_n: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def annotator_stats(store: Store) -> list[AnnotatorStats]:
    """One row per annotator: progress, time, flags and gold accuracy."""
    with store.read() as conn:
        names = list(
            conn.execute(select(users.c.id).where(users.c.role == "annotator").order_by(users.c.id)).scalars()
        )
        rows = conn.execute(
            select(
                assignments,
                items.c.is_gold,
                items.c.is_screening,
                items.c.gold_first_error,
                items.c.trace_json,
            ).join(items, items.c.id == assignments.c.item_id)
        ).all()
        rated = conn.execute(select(ratings)).all()
    steps: dict[int, dict[int, Any]] = defaultdict(dict)
    for r in rated:
        steps[r.assignment_id][r.step_index] = r
    stats = {n: AnnotatorStats(n) for n in names}
    tallies: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])  # exact, error, n, fe_same, fe_n
    for a in rows:
        s = stats.setdefault(a.user_id, AnnotatorStats(a.user_id))
        mine = steps.get(a.id, {})
        given = {i: r.rating for i, r in mine.items() if r.rating is not None}
        s.assigned += 1
        if a.is_screening:
            s.screening_assigned += 1
        elif a.is_gold:
            s.gold_assigned += 1
        else:
            s.data_assigned += 1
        s.done += a.status == "done"
        s.steps_rated += len(given)
        s.flagged += sum(1 for r in mine.values() if r.flagged)
        s.time_ms += a.total_time_ms if a.status == "done" else sum(r.time_ms for r in mine.values())
        if not a.is_gold or not given:
            continue
        gold = Trace.model_validate_json(a.trace_json).ratings("gold")
        t = tallies[a.user_id]
        s.gold_items += 1
        for i, r in given.items():
            if i < len(gold) and gold[i] is not None:
                t[0] += r == gold[i]
                t[1] += (r == -1) == (gold[i] == -1)
                t[2] += 1
        if a.finish_reason in ("found_error", "solution"):
            t[3] += first_error(given) == a.gold_first_error
            t[4] += 1
    for name, (exact, err, n, fe_same, fe_n) in tallies.items():
        s = stats[name]
        s.gold_steps, s.gold_first_error_n = n, fe_n
        s.gold_step_accuracy, s.gold_error_accuracy = _ratio(exact, n), _ratio(err, n)
        s.gold_first_error_accuracy = _ratio(fe_same, fe_n)
    return sorted(stats.values(), key=lambda s: s.user)


def annotator_items(store: Store, user: str) -> list[dict[str, Any]] | None:
    """A lead's view of one account's queue, in order: each item's kind (data, gold, screening), trace,
    status and progress, for links to the read-only pages (None: no such account). Unlike ``work.queue``
    it names gold items."""
    if not valid_user_id(user):  # no account has such a name (and PostgreSQL refuses a NUL in a query)
        return None
    with store.read() as conn:
        if conn.execute(select(users.c.id).where(users.c.id == user)).first() is None:
            return None
        rows = conn.execute(
            select(
                assignments.c.id,
                assignments.c.status,
                assignments.c.finish_reason,
                items.c.trace_id,
                items.c.n_steps,
                items.c.is_gold,
                items.c.is_screening,
            )
            .join(items, items.c.id == assignments.c.item_id)
            .where(assignments.c.user_id == user)
            .order_by(assignments.c.position)
        ).all()
        rated = dict(
            conn.execute(
                select(ratings.c.assignment_id, func.count())
                .join(assignments, assignments.c.id == ratings.c.assignment_id)
                .where(assignments.c.user_id == user, ratings.c.rating.is_not(None))
                .group_by(ratings.c.assignment_id)
            ).all()
        )
    return [
        {
            "id": r.id,
            "kind": "screening" if r.is_screening else "gold" if r.is_gold else "data",
            "trace_id": r.trace_id,
            "status": r.status,
            "finish_reason": r.finish_reason,
            "n_steps": r.n_steps,
            "rated": rated.get(r.id, 0),
        }
        for r in rows
    ]


def flagged_steps(store: Store, limit: int = 200) -> list[dict[str, Any]]:
    """Steps annotators marked unsure, newest first, for a lead to review."""
    with store.read() as conn:
        rows = conn.execute(
            select(ratings, assignments.c.user_id, items.c.trace_id, items.c.trace_json)
            .join(assignments, assignments.c.id == ratings.c.assignment_id)
            .join(items, items.c.id == assignments.c.item_id)
            .where(ratings.c.flagged.is_(True))
            .order_by(ratings.c.updated_at.desc())
            .limit(limit)
        ).all()
    out = []
    for r in rows:
        trace = Trace.model_validate_json(r.trace_json)
        out.append(
            {
                "assignment": r.assignment_id,
                "user": r.user_id,
                "trace_id": r.trace_id,
                "step": r.step_index,
                "text": trace.steps[r.step_index].text,
                "rating": r.rating,
            }
        )
    return out


def world_gold_traces(n: int, seed: int = 0) -> list[Trace]:
    """``n`` embedded-world traces with gold labels (the checker's per-step truth) to use as gold items."""
    from prmkit.worlds.registry import DEFAULT_WORLD, world

    w = world(DEFAULT_WORLD)
    traces = w.gold_label(w.sample_traces(w.generate_problems(n, seed=seed, split="test"), 1, seed=seed))
    for t in traces:  # distinct from any data trace of the same problem
        t.id = f"gold:{t.id}"
    return traces

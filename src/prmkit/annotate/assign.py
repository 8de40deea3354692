"""Building annotators' queues: data items spread evenly, a share double-labelled for agreement, gold
items mixed in at a set rate for quality control, and screening items served first to everyone.

As in PRM800K, quality-control (gold) items go to every annotator, so they also give agreement for free;
the annotator cannot tell them from the rest. Running ``assign`` again only hands out items that no one
holds yet, so a lead can add data to a running project.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from sqlalchemy import func, insert, select

from prmkit.annotate.auth import add_user
from prmkit.annotate.models import assignments, items, users
from prmkit.annotate.store import Store
from prmkit.annotate.work import BadInput

SCREENING_BASE = -1_000_000  # screening items sort before every other position in a queue


@dataclass
class AssignReport:
    """What one ``assign`` call handed out, per annotator, and tokens of accounts it created."""

    data: dict[str, int] = field(default_factory=dict)
    gold: dict[str, int] = field(default_factory=dict)
    screening: dict[str, int] = field(default_factory=dict)
    double_labelled: int = 0
    tokens: dict[str, str] = field(default_factory=dict)


def _check_args(annotators: list[str], overlap: float, gold_rate: float, per_item: int) -> None:
    if not annotators:
        raise BadInput("annotators: expected at least one annotator id, found none")
    if not 0.0 <= overlap <= 1.0:
        raise BadInput(f"overlap: expected a fraction in [0, 1], found {overlap}")
    if not 0.0 <= gold_rate < 1.0:
        raise BadInput(f"gold_rate: expected a fraction in [0, 1), found {gold_rate}")
    if per_item < 2:
        raise BadInput(f"per_item: expected at least 2 annotators per double-labelled item, found {per_item}")


def n_double(n_items: int, overlap: float) -> int:
    """How many of ``n_items`` new data items go to several annotators: exactly ``overlap`` of them,
    rounded half up (so 0.2 of 10 is 2, 0.25 of 2 is 1), never a per-item coin flip whose count varies."""
    return min(n_items, int(n_items * overlap + 0.5))


def assign_items(
    store: Store,
    annotators: list[str],
    overlap: float = 0.0,
    per_item: int = 2,
    gold_rate: float = 0.0,
    seed: int = 0,
    stop_at_first_error: bool = True,
    create_users: bool = False,
) -> AssignReport:
    """Queue every unassigned data item: exactly ``overlap`` of them (:func:`n_double`, chosen at random
    with ``seed``) to ``per_item`` annotators, the rest to one;
    then mix gold items in so they make ``gold_rate`` of each new queue segment, and put screening items
    first in every queue that lacks them."""
    _check_args(annotators, overlap, gold_rate, per_item)
    report = AssignReport()
    with store.read() as conn:
        known = set(conn.execute(select(users.c.id)).scalars())
    for name in annotators:
        if name not in known:
            if not create_users:
                raise BadInput(
                    f"annotator {name!r}: expected an existing account, found none (use --create-users)"
                )
            report.tokens[name] = add_user(store, name, "annotator")
    rng = random.Random(seed)
    with store.write() as conn:
        held = select(assignments.c.item_id)
        free = list(
            conn.execute(
                select(items.c.id)
                .where(items.c.is_gold.is_(False), items.c.id.not_in(held))
                .order_by(items.c.id)
            ).scalars()
        )
        gold = list(
            conn.execute(
                select(items.c.id).where(items.c.is_gold.is_(True), items.c.is_screening.is_(False))
            ).scalars()
        )
        screening = list(
            conn.execute(
                select(items.c.id).where(items.c.is_screening.is_(True)).order_by(items.c.id)
            ).scalars()
        )
        if gold_rate > 0 and not gold:
            raise BadInput("gold_rate: expected gold items in the store (load them with --gold), found none")
        rng.shuffle(free)
        rng.shuffle(gold)  # once, so every annotator is served the same gold items first (as in PRM800K)
        new: dict[str, list[int]] = {a: [] for a in annotators}
        k = min(per_item, len(annotators))
        double = set(free[: n_double(len(free), overlap)]) if k > 1 else set()
        for item_id in free:
            count = k if item_id in double else 1
            report.double_labelled += count > 1
            order = sorted(annotators, key=lambda a: (len(new[a]), rng.random()))
            for a in order[:count]:
                new[a].append(item_id)
        for a in annotators:
            _write_queue(conn, a, new[a], gold, screening, gold_rate, rng, stop_at_first_error, report)
    return report


def _write_queue(conn, annotator, data, gold, screening, gold_rate, rng, stop, report) -> None:
    mine = set(
        conn.execute(select(assignments.c.item_id).where(assignments.c.user_id == annotator)).scalars()
    )
    n_gold = round(len(data) * gold_rate / (1 - gold_rate)) if data else 0
    chosen = [g for g in gold if g not in mine][:n_gold]  # same order for all: QC items overlap
    segment = list(data)
    for g in chosen:
        segment.insert(rng.randint(0, len(segment)), g)
    start = conn.execute(
        select(func.max(assignments.c.position)).where(assignments.c.user_id == annotator)
    ).scalar()
    start = 0 if start is None or start < 0 else start + 1
    rows = [(start + i, item_id) for i, item_id in enumerate(segment)]
    rows += [(SCREENING_BASE + i, s) for i, s in enumerate(screening) if s not in mine]
    for position, item_id in rows:
        conn.execute(
            insert(assignments).values(
                item_id=item_id,
                user_id=annotator,
                position=position,
                status="pending",
                stop_at_first_error=stop,
                total_time_ms=0,
            )
        )
    report.data[annotator] = len(data)
    report.gold[annotator] = len(chosen)
    report.screening[annotator] = sum(1 for s in screening if s not in mine)

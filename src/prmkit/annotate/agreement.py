"""Inter-annotator agreement in the app: its database read into
:func:`prmkit.labeling.agreement.agreement_from` (Cohen's kappa per pair, Fleiss' kappa, first-error
agreement; the formulas live there, where the process card reads exported labels with them too).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import select

from prmkit.annotate.models import assignments, ratings
from prmkit.annotate.store import Store
from prmkit.labeling.agreement import (
    CATEGORIES,
    Agreement,
    agreement_from,
    cohen_kappa,
    first_error,
    fleiss_kappa,
)

__all__ = [
    "CATEGORIES",
    "Agreement",
    "agreement",
    "agreement_from",
    "cohen_kappa",
    "collect",
    "first_error",
    "fleiss_kappa",
]


def collect(store: Store) -> dict[int, dict[str, dict[str, Any]]]:
    """``{item_id: {user: {"ratings": {step: r}, "finish_reason", "status"}}}`` over every assignment."""
    with store.read() as conn:
        rows = conn.execute(
            select(
                assignments.c.id,
                assignments.c.item_id,
                assignments.c.user_id,
                assignments.c.status,
                assignments.c.finish_reason,
            )
        ).all()
        rated = conn.execute(
            select(ratings.c.assignment_id, ratings.c.step_index, ratings.c.rating).where(
                ratings.c.rating.is_not(None)
            )
        ).all()
    by_assignment: dict[int, dict[int, int]] = defaultdict(dict)
    for r in rated:
        by_assignment[r.assignment_id][r.step_index] = r.rating
    out: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)
    for a in rows:
        out[a.item_id][a.user_id] = {
            "ratings": by_assignment.get(a.id, {}),
            "finish_reason": a.finish_reason,
            "status": a.status,
        }
    return dict(out)


def agreement(store: Store) -> Agreement:
    """Agreement over every step that two or more annotators rated."""
    return agreement_from(collect(store))

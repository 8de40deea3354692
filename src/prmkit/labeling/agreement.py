"""Inter-annotator agreement on double-labelled steps: Cohen's kappa per pair of annotators, Fleiss'
kappa over everyone, and first-error agreement (do two annotators put the first mistake at the same
step?), which is the quantity a PRM is scored on, so it matters more than per-step kappa.

Kappa corrects raw agreement for chance: with most steps rated +1, two annotators agree often by luck.
Fleiss' kappa here takes a varying number of raters per step (the usual generalisation: each step's
agreement is the share of agreeing rater pairs), which equals the textbook formula when counts are equal.

:func:`agreement_from` reads ``{item: {annotator: {"ratings": {step: rating}, "finish_reason": ...}}}``;
the annotation app fills it from its database (``prmkit.annotate.agreement``), :func:`human_ratings` from
exported traces' ``human`` labels (the process card), so both report the same numbers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

from prmkit.core.model import Trace

CATEGORIES = (-1, 0, 1)


def cohen_kappa(a: Sequence[int], b: Sequence[int], categories: Sequence[int] = CATEGORIES) -> float | None:
    """Cohen's kappa of two raters over the same items; None when undefined (no items, or chance = 1)."""
    if len(a) != len(b):
        raise ValueError(f"cohen_kappa: expected two equally long rating lists, found {len(a)} and {len(b)}")
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    chance = sum((a.count(c) / n) * (b.count(c) / n) for c in categories)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from a subjects x categories matrix of rating counts (>= 2 raters per subject)."""
    rows = [list(r) for r in counts if sum(r) >= 2]
    if not rows:
        return None
    total = sum(sum(r) for r in rows)
    p_j = [sum(r[j] for r in rows) / total for j in range(len(rows[0]))]
    p_i = [(sum(c * c for c in r) - sum(r)) / (sum(r) * (sum(r) - 1)) for r in rows]
    p_bar = sum(p_i) / len(p_i)
    p_e = sum(p * p for p in p_j)
    if p_e >= 1.0:
        return None
    return (p_bar - p_e) / (1.0 - p_e)


def first_error(step_ratings: dict[int, int]) -> int:
    """Index of the earliest step rated -1, or -1 when none was."""
    return min((i for i, r in step_ratings.items() if r == -1), default=-1)


@dataclass
class Agreement:
    """Agreement numbers for a lead's page or a report file."""

    steps_double_labelled: int = 0
    items_double_labelled: int = 0
    fleiss_kappa: float | None = None
    cohen: dict[str, float | None] = field(default_factory=dict)
    """Cohen's kappa per annotator pair, keyed ``"alice|bob"``."""
    cohen_n: dict[str, int] = field(default_factory=dict)
    first_error_agreement: float | None = None
    first_error_pairs: int = 0
    raw_step_agreement: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def agreement_from(data: dict[Any, dict[str, dict[str, Any]]]) -> Agreement:
    """Agreement over every step two or more annotators rated, from ``{item: {annotator: ...}}``."""
    result = Agreement()
    pairs: dict[tuple[str, str], tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    counts: list[list[int]] = []
    same = total = fe_same = fe_total = 0
    for per_user in data.values():
        users = sorted(per_user)
        if len(users) < 2:
            continue
        result.items_double_labelled += 1
        steps = sorted({s for u in users for s in per_user[u]["ratings"]})
        for s in steps:
            given = {u: per_user[u]["ratings"][s] for u in users if s in per_user[u]["ratings"]}
            if len(given) < 2:
                continue
            result.steps_double_labelled += 1
            counts.append([list(given.values()).count(c) for c in CATEGORIES])
            for u, v in combinations(sorted(given), 2):
                pairs[(u, v)][0].append(given[u])
                pairs[(u, v)][1].append(given[v])
                same += given[u] == given[v]
                total += 1
        finished = [u for u in users if per_user[u]["finish_reason"] in ("found_error", "solution")]
        for u, v in combinations(finished, 2):
            fe_total += 1
            fe_same += first_error(per_user[u]["ratings"]) == first_error(per_user[v]["ratings"])
    result.fleiss_kappa = fleiss_kappa(counts)
    for (u, v), (a, b) in sorted(pairs.items()):
        result.cohen[f"{u}|{v}"] = cohen_kappa(a, b)
        result.cohen_n[f"{u}|{v}"] = len(a)
    result.raw_step_agreement = same / total if total else None
    result.first_error_pairs = fe_total
    result.first_error_agreement = fe_same / fe_total if fe_total else None
    return result


def human_ratings(traces: Sequence[Trace], method: str = "human") -> dict[str, dict[str, dict[str, Any]]]:
    """:func:`agreement_from`'s input from traces: per trace, per annotator (a ``method`` label's actor),
    the steps they rated and their assignment's finish reason (the app's export keeps it in the label's
    params; None when the labels do not say, so first-error agreement leaves them out)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for t in traces:
        for i, step in enumerate(t.steps):
            for lab in step.labels:
                p = lab.provenance
                if p.method != method or p.actor is None or lab.rating is None:
                    continue
                mine = out.setdefault(t.id, {}).setdefault(
                    p.actor, {"ratings": {}, "finish_reason": p.params.get("finish_reason"), "status": None}
                )
                mine["ratings"].setdefault(i, lab.rating)
    return out

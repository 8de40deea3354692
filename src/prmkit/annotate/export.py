"""Getting the work out: core-model traces with human Labels, and PRM800K label lines.

Core export: one Trace per item, as it was loaded (its gold or model labels kept), plus one Label per
rated step per annotator with provenance method ``human``, actor = annotator id, and params holding the
time spent on the step, the assignment's total time and finish reason. ``flagged`` and a better step the
annotator wrote go in the Label's metadata (``flagged``, ``human_completion``), so nothing is dropped.

PRM800K export goes through :mod:`prmkit.formats` (``write(path, traces, "prm800k")``): one line per
finished assignment, phase-2 shaped (the pre-generated steps, labelled up to where the annotator
stopped), with ``labeler``, ``total_time`` (ms), ``finish_reason`` and the QC / screening flags.

Agent trajectories keep their tool calls, observations and the problem's tools unchanged in the core
export (the trace is the one loaded); the PRM800K export refuses them, since its lines cannot hold them.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from sqlalchemy import select

from prmkit.annotate.models import assignments, items, ratings
from prmkit.annotate.store import Store, utc
from prmkit.core.dataset import write_traces
from prmkit.core.errors import InputError, Issue
from prmkit.core.model import Label, Provenance, Trace
from prmkit.core.render import is_agentic

APP_VERSION = "prmkit.annotate/1"


def _rows(
    store: Store, done_only: bool, include_gold: bool
) -> tuple[list[Any], list[Any], dict[int, list[Any]]]:
    with store.read() as conn:
        item_rows = conn.execute(select(items).order_by(items.c.id)).all()
        query = select(assignments).order_by(assignments.c.item_id, assignments.c.user_id)
        if done_only:
            query = query.where(assignments.c.status == "done")
        assign_rows = conn.execute(query).all()
        rating_rows = conn.execute(
            select(ratings).order_by(ratings.c.assignment_id, ratings.c.step_index)
        ).all()
    if not include_gold:
        item_rows = [i for i in item_rows if not i.is_gold]
    per: dict[int, list[Any]] = defaultdict(list)
    for r in rating_rows:
        per[r.assignment_id].append(r)
    return item_rows, assign_rows, per


def _label(a: Any, r: Any) -> Label:
    # every key is per label (one rating's time, its assignment): listed in core.model.PER_LABEL_PARAMS
    params = {
        "time_ms": r.time_ms,
        "assignment": a.id,
        "status": a.status,
        "finish_reason": a.finish_reason,
        "total_time_ms": a.total_time_ms,
    }
    meta: dict[str, Any] = {"flagged": bool(r.flagged)}
    if r.rewrite:
        meta["human_completion"] = r.rewrite
    prov = Provenance(
        method="human", actor=a.user_id, params=params, version=APP_VERSION, created_at=utc(r.updated_at)
    )
    return Label(rating=r.rating, provenance=prov, metadata=meta)


def export_traces(store: Store, done_only: bool = False, include_gold: bool = True) -> list[Trace]:
    """Every item as a core Trace with its annotators' ratings as ``human`` Labels."""
    item_rows, assign_rows, per = _rows(store, done_only, include_gold)
    by_item: dict[int, list[Any]] = defaultdict(list)
    for a in assign_rows:
        by_item[a.item_id].append(a)
    out = []
    for it in item_rows:
        trace = Trace.model_validate_json(it.trace_json)
        summary = []
        for a in by_item.get(it.id, []):
            unrated = {}
            for r in per.get(a.id, []):
                if r.rating is None:
                    unrated[str(r.step_index)] = {"flagged": bool(r.flagged), "human_completion": r.rewrite}
                else:
                    trace.steps[r.step_index].labels.append(_label(a, r))
            summary.append(
                {
                    "user": a.user_id,
                    "status": a.status,
                    "finish_reason": a.finish_reason,
                    "finish_note": a.finish_note,
                    "total_time_ms": a.total_time_ms,
                    "unrated_steps": unrated,
                }
            )
        trace.metadata["annotate"] = {
            "gold": it.is_gold,
            "screening": it.is_screening,
            "assignments": summary,
        }
        out.append(trace)
    return out


def check_output(out: str | Path) -> Path:
    """Refuse an output path that is a folder before any work (the write would fail only at the end)."""
    out = Path(out)
    if out.is_dir():
        found = f"a directory (name a file inside it, e.g. {out / 'labels.jsonl'})"
        raise InputError([Issue(str(out), None, "(output)", "a file to write", found)], False)
    return out


def export(
    db: str, out: str | Path, format: str = "prmkit", done_only: bool = False, include_gold: bool = True
) -> int:
    """Write the store's labels to ``out`` as prmkit traces (JSONL/Parquet) or PRM800K lines; returns the count."""
    from prmkit.annotate.store import open_store

    if format not in ("prmkit", "prm800k"):
        raise ValueError(f"--format: expected 'prmkit' or 'prm800k', found {format!r}")
    check_output(out)
    store = open_store(db)
    try:
        if format == "prm800k":
            return export_prm800k(store, out, include_gold=include_gold)
        return write_traces(out, export_traces(store, done_only=done_only, include_gold=include_gold))
    finally:
        store.close()


def prm800k_traces(store: Store, include_gold: bool = True) -> list[Trace]:
    """One trace per finished assignment, carrying exactly what a PRM800K label line holds."""
    item_rows, assign_rows, per = _rows(store, True, include_gold)
    by_id = {it.id: it for it in item_rows}
    out = []
    for a in assign_rows:
        it = by_id.get(a.item_id)
        if it is None:
            continue
        trace = Trace.model_validate_json(it.trace_json)
        original = [s.text for s in trace.steps]
        for s in trace.steps:
            s.labels = []
        rated = {r.step_index: r for r in per.get(a.id, []) if r.rating is not None}
        n = max(rated) + 1 if rated else 0
        for i, step in enumerate(trace.steps[:n]):
            r = rated.get(i)
            stops_here = a.finish_reason == "found_error" and i == n - 1
            meta: dict[str, Any] = {"chosen_completion": None if stops_here else 0, "index": 0}
            if r is not None:
                step.labels.append(_label(a, r).model_copy(update={"metadata": {"flagged": bool(r.flagged)}}))
                if r.rewrite:  # the labeller's own step continues the solution (PRM800K's human_completion)
                    meta = {
                        "chosen_completion": None,
                        "alternatives": [{"text": step.text, "rating": r.rating, "flagged": bool(r.flagged)}],
                        "human_completion": {"rating": None, "source": "human", "flagged": False},
                    }
                    step.text = r.rewrite
            step.metadata["prm800k"] = meta
        finished = utc(a.finished_at)
        trace.metadata["prm800k"] = {
            "phase": 2,
            "labeler": a.user_id,
            "timestamp": finished.replace(tzinfo=None).isoformat(timespec="microseconds")
            if finished
            else None,
            "generation": None,
            "is_quality_control_question": bool(it.is_gold and not it.is_screening),
            "is_initial_screening_question": bool(it.is_screening),
            "label_steps": n,
            "pre_generated_steps": original,
            "total_time": a.total_time_ms,
            "finish_reason": a.finish_reason,
        }
        out.append(trace)
    return out


def export_prm800k(store: Store, out: str | Path, include_gold: bool = True) -> int:
    """PRM800K label lines for every finished assignment, written by :mod:`prmkit.formats`."""
    from prmkit.formats import write

    traces = prm800k_traces(store, include_gold=include_gold)
    agents = [t.id for t in traces if is_agentic(t.steps)]
    if agents:  # a PRM800K line has no place for calls or results: refuse rather than drop them
        raise ValueError(
            f"--format prm800k: expected math solutions, found {len(agents)} agent trajectories with tool "
            f"calls or observations (first: {agents[0]!r}) that PRM800K lines cannot hold; "
            "export them with --format prmkit, which keeps them"
        )
    write(out, traces, "prm800k")
    return len(traces)

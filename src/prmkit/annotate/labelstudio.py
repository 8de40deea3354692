"""Label Studio round trip, for teams that already label there.

Export: one task per item, ``data = {trace_id, problem, answer, steps: [{text}]}``, with prmkit's model
scores (Labels with method ``model``) as ``predictions`` so annotators start from the PRM's guess, and a
labelling config that repeats a -1/0/+1 choice per step (``<Repeater on="$steps">``, names
``rating_{i}`` on ``step_{i}``). Import: the per-step choices of each (non-cancelled) annotation come
back into the store as a finished assignment of annotator ``ls:<completed_by>``, so agreement, QC and
exports treat them like ratings made in prmkit's own page.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import insert, select, update

from prmkit.annotate.models import assignments, events, items, users
from prmkit.annotate.store import Store, now
from prmkit.annotate.work import _upsert, load_items
from prmkit.core.errors import InputError, Issue, issues_from_validation, short
from prmkit.core.files import atomic_write
from prmkit.core.model import Problem, Step, Trace
from prmkit.core.render import step_inputs

LABEL_CONFIG = """<View>
  <Header value="Problem"/>
  <Text name="problem" value="$problem"/>
  <Repeater on="$steps" indexFlag="{{idx}}">
    <Text name="step_{{idx}}" value="$steps[{{idx}}].text"/>
    <Choices name="rating_{{idx}}" toName="step_{{idx}}" choice="single-radio" showInline="true">
      <Choice value="-1" hotkey="1"/>
      <Choice value="0" hotkey="2"/>
      <Choice value="1" hotkey="3"/>
    </Choices>
  </Repeater>
</View>
"""
_CHOICES = {"-1": -1, "0": 0, "1": 1, "+1": 1}


def task_from_trace(trace: Trace, task_id: int) -> dict[str, Any]:
    """A Label Studio task for one trace, with one prediction per model label source."""
    task: dict[str, Any] = {
        "id": task_id,
        "data": {
            "trace_id": trace.id,
            "problem": trace.problem.text,
            "answer": trace.problem.answer,
            # an agent's step shows its calls and, before it, the results it saw (prmkit.core.render)
            "steps": [{"text": text} for text in step_inputs(trace.steps)],
        },
    }
    predictions = []
    for source in trace.sources():
        if not source.startswith("model"):
            continue
        result, scores = [], []
        for i, step in enumerate(trace.steps):
            lab = step.label(source)
            if lab is None:
                continue
            item: dict[str, Any] = {
                "from_name": f"rating_{i}",
                "to_name": f"step_{i}",
                "type": "choices",
                "value": {"choices": [str(lab.verdict())]},
            }
            if lab.score is not None:
                item["score"] = lab.score
                scores.append(lab.score)
            result.append(item)
        pred: dict[str, Any] = {"model_version": source.partition(":")[2] or "model", "result": result}
        if scores:
            pred["score"] = min(scores)  # a solution is as good as its weakest step (PRM "min" aggregation)
        predictions.append(pred)
    if predictions:
        task["predictions"] = predictions
    return task


def export_labelstudio(db: str, out: str | Path) -> int:
    """Write every item of the store as Label Studio tasks (JSON) and the labelling config beside it."""
    from prmkit.annotate.export import check_output
    from prmkit.annotate.store import open_store

    check_output(out)
    store = open_store(db)
    try:
        with store.read() as conn:
            rows = conn.execute(select(items.c.id, items.c.trace_json).order_by(items.c.id)).all()
    finally:
        store.close()
    tasks = [task_from_trace(Trace.model_validate_json(r.trace_json), r.id) for r in rows]
    out = Path(out)
    with atomic_write(out) as fh:
        json.dump(tasks, fh, ensure_ascii=False, indent=2)
    with atomic_write(out.with_suffix(".label_config.xml")) as fh:
        fh.write(LABEL_CONFIG)
    return len(tasks)


class _Loose(BaseModel):
    """Label Studio's export carries many fields prmkit does not use: ignored; the used ones are strict."""

    model_config = ConfigDict(strict=True, extra="ignore")


class LSResult(_Loose):
    from_name: str = ""
    value: dict[str, Any] | None = None


class LSAnnotation(_Loose):
    result: list[LSResult] | None = None
    was_cancelled: bool | None = False
    completed_by: int | str | dict[str, Any] | None = None
    lead_time: float | None = Field(None, ge=0, le=10**9, allow_inf_nan=False)


class LSStep(_Loose):
    text: str


class LSData(_Loose):
    trace_id: str | None = None
    id: str | int | None = None
    problem: str = ""
    answer: str | None = None
    steps: list[LSStep | str] = []


class LSTask(_Loose):
    data: LSData
    annotations: list[LSAnnotation] | None = None


def _annotator(completed_by: Any) -> str:
    if isinstance(completed_by, dict):
        completed_by = completed_by.get("email") or completed_by.get("id")
    return f"ls:{completed_by}".replace(" ", "_")


def parse_annotation(
    ann: LSAnnotation, n_steps: int, path: str, where: str
) -> tuple[dict[int, int], list[Issue]]:
    """Per-step ratings of one Label Studio annotation, with located issues for bad values."""
    out: dict[int, int] = {}
    issues: list[Issue] = []
    for j, res in enumerate(ann.result or []):
        name = res.from_name
        field = f"{where}.result[{j}]"
        if not name.startswith("rating_"):
            continue
        idx = name.removeprefix("rating_")
        choices = (res.value or {}).get("choices") or []
        if not (idx.isascii() and idx.isdigit()) or int(idx) >= n_steps:
            issues.append(Issue(path, None, field + ".from_name", f"rating_<0..{n_steps - 1}>", short(name)))
        elif not isinstance(choices, list) or len(choices) != 1 or choices[0] not in _CHOICES:
            issues.append(
                Issue(path, None, field + ".value.choices", 'one of "-1", "0", "1"', short(choices))
            )
        else:
            out[int(idx)] = _CHOICES[choices[0]]
    return out, issues


def _trace_id(data: LSData) -> str | None:
    found = data.trace_id if data.trace_id is not None else data.id
    return None if found is None or found == "" else str(found)


def _n_steps(store: Store, data: LSData, trace_id: str) -> int:
    """Steps of the task's item: the stored item's, else the task's own (it becomes a new item)."""
    with store.read() as conn:
        n = conn.execute(select(items.c.n_steps).where(items.c.trace_id == trace_id)).scalar()
    return len(data.steps) if n is None else n


def _item_for(store: Store, data: LSData, trace_id: str) -> int:
    """The item's id, adding a task made outside prmkit as a new item built from its data."""
    query = select(items.c.id).where(items.c.trace_id == trace_id)
    with store.read() as conn:
        found = conn.execute(query).scalar()
    if found is None:
        steps = [Step(text=s.text if isinstance(s, LSStep) else s) for s in data.steps]
        problem = Problem(id=trace_id, text=data.problem, answer=data.answer)
        load_items(store, [Trace(id=trace_id, problem=problem, steps=steps)])
        with store.read() as conn:
            found = conn.execute(query).scalar_one()
    return found


def read_tasks(path: str | Path) -> list[LSTask]:
    """A Label Studio JSON export, checked whole: every problem is reported with its place, none is
    a traceback (not JSON, too deep, a directory, a wrong type anywhere)."""
    path = Path(path)
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        found = getattr(err, "strerror", None) or str(err)
        raise InputError([Issue(where, None, "(file)", "a readable UTF-8 JSON file", found)], False) from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError([Issue(where, err.lineno, "(json)", "valid JSON", err.msg)], False) from None
    except (RecursionError, ValueError) as err:  # nested too deep, or a number of thousands of digits
        raise InputError(
            [Issue(where, None, "(json)", "JSON Label Studio writes", short(str(err)))], False
        ) from None
    if not isinstance(raw, list):
        raise InputError([Issue(where, None, "(file)", "a JSON array of tasks", type(raw).__name__)], False)
    tasks, issues = [], []
    for t, task in enumerate(raw):
        try:
            tasks.append(LSTask.model_validate(task))
        except ValidationError as err:
            issues += issues_from_validation(err, where, None, prefix=f"[{t}].")
            continue
        if _trace_id(tasks[-1].data) is None:
            issues.append(Issue(where, None, f"[{t}].data.trace_id", "a trace id (or data.id)", "nothing"))
    if issues:
        raise InputError(issues, False)
    return tasks


def import_labelstudio(db: str, path: str | Path) -> int:
    """Import the per-step ratings of a Label Studio JSON export; returns the annotations imported.

    The whole file is checked before anything is written, so a bad file changes nothing."""
    from prmkit.annotate.store import open_store

    tasks = read_tasks(path)
    store = open_store(db)
    try:
        parsed, issues = [], []
        for t, task in enumerate(tasks):
            trace_id = _trace_id(task.data) or ""
            n = _n_steps(store, task.data, trace_id)
            for a, ann in enumerate(task.annotations or []):
                if ann.was_cancelled:
                    continue
                got, bad = parse_annotation(ann, n, str(path), f"[{t}].annotations[{a}]")
                issues += bad
                parsed.append((trace_id, _annotator(ann.completed_by), got, ann.lead_time or 0.0))
        if issues:
            raise InputError(issues, False)
        item_ids = {}
        for task in tasks:  # every task becomes an item (as before), annotated or not
            trace_id = _trace_id(task.data) or ""
            item_ids[trace_id] = _item_for(store, task.data, trace_id)
        for trace_id, user, got, lead_time in parsed:
            _store_annotation(store, item_ids[trace_id], user, got, int(lead_time * 1000))
    finally:
        store.close()
    return len(parsed)


def _store_annotation(store: Store, item_id: int, user: str, got: dict[int, int], time_ms: int) -> None:
    reason = "found_error" if -1 in got.values() else "solution"
    with store.write() as conn:
        if conn.execute(select(users.c.id).where(users.c.id == user)).first() is None:
            conn.execute(insert(users).values(id=user, role="annotator", created_at=now()))
        row = conn.execute(
            select(assignments.c.id).where(assignments.c.item_id == item_id, assignments.c.user_id == user)
        ).first()
        if row is None:
            aid = conn.execute(
                insert(assignments).values(
                    item_id=item_id,
                    user_id=user,
                    position=0,
                    status="done",
                    stop_at_first_error=False,
                    total_time_ms=time_ms,
                )
            ).inserted_primary_key[0]
        else:
            aid = row.id
        conn.execute(
            update(assignments)
            .where(assignments.c.id == aid)
            .values(status="done", finish_reason=reason, total_time_ms=time_ms, finished_at=now())
        )
        for step, rating in got.items():
            _upsert(conn, aid, step, {"rating": rating})
            conn.execute(
                insert(events).values(
                    assignment_id=aid,
                    user_id=user,
                    kind="rate",
                    step_index=step,
                    rating=rating,
                    text="labelstudio",
                    undone=False,
                    at=now(),
                )
            )

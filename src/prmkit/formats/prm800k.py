"""PRM800K (openai/prm800k): phase 1 and phase 2 label files, and the MATH split files, both JSONL.

One label line becomes one Trace: the labelled trajectory (the chosen completion, or the labeller's own
``human_completion``, at each step). Each trajectory step carries the labeller's rating as a Label
(method ``human``, actor = labeler; a null rating leaves the step unlabelled), ``flagged`` in the Label's
metadata, and the alternatives at that step (not part of the solution) in ``Step.metadata["prm800k"]``.

- Phase 2 (``pre_generated_*`` present): the trace is the whole pre-generated solution. The steps after
  the labelled ones (labelling stops at the first error) are present but **unlabelled**, not correct. The
  error step is ``completions[0]`` with ``chosen_completion: null``; the other completions there are
  alternatives, kept in metadata.
- Steps after the walk ends (an all-null step, or a phase-1 step with nothing chosen) are kept raw in
  ``Trace.metadata["prm800k"]["tail"]``.
- Everything else of the record (labeler, timestamp, generation, QC / screening flags, total_time,
  finish_reason, pre_generated_verifier_score, unknown keys, an unusual key order) is in
  ``Trace.metadata["prm800k"]``; ``ground_truth_solution`` is in ``Problem.metadata``.

Writing rebuilds the line from the core fields plus that metadata: ``json.dumps`` defaults, the file's key
order, absent keys absent, nulls kept, so a real line comes back byte for byte. MATH split lines
(``problem, solution, answer, subject, level, unique_id``) are read as Problems and written back the same way.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.formats.base import (
    FORMAT_VERSION,
    Format,
    ReadResult,
    RecordChecker,
    WriteReport,
    digest,
    dump_rows,
    key_order_if_unusual,
    note_agent_steps,
    ordered,
    read_records,
    take_options,
    unique_ids,
)
from prmkit.formats.binary import pick_source

NAME = "prm800k"
RECORD_KEYS = (
    "labeler",
    "timestamp",
    "generation",
    "is_quality_control_question",
    "is_initial_screening_question",
    "question",
    "label",
)
PHASE2_KEYS = ("pre_generated_steps", "pre_generated_answer", "pre_generated_verifier_score")
LABEL_KEYS = ("steps", "total_time", "finish_reason")
STEP_KEYS = ("completions", "human_completion", "chosen_completion")
SPLIT_KEYS = ("problem", "solution", "answer", "subject", "level", "unique_id")
ANSWER_MARK = "\n\n# Answer\n\n"
LOST = [
    "Trace.answer_correct and Trace.generator (no such fields)",
    "labels of other sources than the exported one (option source)",
    "soft scores",
    "step kinds",
    "problem source and id",
]


# --- reading ---------------------------------------------------------------------------------------


def _check_completion(ck: RecordChecker, comp: Any, where: str) -> None:
    if not isinstance(comp, dict):
        ck.issue(where, "a completion object {text, rating, flagged}", repr(comp)[:60], "type")
        return
    ck.get(comp, "text", str, "a string", where)
    rating = ck.get(comp, "rating", int, "an integer -1, 0 or 1 (or null)", where, nullable=True)
    if isinstance(rating, int) and rating not in (-1, 0, 1):
        ck.issue(f"{where}.rating", "-1, 0 or 1 (or null)", str(rating), "range")
    ck.get(comp, "flagged", bool, "true, false or null", where, nullable=True)


def _check_steps(ck: RecordChecker, steps: list) -> None:
    for i, step in enumerate(steps):
        where = f"label.steps[{i}]"
        if not isinstance(step, dict):
            ck.issue(
                where,
                "a step object {completions, human_completion, chosen_completion}",
                repr(step)[:60],
                "type",
            )
            continue
        comps = ck.get(step, "completions", list, "a list of completions (or null)", where, nullable=True)
        human = ck.get(
            step, "human_completion", dict, "an object {text, ...} (or null)", where, nullable=True
        )
        chosen = ck.get(step, "chosen_completion", int, "an integer index (or null)", where, nullable=True)
        for j, comp in enumerate(comps if isinstance(comps, list) else []):
            _check_completion(ck, comp, f"{where}.completions[{j}]")
        if isinstance(human, dict):
            ck.get(human, "text", str, "a string", f"{where}.human_completion")
        n = len(comps) if isinstance(comps, list) else 0
        if isinstance(chosen, int) and not 0 <= chosen < n:
            ck.issue(f"{where}.chosen_completion", f"an index into the {n} completions", str(chosen), "range")


def _check_record(rec: dict, ck: RecordChecker) -> tuple[dict, dict, int]:
    ck.get(rec, "labeler", str, "a string (labeller id)", nullable=True)
    ck.get(rec, "timestamp", str, "an ISO-8601 string", nullable=True)
    ck.get(rec, "generation", int, "an integer or null", nullable=True)
    ck.get(rec, "is_quality_control_question", bool, "true or false")
    ck.get(rec, "is_initial_screening_question", bool, "true or false")
    question = ck.get(rec, "question", dict, "an object {problem, ground_truth_answer, ...}")
    label = ck.get(rec, "label", dict, "an object {steps, total_time, finish_reason}")
    phase = 1
    if isinstance(question, dict):
        ck.get(question, "problem", str, "a string", "question")
        ck.get(question, "ground_truth_answer", str, "a string or null", "question", nullable=True)
        if "ground_truth_solution" in question:
            ck.get(question, "ground_truth_solution", str, "a string or null", "question", nullable=True)
        if any(k in question for k in PHASE2_KEYS):
            phase = 2
            ck.strings(question, "pre_generated_steps", "question")
            ck.get(question, "pre_generated_answer", str, "a string or null", "question", nullable=True)
            ck.get(
                question,
                "pre_generated_verifier_score",
                (int, float),
                "a number or null",
                "question",
                nullable=True,
            )
    if isinstance(label, dict):
        steps = ck.get(label, "steps", list, "a list of steps", "label")
        ck.get(label, "total_time", int, "an integer (milliseconds) or null", "label", nullable=True)
        ck.get(
            label,
            "finish_reason",
            str,
            "a string such as 'solution' or 'found_error'",
            "label",
            nullable=True,
        )
        if isinstance(steps, list):
            _check_steps(ck, steps)
    return question, label, phase


def _step_from_raw(raw: dict, idx: int | None, prov: Provenance) -> Step:
    """One trajectory step: completion ``idx`` (None: the human completion), alternatives in metadata."""
    comps = raw["completions"] or []
    meta: dict[str, Any] = {"chosen_completion": raw["chosen_completion"]}
    if raw["completions"] is None:
        meta["completions"] = None
    label = None
    if idx is None:
        human = dict(raw["human_completion"])
        text = human.pop("text")
        meta["human_completion"] = human
        alternatives = comps
    else:
        comp = comps[idx]
        text = comp["text"]
        extras = {k: v for k, v in comp.items() if k not in ("text", "rating")}
        if comp["rating"] is None:
            meta["unrated"] = extras
        else:
            label = Label(rating=comp["rating"], provenance=prov, metadata=extras)
        if idx != raw["chosen_completion"]:
            meta["index"] = idx
        if raw["human_completion"] is not None:  # both a choice and a human step: keep the unused one raw
            meta["unused_human_completion"] = raw["human_completion"]
        alternatives = comps[:idx] + comps[idx + 1 :]
    if alternatives:
        meta["alternatives"] = alternatives
    extra = {k: v for k, v in raw.items() if k not in STEP_KEYS}
    if extra:
        meta["extra"] = extra
    if list(raw) != [*STEP_KEYS, *extra]:
        meta["key_order"] = list(raw)
    return Step(text=text, labels=[label] if label else [], metadata={NAME: meta})


def _walk(steps: list[dict], phase: int, prov: Provenance) -> tuple[list[Step], list[dict]]:
    """The labelled trajectory, and the raw steps after the walk ended."""
    out: list[Step] = []
    for i, raw in enumerate(steps):
        chosen, human, comps = raw["chosen_completion"], raw["human_completion"], raw["completions"]
        if chosen is not None:
            out.append(_step_from_raw(raw, chosen, prov))
        elif human is not None:
            out.append(_step_from_raw(raw, None, prov))
        elif comps and phase == 2:
            out.append(_step_from_raw(raw, 0, prov))  # the pre-generated step, rated at the first error
            return out, steps[i + 1 :]
        else:
            return out, steps[i:]
    return out, []


def _timestamp(value: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if value else None
    except ValueError:
        return None


def _final_answer(text: str) -> str | None:
    return text.rsplit(ANSWER_MARK, 1)[1] if ANSWER_MARK in text else None


def _parse_label_record(rec: dict, ck: RecordChecker) -> Trace | None:
    question, label, phase = _check_record(rec, ck)
    if ck.issues:
        return None
    labeler = rec["labeler"]
    prov = Provenance(
        method="human",
        actor=labeler,
        params={"dataset": NAME, "phase": phase},
        version=FORMAT_VERSION,
        created_at=_timestamp(rec["timestamp"]),
    )
    steps, tail = _walk(label["steps"], phase, prov)
    meta: dict[str, Any] = {k: rec[k] for k in RECORD_KEYS[:5]}
    meta.update(phase=phase, total_time=label["total_time"], finish_reason=label["finish_reason"])
    problem_meta = {}
    if "ground_truth_solution" in question:
        problem_meta["ground_truth_solution"] = question["ground_truth_solution"]
    final = _final_answer(steps[-1].text) if steps else None
    if phase == 2:
        final = question["pre_generated_answer"]
        meta["pre_generated_verifier_score"] = question["pre_generated_verifier_score"]
        pre = question["pre_generated_steps"]
        n = len(steps)
        if pre[:n] == [s.text for s in steps]:
            meta["label_steps"] = n
            steps += [Step(text=t) for t in pre[n:]]  # unlabelled: labelling stopped at the first error
        else:
            meta["pre_generated_steps"] = pre
    if tail:
        meta["tail"] = tail
    _keep_unknown_keys(rec, question, label, meta)
    problem = Problem(
        id=f"{NAME}-{digest(question['problem'])}",
        text=question["problem"],
        answer=question["ground_truth_answer"],
        source="MATH",
        metadata=problem_meta,
    )
    tid = f"{NAME}-{digest(labeler, rec['timestamp'], question['problem'])}"
    return Trace(id=tid, problem=problem, steps=steps, final_answer=final, metadata={NAME: meta})


def _keep_unknown_keys(rec: dict, question: dict, label: dict, meta: dict) -> None:
    known_q = ("problem", "ground_truth_solution", "ground_truth_answer", *PHASE2_KEYS)
    for name, raw, known in (
        ("record", rec, RECORD_KEYS),
        ("question", question, known_q),
        ("label", label, LABEL_KEYS),
    ):
        extra = {k: v for k, v in raw.items() if k not in known}
        if extra:
            meta.setdefault("extra", {})[name] = extra
    built = _to_record_unordered(rec, question, label)
    orders = {
        name: order
        for name, raw, made in (
            ("record", rec, built),
            ("question", question, built["question"]),
            ("label", label, built["label"]),
        )
        if (order := key_order_if_unusual(raw, made))
    }
    if orders:
        meta["key_order"] = orders


def _to_record_unordered(rec: dict, question: dict, label: dict) -> dict:
    """The key layout the writer produces for this record (to decide whether to remember the order)."""
    known_q = ("problem", "ground_truth_solution", "ground_truth_answer", *PHASE2_KEYS)
    q = {k: None for k in known_q if k in question} | {k: None for k in question if k not in known_q}
    lab = {k: None for k in LABEL_KEYS} | {k: None for k in label if k not in LABEL_KEYS}
    out: dict[str, Any] = {k: None for k in RECORD_KEYS} | {k: None for k in rec if k not in RECORD_KEYS}
    out["question"], out["label"] = q, lab
    return out


def _parse_split_record(rec: dict, ck: RecordChecker) -> Problem | None:
    for key in ("problem", "solution", "answer", "subject", "unique_id"):
        ck.get(rec, key, str, "a string")
    ck.get(rec, "level", (int, str), "an integer 1-5 (or 'Level N')")
    if ck.issues:
        return None
    meta: dict[str, Any] = {k: rec[k] for k in ("solution", "subject", "level")}
    extra = {k: v for k, v in rec.items() if k not in SPLIT_KEYS}
    if extra:
        meta["extra"] = extra
    if list(rec) != [*SPLIT_KEYS, *extra]:
        meta["key_order"] = list(rec)
    return Problem(
        id=rec["unique_id"], text=rec["problem"], answer=rec["answer"], source="MATH", metadata=meta
    )


def _parse(rec: dict, ck: RecordChecker) -> Trace | Problem | None:
    if "unique_id" in rec and "label" not in rec:
        return _parse_split_record(rec, ck)
    return _parse_label_record(rec, ck)


def read(path: str | Path, skip_invalid: bool = False) -> ReadResult:
    """Read a PRM800K label file (traces) or MATH split file (problems)."""
    items, report = read_records(path, NAME, _parse, skip_invalid)
    traces = unique_ids([x for x in items if isinstance(x, Trace)])
    problems = [x for x in items if isinstance(x, Problem)]
    if traces:
        problems = list({t.problem.id: t.problem for t in traces}.values()) + problems
    return ReadResult(traces, format=NAME, path=str(path), problems=problems, skipped=report)


# --- writing ---------------------------------------------------------------------------------------


def _raw_step(step: Step, source: str | None) -> dict:
    meta = step.metadata.get(NAME)
    lab = step.label(source) if source is not None else None
    rating = lab.rating if lab is not None else None
    if meta is None:  # a step from another format: one completion, chosen
        return {
            "completions": [{"text": step.text, "rating": rating, "flagged": None}],
            "human_completion": None,
            "chosen_completion": 0,
        }
    comps: list | None = list(meta.get("alternatives", []))
    human = meta.get("unused_human_completion")
    if "human_completion" in meta:
        human = {"text": step.text, **meta["human_completion"]}
    else:
        extras = lab.metadata if lab is not None else meta.get("unrated", {"flagged": None})
        own = {"text": step.text, "rating": rating, **extras}
        comps.insert(meta.get("index", meta["chosen_completion"]), own)
    if "completions" in meta:
        comps = meta["completions"]
    out = {"completions": comps, "human_completion": human, "chosen_completion": meta["chosen_completion"]}
    out.update(meta.get("extra", {}))
    return ordered(out, meta.get("key_order"))


def _labeler_source(trace: Trace, meta: dict, source: str | None) -> str | None:
    if source is not None:
        return source
    if meta.get("labeler") is not None:
        return f"human:{meta['labeler']}"
    return pick_source(trace, None)


def to_record(trace: Trace, source: str | None = None) -> dict:
    """The PRM800K label record of a trace (exact for traces read from PRM800K)."""
    meta = trace.metadata.get(NAME, {})
    source = _labeler_source(trace, meta, source)
    phase = meta.get("phase", 1)
    n = meta.get("label_steps", len(trace.steps))
    steps = [_raw_step(s, source) for s in trace.steps[:n]] + list(meta.get("tail", []))
    extra = meta.get("extra", {})
    question: dict[str, Any] = {"problem": trace.problem.text}
    if "ground_truth_solution" in trace.problem.metadata:
        question["ground_truth_solution"] = trace.problem.metadata["ground_truth_solution"]
    question["ground_truth_answer"] = trace.problem.answer
    if phase == 2:
        question["pre_generated_steps"] = meta.get("pre_generated_steps", [s.text for s in trace.steps])
        question["pre_generated_answer"] = trace.final_answer
        question["pre_generated_verifier_score"] = meta.get("pre_generated_verifier_score")
    question.update(extra.get("question", {}))
    finish = meta.get("finish_reason")
    if finish is None and NAME not in trace.metadata:
        erred = source is not None and trace.first_error(source) >= 0
        finish = "found_error" if erred else "solution"
    label = {
        "steps": steps,
        "total_time": meta.get("total_time"),
        "finish_reason": finish,
        **extra.get("label", {}),
    }
    labeler = meta.get("labeler")
    if labeler is None and source is not None and source.startswith("human:"):
        labeler = source.partition(":")[2]
    rec: dict[str, Any] = {
        "labeler": labeler,
        "timestamp": meta.get("timestamp"),
        "generation": meta.get("generation"),
        "is_quality_control_question": meta.get("is_quality_control_question", False),
        "is_initial_screening_question": meta.get("is_initial_screening_question", False),
        "question": None,
        "label": None,
        **extra.get("record", {}),
    }
    orders = meta.get("key_order", {})
    rec["question"] = ordered(question, orders.get("question"))
    rec["label"] = ordered(label, orders.get("label"))
    return ordered(rec, orders.get("record"))


def split_record(problem: Problem) -> dict:
    """The MATH split line of a problem (exact for problems read from a split file)."""
    meta = problem.metadata
    rec = {
        "problem": problem.text,
        "solution": meta.get("solution", ""),
        "answer": problem.answer,
        "subject": meta.get("subject", ""),
        "level": meta.get("level"),
        "unique_id": problem.id,
        **meta.get("extra", {}),
    }
    return ordered(rec, meta.get("key_order"))


def write(path: str | Path, items: list[Trace] | list[Problem], **options: Any) -> WriteReport:
    """Write traces as PRM800K label lines, or problems as MATH split lines (``json.dumps`` defaults).

    Option ``source``: the label source whose ratings are written (default: the trace's labeller, else
    the first source on the trace).
    """
    opts = take_options(NAME, options, {"source": None})
    report = WriteReport(format=NAME, path=str(path), traces=len(items), options=opts)
    if items and isinstance(items[0], Problem):
        rows = [split_record(p) for p in items]  # type: ignore[arg-type]
    else:
        rows = [to_record(t, opts["source"]) for t in items]  # type: ignore[arg-type]
        report.lost = list(LOST)
    note_agent_steps(items, report)
    report.written = dump_rows(path, rows)
    return report


FORMAT = Format(
    NAME,
    read,
    write,
    "every field of label lines (ratings incl. 0/null, flagged, alternatives, human completions, QC flags) "
    "and MATH split lines",
    problems=True,
    options={"source": None},
)

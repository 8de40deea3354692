"""ProcessBench (QwenLM/ProcessBench, HF ``Qwen/ProcessBench``): one JSON array file per split.

Record ``{id, generator, problem, steps, final_answer_correct, label}``; ``label`` is the 0-based index of
the earliest wrong step, -1 when none is wrong. A right final answer can sit beside a wrong step.

Labels are imported so that ``trace.first_error("human:processbench") == label``: the steps before it
+1, the label step -1, the steps after it **unlabelled** (the annotators stopped there); -1 gives +1 on
every step. The provenance method is ``human`` because ProcessBench's labels are expert human
annotations (the paper's annotators), and consensus or audits must weigh them as human judgements;
``imported`` would hide that. The actor is ``processbench``; params say the +1 before the error are
implied by a first-error annotation.

Core mapping: Trace.id = id, Trace.generator = generator, Trace.answer_correct = final_answer_correct,
Problem (id = id, text = problem, source = the split named in the id). Unknown keys are kept in
``Trace.metadata["processbench"]``. Writing uses ``json.dumps(records, indent=2, ensure_ascii=False)`` with no
trailing newline, as the original files were written, so a real file comes back byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prmkit.core.files import atomic_write
from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.formats.base import (
    FORMAT_VERSION,
    Format,
    ReadResult,
    RecordChecker,
    WriteReport,
    check_choice,
    graded,
    note_agent_steps,
    ordered,
    read_records,
    take_options,
    unique_ids,
)
from prmkit.formats.binary import NEUTRAL, pick_source, step_verdict

NAME = "processbench"
SOURCE = "human:processbench"
KEYS = ("id", "generator", "problem", "steps", "final_answer_correct", "label")
PROVENANCE = Provenance(
    method="human",
    actor="processbench",
    params={"source": "Qwen/ProcessBench", "annotation": "first error; earlier steps implied +1"},
    version=FORMAT_VERSION,
)
LOST = [
    "every label except the first error (ratings after it, neutral 0 unless option neutral=negative, soft scores)",
    "Trace.final_answer, problem answer and source, step kinds, provenance, metadata of other formats",
]


def _parse(rec: dict, ck: RecordChecker) -> Trace | None:
    rid = ck.get(rec, "id", str, "a string such as 'gsm8k-0'")
    generator = ck.get(rec, "generator", str, "a string (the model that wrote the solution)")
    problem = ck.get(rec, "problem", str, "a string")
    steps = ck.strings(rec, "steps")
    correct = ck.get(rec, "final_answer_correct", bool, "true or false")
    label = ck.get(rec, "label", int, "an integer: index of the first wrong step, or -1")
    if isinstance(label, int) and isinstance(steps, list) and not -1 <= label < len(steps):
        ck.issue("label", f"-1 or a step index 0..{len(steps) - 1}", str(label), "range")
    if ck.issues:
        return None
    labels: list[Label | None] = [
        Label(rating=1, provenance=PROVENANCE)
        if label == -1 or i < label
        else Label(rating=-1, provenance=PROVENANCE)
        if i == label
        else None
        for i in range(len(steps))
    ]
    trace = Trace(
        id=rid,
        problem=Problem(id=rid, text=problem, source=rid.rsplit("-", 1)[0]),
        steps=[Step(text=s) for s in steps],
        answer_correct=correct,
        generator=generator,
    )
    trace.add_labels(labels)
    extra = {k: v for k, v in rec.items() if k not in KEYS}
    meta: dict[str, Any] = {"extra": extra} if extra else {}
    if list(rec) != [*KEYS, *extra]:
        meta["key_order"] = list(rec)
    if meta:
        trace.metadata[NAME] = meta
    return trace


def read(path: str | Path, skip_invalid: bool = False) -> ReadResult:
    """Read a ProcessBench split file (a JSON array)."""
    traces, report = read_records(path, NAME, _parse, skip_invalid, want_array=True)
    return ReadResult(unique_ids(traces), format=NAME, path=str(path), skipped=report)


def first_error(trace: Trace, source: str | None, neutral: str) -> int:
    """Index of the first step the source rates wrong (-1 or, with neutral=negative, 0 too)."""
    for i, step in enumerate(trace.steps):
        if step_verdict(step, source, neutral) is False:
            return i
    return -1


def to_record(trace: Trace, source: str | None, neutral: str = "positive") -> dict:
    meta = trace.metadata.get(NAME, {})
    rec = {
        "id": trace.id,
        "generator": trace.generator,
        "problem": trace.problem.text,
        "steps": [s.text for s in trace.steps],
        "final_answer_correct": trace.answer_correct,
        "label": first_error(trace, source, neutral),
        **meta.get("extra", {}),
    }
    return ordered(rec, meta.get("key_order"))


def _complete(trace: Trace, source: str | None, opts: dict[str, Any], report: WriteReport) -> Trace | None:
    """The trace with the outcome and generator ProcessBench needs (filled by options), or None to drop it."""
    if source is None:
        report.dropped["no_labels"] += 1
        return None
    update: dict[str, Any] = {}
    if trace.answer_correct is None and opts["grade"]:
        trace = graded(trace, report)
        if trace.answer_correct is None:
            report.dropped["answer_not_gradable"] += 1
            return None
    elif trace.answer_correct is None:
        report.dropped["no_final_answer_correct"] += 1
        return None
    if trace.generator is None and opts["generator"] is None:
        report.dropped["no_generator"] += 1
        return None
    if trace.generator is None:
        update["generator"] = opts["generator"]
    return trace.model_copy(update=update) if update else trace


def write(path: str | Path, traces: list[Trace], **options: Any) -> WriteReport:
    """Write traces as a ProcessBench JSON array (``indent=2, ensure_ascii=False``, no trailing newline).

    Options: ``source`` (label source; default ``human:processbench`` when present, else the first on
    each trace) and ``neutral`` (``positive``, the default: only -1 is an error, ProcessBench's
    definition; ``negative`` makes a neutral 0 the first error), ``grade`` (fill a missing
    ``answer_correct`` by checking ``final_answer`` against the problem's answer, e.g. for PRM800K) and
    ``generator`` (the name written where a trace has none). Traces still without ``answer_correct``,
    ``generator`` or any label cannot be written; they are counted by reason.
    """
    opts = take_options(
        NAME, options, {"source": None, "neutral": "positive", "grade": False, "generator": None}
    )
    check_choice("neutral", opts["neutral"], NEUTRAL)
    report = WriteReport(format=NAME, path=str(path), traces=len(traces), lost=list(LOST), options=opts)
    note_agent_steps(traces, report)
    records = []
    for trace in traces:
        source = opts["source"] or (SOURCE if SOURCE in trace.sources() else pick_source(trace, None))
        complete = _complete(trace, source, opts, report)
        if complete is not None:
            records.append(to_record(complete, source, opts["neutral"]))
    with atomic_write(path) as fh:
        fh.write(json.dumps(records, indent=2, ensure_ascii=False))
    report.written = len(records)
    return report


FORMAT = Format(
    NAME,
    read,
    write,
    "id, generator, problem, steps, final_answer_correct, first-error index",
    options={"source": None, "neutral": NEUTRAL, "grade": None, "generator": None},
)

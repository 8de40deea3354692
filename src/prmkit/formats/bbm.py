"""BIG-Bench Mistake (WHGTyen/BIG-Bench-Mistake): one JSONL file per BIG-Bench task.

Record ``{input, steps, answer, target, mistake_index}``: ``steps`` the CoT steps (without their
``Thought N:`` prefixes), ``answer`` the model's answer (null when none was extracted), ``target`` the
correct one, ``mistake_index`` the 0-based index of the first logical mistake (null: no mistake). The key
order differs between task files (dyck_languages puts ``target`` before ``steps``); it is kept.

Labels are imported so that ``trace.first_error("human:bbm") == mistake_index``: steps before it +1, the
mistake step -1, the steps after it unlabelled (annotators stopped there); null gives +1 on every step.
Provenance ``human`` / ``bbm`` (most dyck_languages traces were annotated by the authors' script, not by
hand: the labels still come from the benchmark, under one actor).

Core mapping: Trace.id = ``<file stem>-<position>`` (records carry no id), Problem.text = input,
Problem.answer = target, Problem.source = the file stem (the task), Trace.final_answer = answer,
Trace.answer_correct = ``answer == target`` (None when answer is null), generator ``PaLM-2-L`` (the
paper's). Unknown keys are kept in ``Trace.metadata["bbm"]``; writing uses ``json.dumps`` defaults and no final newline, as
the real files were written, so a real file comes back byte for byte.
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
    note_agent_steps,
    ordered,
    read_records,
    take_options,
)
from prmkit.formats.binary import NEUTRAL, pick_source
from prmkit.formats.processbench import first_error

NAME = "bbm"
SOURCE = "human:bbm"
KEYS = ("input", "steps", "answer", "target", "mistake_index")
GENERATOR = "PaLM-2-L"
PROVENANCE = Provenance(
    method="human",
    actor="bbm",
    params={"source": "WHGTyen/BIG-Bench-Mistake", "annotation": "first mistake; earlier steps implied +1"},
    version=FORMAT_VERSION,
)
LOST = [
    "every label except the first mistake (ratings after it, soft scores)",
    "Trace.id, generator, answer_correct, step kinds, provenance, metadata of other formats",
]


def first_error_labels(n: int, first: int | None) -> list[Label | None]:
    """+1 before ``first``, -1 at it, None after it; +1 everywhere when ``first`` is None."""
    return [
        Label(rating=1, provenance=PROVENANCE)
        if first is None or i < first
        else Label(rating=-1, provenance=PROVENANCE)
        if i == first
        else None
        for i in range(n)
    ]


def _parser(stem: str):
    position = iter(range(10**12))

    def parse(rec: dict, ck: RecordChecker) -> Trace | None:
        index = next(position)
        question = ck.get(rec, "input", str, "a string (the question)")
        steps = ck.strings(rec, "steps")
        answer = ck.get(rec, "answer", str, "a string or null (the model's answer)", nullable=True)
        target = ck.get(rec, "target", str, "a string (the correct answer)")
        mistake = ck.get(rec, "mistake_index", int, "an integer step index or null", nullable=True)
        if isinstance(steps, list) and not steps:
            ck.issue("steps", "at least one step", "an empty list", "empty")
        if isinstance(mistake, int) and isinstance(steps, list) and steps and not 0 <= mistake < len(steps):
            ck.issue("mistake_index", f"null or a step index 0..{len(steps) - 1}", str(mistake), "range")
        if ck.issues:
            return None
        trace = Trace(
            id=f"{stem}-{index}",
            problem=Problem(id=f"{stem}-{index}", text=question, answer=target, source=stem),
            steps=[Step(text=s) for s in steps],
            final_answer=answer,
            answer_correct=None if answer is None else answer == target,
            generator=GENERATOR,
        )
        trace.add_labels(first_error_labels(len(steps), mistake))
        extra = {k: v for k, v in rec.items() if k not in KEYS}
        meta: dict[str, Any] = {"extra": extra} if extra else {}
        if list(rec) != [*KEYS, *extra]:
            meta["key_order"] = list(rec)
        if meta:
            trace.metadata[NAME] = meta
        return trace

    return parse


def read(path: str | Path, skip_invalid: bool = False) -> ReadResult:
    """Read one BIG-Bench Mistake task file (JSONL)."""
    traces, report = read_records(path, NAME, _parser(Path(path).stem), skip_invalid)
    return ReadResult(traces, format=NAME, path=str(path), skipped=report)


def to_record(trace: Trace, source: str | None, neutral: str = "positive") -> dict:
    meta = trace.metadata.get(NAME, {})
    first = first_error(trace, source, neutral) if source else -1
    rec = {
        "input": trace.problem.text,
        "steps": [s.text for s in trace.steps],
        "answer": trace.final_answer,
        "target": trace.problem.answer,
        "mistake_index": None if first == -1 else first,
        **meta.get("extra", {}),
    }
    return ordered(rec, meta.get("key_order"))


def write(path: str | Path, traces: list[Trace], **options: Any) -> WriteReport:
    """Write traces as BIG-Bench Mistake JSONL (``json.dumps`` defaults). Options: ``source`` (label
    source; default ``human:bbm`` when present, else the first on each trace), ``neutral`` (``positive``:
    only -1 is a mistake). A trace with no reference answer (``target``) or no labels is dropped, counted."""
    opts = take_options(NAME, options, {"source": None, "neutral": "positive"})
    check_choice("neutral", opts["neutral"], NEUTRAL)
    report = WriteReport(format=NAME, path=str(path), traces=len(traces), lost=list(LOST), options=opts)
    note_agent_steps(traces, report)
    lines = []
    for trace in traces:
        source = opts["source"] or (SOURCE if SOURCE in trace.sources() else pick_source(trace, None))
        if source is None:
            report.dropped["no_labels"] += 1
        elif trace.problem.answer is None:
            report.dropped["no_target"] += 1
        else:
            lines.append(json.dumps(to_record(trace, source, opts["neutral"])))
    with atomic_write(path) as fh:
        fh.write("\n".join(lines))  # no final newline, as the real files
    report.written = len(lines)
    return report


FORMAT = Format(
    NAME, read, write, "input, steps, answer, target, first-mistake index",
    options={"source": None, "neutral": NEUTRAL},
)  # fmt: skip

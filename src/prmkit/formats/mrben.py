"""MR-Ben (dvlab-research/Mr-Ben, HF ``Randolphzeng/Mr-Ben``): one JSON file per subject.

The repository's ``data/<subject>.json`` is a JSON object ``{Question_UUID: [record, ...]}`` (three
solutions per question, sampled from different models), pretty-printed with ``indent=2``; JSON Lines of the
same records are read too. A record: ``Question_UUID``, ``Subject``, ``Question``, ``Options``,
``Ground_Truth_Analysis``, ``Ground_Truth_Answer``, ``Ground_Truth_Answer_Modified``, ``Sampled_Model``,
``Model_Solution_Steps`` (a list of ``"Step N: ..."`` strings; for coding one string, the code),
``Model_Solution_Correctness`` (``correct`` / ``incorrect``), ``Model_Solution_First_Error_Step`` (the
1-based step number as a string, ``N/A`` when correct; for coding the first wrong *line* of code),
``Model_Solution_Error_Reason``, ``Model_Solution_Rectified_First_Error_Step``.

Labels are imported so that ``trace.first_error("human:mrben")`` is the first error step, 0-based (steps
before +1, after unlabelled, as ProcessBench). Coding code is split into lines, one step each; its first
error is the first line equal to the annotated one (stripped); an incorrect solution whose annotated
line is no line of the code (or is empty) has no labels. Core mapping: Trace.id = ``UUID/Sampled_Model``,
Problem (id UUID, text Question, answer Ground_Truth_Answer, source Subject), generator Sampled_Model,
answer_correct. Every other field, the raw first-error string and the key order are kept in
``Trace.metadata["mrben"]``, so a real file comes back byte for byte (``indent=2``, ``ensure_ascii=False``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prmkit.core.errors import InputError, Issue, short
from prmkit.core.files import atomic_write
from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.formats.base import (
    FORMAT_VERSION,
    Format,
    ReadResult,
    RecordChecker,
    SkipReport,
    WriteReport,
    note_agent_steps,
    ordered,
    read_records,
    take_options,
)
from prmkit.formats.binary import pick_source
from prmkit.formats.processbench import first_error

NAME = "mrben"
SOURCE = "human:mrben"
MAPPED = ("Question_UUID", "Subject", "Question", "Ground_Truth_Answer", "Sampled_Model",
          "Model_Solution_Steps", "Model_Solution_Correctness", "Model_Solution_First_Error_Step")  # fmt: skip
PROVENANCE = Provenance(
    method="human",
    actor="mrben",
    params={"source": "dvlab-research/Mr-Ben", "annotation": "first error step; earlier steps implied +1"},
    version=FORMAT_VERSION,
)
LOST = ["every label except the first error", "soft scores, provenance, metadata of other formats"]


def _labels(n: int, first: int | None) -> list[Label | None]:
    if first is None:
        return [None] * n
    return [Label(rating=1, provenance=PROVENANCE) if first == -1 or i < first
            else Label(rating=-1, provenance=PROVENANCE) if i == first else None for i in range(n)]  # fmt: skip


def _parse(rec: dict, ck: RecordChecker) -> Trace | None:
    uuid = ck.get(rec, "Question_UUID", str, "a string (the question's id)")
    subject = ck.get(rec, "Subject", str, "a string such as 'college_math'")
    question = ck.get(rec, "Question", str, "a string")
    answer = ck.get(rec, "Ground_Truth_Answer", str, "a string")
    model = ck.get(rec, "Sampled_Model", str, "a string (the model that wrote the solution)")
    steps = ck.get(rec, "Model_Solution_Steps", (list, str), "a list of step strings (coding: the code)")
    verdict = ck.get(rec, "Model_Solution_Correctness", str, "'correct' or 'incorrect'")
    fe = ck.get(rec, "Model_Solution_First_Error_Step", str, "a step number as a string, or 'N/A'")
    if isinstance(steps, list):
        for i, s in enumerate(steps):
            if not isinstance(s, str):
                ck.issue(f"Model_Solution_Steps[{i}]", "a string", short(s), "type")
    if steps == [] or steps == "":
        ck.issue("Model_Solution_Steps", "at least one step", short(steps), "empty")
    if isinstance(verdict, str) and verdict not in ("correct", "incorrect"):
        ck.issue("Model_Solution_Correctness", "'correct' or 'incorrect'", short(verdict), "choice")
    if ck.issues:
        return None
    coding = isinstance(steps, str)
    texts = steps.split("\n") if coding else steps
    first: int | None = -1
    if verdict == "incorrect":
        if coding:
            first = next((i for i, t in enumerate(texts) if fe.strip() and t.strip() == fe.strip()), None)
        elif fe.strip().isdigit() and 1 <= int(fe) <= len(texts):
            first = int(fe) - 1
        else:
            ck.issue("Model_Solution_First_Error_Step", f"a step number 1..{len(texts)}", short(fe), "range")
            return None
    trace = Trace(
        id=f"{uuid}/{model}",
        problem=Problem(id=uuid, text=question, answer=answer, source=subject),
        steps=[Step(text=t) for t in texts],
        answer_correct=verdict == "correct",
        generator=model,
    )
    trace.add_labels(_labels(len(texts), first))
    trace.metadata[NAME] = {
        "extra": {k: v for k, v in rec.items() if k not in MAPPED},
        "key_order": list(rec),
        "first_error_step": fe,
        "first_error": first,
        "coding": coding,
    }
    return trace


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def subject_records(text: str):
    """``(line, record)`` of a ``{uuid: [record, ...]}`` document, each record's line its opening brace's."""
    dec = json.JSONDecoder()
    i = _skip_ws(text, 0) + 1
    while (i := _skip_ws(text, i)) < len(text) and text[i] != "}":
        _, i = dec.raw_decode(text, i)
        i = _skip_ws(text, _skip_ws(text, i) + 1) + 1  # past ':' and '['
        while (i := _skip_ws(text, i)) < len(text) and text[i] != "]":
            line = text.count("\n", 0, i) + 1
            rec, i = dec.raw_decode(text, i)
            yield line, rec
            i = _skip_ws(text, i)
            i += text[i] == ","
        i = _skip_ws(text, i + 1)
        i += i < len(text) and text[i] == ","


def is_subject_file(path: str | Path) -> bool:
    """Whether ``path`` starts like the repository's subject files: a JSON object opening on its own line."""
    with open(path, "rb") as fh:
        head = fh.read(4096).decode("utf-8", "ignore").lstrip("\ufeff")
    return head.lstrip().startswith("{") and head.split("\n", 1)[0].strip() == "{"


def read(path: str | Path, skip_invalid: bool = False) -> ReadResult:
    """Read an MR-Ben subject file (the repository's JSON object) or JSON Lines of its records."""
    if not is_subject_file(path):
        traces, report = read_records(path, NAME, _parse, skip_invalid)
        return ReadResult(traces, format=NAME, path=str(path), skipped=report)
    text = Path(path).read_text(encoding="utf-8")
    traces, issues, report = [], [], SkipReport()
    try:
        items = list(subject_records(text))
    except json.JSONDecodeError as err:
        raise InputError([Issue(str(path), err.lineno, "(record)", "a JSON object of lists of records",
                                f"invalid JSON ({err.msg})", "json")]) from None  # fmt: skip
    for line, rec in items:
        ck = RecordChecker(str(path), line)
        trace = (
            _parse(rec, ck)
            if isinstance(rec, dict)
            else ck.issue("(record)", "a JSON object", short(rec), "type")
        )
        if ck.issues:
            if skip_invalid:
                report.add(ck.issues[0])
            issues.extend(ck.issues)
        else:
            traces.append(trace)
    if issues and not skip_invalid:
        raise InputError(issues)
    return ReadResult(traces, format=NAME, path=str(path), skipped=report)


def to_record(trace: Trace, source: str | None) -> dict:
    meta = trace.metadata.get(NAME, {})
    first = first_error(trace, source, "positive") if source else -1
    code = meta.get("coding", False)
    kept = meta.get("first_error", object())
    if "first_error_step" in meta and (first == kept or (kept is None and first == -1)):
        fe = meta["first_error_step"]
    else:
        fe = "N/A" if first == -1 else trace.steps[first].text if code else str(first + 1)
    texts = [s.text for s in trace.steps]
    rec = {
        "Question_UUID": trace.problem.id, "Subject": trace.problem.source, "Question": trace.problem.text,
        "Ground_Truth_Answer": trace.problem.answer, "Sampled_Model": trace.generator,
        "Model_Solution_Steps": "\n".join(texts) if code else texts,
        "Model_Solution_Correctness": "correct" if trace.answer_correct else "incorrect",
        "Model_Solution_First_Error_Step": fe, **meta.get("extra", {}),
    }  # fmt: skip
    return ordered(rec, meta.get("key_order"))


def write(path: str | Path, traces: list[Trace], **options: Any) -> WriteReport:
    """Write MR-Ben records: a ``.jsonl`` path gets JSON Lines, any other the repository's
    ``{uuid: [records]}`` object (``indent=2, ensure_ascii=False``). Option ``source``: the label source
    (default ``human:mrben`` when present, else the first on each trace). A trace whose solution
    correctness or reference answer (``Ground_Truth_Answer``, a string upstream) is unknown is dropped,
    counted."""
    opts = take_options(NAME, options, {"source": None})
    report = WriteReport(format=NAME, path=str(path), traces=len(traces), lost=list(LOST), options=opts)
    note_agent_steps(traces, report)
    records = []
    for trace in traces:
        source = opts["source"] or (SOURCE if SOURCE in trace.sources() else pick_source(trace, None))
        if trace.answer_correct is None:
            report.dropped["no_answer_correct"] += 1
            continue
        if trace.problem.answer is None:
            report.dropped["no_reference_answer"] += 1
            continue
        records.append(to_record(trace, source))
    with atomic_write(path) as fh:
        if str(path).endswith(".jsonl"):
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        else:
            grouped: dict[str, list[dict]] = {}
            for r in records:
                grouped.setdefault(r["Question_UUID"], []).append(r)
            fh.write(json.dumps(grouped, indent=2, ensure_ascii=False))
    report.written = len(records)
    return report


FORMAT = Format(NAME, read, write, "question, steps, solution correctness, first error step (+ all fields)",
                options={"source": None})  # fmt: skip

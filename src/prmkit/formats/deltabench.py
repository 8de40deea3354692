"""DeltaBench (OpenStellarTeam/DeltaBench, HF ``OpenStellarTeam/DeltaBench``): ``Deltabench_v1.jsonl``.

JSON Lines, one long CoT per line, cut into *sections* (the paper's unit, 1-based). The fields the
repository's ``evaluation.py`` (commit 6b67c64) reads: ``question``, ``sections_content`` (older files:
``section_content``; the CoT as ``"section1:\\n...\\n\\nsection2:\\n..."``, the layout of its prompt's
example), ``reason_error_section_numbers`` and ``reason_unuseful_section_numbers`` (lists of 1-based
section numbers; their union is the gold) and ``task_l1`` (the domain its table is grouped by). Other
readers of the released file also use ``id``, ``answer``, ``origin``, ``task_l2``, ``final_correct``,
``long_cot``, ``sections`` (a list of objects whose ``content`` is one section's text),
``sections_labeled_info`` (per-section annotations), ``reflection_section_numbers`` and
``stragegy_shift_section_numbers`` (sic). The data file is not in the repository (absent from its
snapshot), so those come from code that reads it, not from a record seen here.

Steps are the ``content`` of ``sections`` when present, else ``sections_content`` cut at its
``section<N>:`` headers. Labels, source ``human:deltabench``: a section in either list -1 (label metadata
``error`` / ``unuseful`` says which), every other section +1. Core mapping: Trace.id and Problem.id =
``id`` (``<file stem>-<line index>`` when absent), Problem.text = ``question``, Problem.answer =
``answer``, Problem.source = ``task_l1``, answer_correct = ``final_correct`` when it is a boolean or 0/1.
Every other field, the raw section lists and the key order are kept in ``Trace.metadata["deltabench"]``;
``sections`` / ``sections_content`` are written back verbatim while the step texts are unchanged, so a
file comes back byte for byte (``ensure_ascii`` as the file had it: escaped when the file is pure ASCII).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from prmkit.core.errors import short
from prmkit.core.files import atomic_write
from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.formats.base import (
    FORMAT_VERSION,
    Format,
    ReadResult,
    RecordChecker,
    WriteReport,
    digest,
    note_agent_steps,
    ordered,
    read_records,
    take_options,
)
from prmkit.formats.binary import pick_source

NAME = "deltabench"
SOURCE = "human:deltabench"
ERROR, UNUSEFUL = "reason_error_section_numbers", "reason_unuseful_section_numbers"
CONTENT = ("sections_content", "section_content")
MAPPED = ("id", "question", "answer", "task_l1", ERROR, UNUSEFUL)
HEAD = re.compile(r"^section\s*(\d+)\s*:[ \t]*\n?", re.IGNORECASE | re.MULTILINE)
PROVENANCE = Provenance(
    method="human",
    actor="deltabench",
    params={"source": "OpenStellarTeam/DeltaBench", "annotation": "erroneous and unuseful sections"},
    version=FORMAT_VERSION,
)
LOST = [
    "soft scores, neutral ratings, provenance, metadata of other formats",
    "generator",
    "unlabelled steps (a section in neither list reads back as +1)",
]


def split_sections(text: str) -> list[str] | None:
    """The sections of a ``section1:\\n...`` text, or None when it does not open with ``section1:`` or
    its headers are not numbered 1, 2, ..."""
    heads = list(HEAD.finditer(text))
    if (
        not heads
        or text[: heads[0].start()].strip()
        or [int(h[1]) for h in heads] != list(range(1, len(heads) + 1))
    ):
        return None
    ends = [h.start() for h in heads[1:]] + [len(text)]
    return [text[h.end() : end].strip() for h, end in zip(heads, ends, strict=True)]


def join_sections(texts: list[str]) -> str:
    """``sections_content`` of step texts, in the layout of DeltaBench's prompt example."""
    return "\n\n".join(f"section{i}:\n{t}" for i, t in enumerate(texts, 1))


def _numbers(rec: dict, key: str, ck: RecordChecker) -> Any:
    value = ck.get(rec, key, list, "a list of 1-based section numbers")
    if value is ck.BAD:
        return value
    bad = [i for i, n in enumerate(value) if not isinstance(n, int) or isinstance(n, bool)]
    for i in bad:
        ck.issue(f"{key}[{i}]", "an integer section number", short(value[i]), "type")
    return ck.BAD if bad else value


def _texts(rec: dict, ck: RecordChecker) -> Any:
    """The section texts: ``sections[*].content``, else ``sections_content`` cut at its headers."""
    if "sections" in rec:
        sections = ck.get(rec, "sections", list, "a list of {content: text} objects")
        if sections is ck.BAD:
            return sections
        texts = [s.get("content") if isinstance(s, dict) else None for s in sections]
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                ck.issue(
                    f"sections[{i}].content", "a string (the section's text)", short(sections[i]), "type"
                )
        return texts if all(isinstance(t, str) for t in texts) else ck.BAD
    key = next((k for k in CONTENT if k in rec), CONTENT[0])
    text = ck.get(rec, key, str, "the long CoT as 'section1:\\n...\\n\\nsection2:\\n...'")
    if text is ck.BAD:
        return text
    texts = split_sections(text)
    if texts is None:
        ck.issue(key, "sections headed 'section1:', 'section2:', ... in order", short(text), "layout")
        return ck.BAD
    return texts


def _parser(stem: str):
    position = iter(range(10**12))

    def parse(rec: dict, ck: RecordChecker) -> Trace | None:
        index = next(position)
        question = ck.get(rec, "question", str, "a string (the question)")
        errors, unuseful = _numbers(rec, ERROR, ck), _numbers(rec, UNUSEFUL, ck)
        texts = _texts(rec, ck)
        raw_id = ck.get(rec, "id", (str, int), "a string or integer id") if "id" in rec else None
        task = ck.get(rec, "task_l1", str, "a string such as 'math'") if "task_l1" in rec else None
        answer = ck.get(rec, "answer", str, "a string or null", nullable=True) if "answer" in rec else None
        if texts == []:
            ck.issue("sections" if "sections" in rec else CONTENT[0], "at least one section", "none", "empty")
        if isinstance(texts, list) and texts:
            for key, numbers in ((ERROR, errors), (UNUSEFUL, unuseful)):
                for i, n in enumerate(numbers if isinstance(numbers, list) else []):
                    if not 1 <= n <= len(texts):
                        ck.issue(f"{key}[{i}]", f"a section number 1..{len(texts)}", str(n), "range")
        if ck.issues:
            return None
        tid = f"{stem}-{index}" if raw_id is None else str(raw_id)
        trace = Trace(
            id=tid,
            problem=Problem(id=tid, text=question, answer=answer, source=task),
            steps=[Step(text=t) for t in texts],
            answer_correct=_correct(rec.get("final_correct")),
        )
        err, use = set(errors), set(unuseful)
        trace.add_labels([
            Label(rating=-1, provenance=PROVENANCE, metadata={"error": n in err, "unuseful": n in use})
            if n in err | use else Label(rating=1, provenance=PROVENANCE)
            for n in range(1, len(texts) + 1)
        ])  # fmt: skip
        trace.metadata[NAME] = {
            "extra": {k: v for k, v in rec.items() if k not in MAPPED},  # sections kept verbatim
            "key_order": list(rec),
            "id": raw_id,
            "lists": {ERROR: errors, UNUSEFUL: unuseful},
            "texts": digest(*texts, len(texts)),
        }
        return trace

    return parse


def _correct(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    return bool(value) if isinstance(value, int) and value in (0, 1) else None


def read(path: str | Path, skip_invalid: bool = False) -> ReadResult:
    """Read a DeltaBench JSONL file (``Deltabench_v1.jsonl``)."""
    traces, report = read_records(path, NAME, _parser(Path(path).stem), skip_invalid)
    raw = Path(path).read_bytes()
    layout = {"ascii": raw.isascii(), "final_newline": raw.endswith(b"\n")}
    for trace in traces:
        trace.metadata[NAME]["file"] = layout
    return ReadResult(traces, format=NAME, path=str(path), skipped=report)


def _lists(trace: Trace, source: str | None, kept: dict) -> dict[str, list[int]]:
    """The two section lists from the labels; the recorded ones (order, repeats) while they agree."""
    wrong = {n: s.label(source) for n, s in enumerate(trace.steps, 1) if source and s.label(source)}
    wrong = {n: lab for n, lab in wrong.items() if lab.verdict() == -1}
    errors = [n for n, lab in wrong.items() if lab.metadata.get("error") or not lab.metadata.get("unuseful")]
    unuseful = [n for n, lab in wrong.items() if lab.metadata.get("unuseful")]
    out = {ERROR: errors, UNUSEFUL: unuseful}
    for key, numbers in out.items():
        if key in kept and sorted(set(kept[key])) == numbers:
            out[key] = kept[key]
    return out


def to_record(trace: Trace, source: str | None) -> dict:
    meta = trace.metadata.get(NAME, {})
    extra = dict(meta.get("extra", {}))
    texts = [s.text for s in trace.steps]
    if meta.get("texts") != digest(*texts, len(texts)):  # steps changed: rebuild the section fields
        if isinstance(extra.get("sections"), list):
            old = extra["sections"]
            extra["sections"] = [
                {**(old[i] if i < len(old) else {}), "content": t} for i, t in enumerate(texts)
            ]
        for key in CONTENT:
            if key in extra:
                extra[key] = join_sections(texts)
        if "sections" not in extra and not any(k in extra for k in CONTENT):
            extra["sections_content"] = join_sections(texts)
    raw_id = meta.get("id")
    rec = {
        "id": raw_id if raw_id is not None and str(raw_id) == trace.id else trace.id,
        "question": trace.problem.text,
        **({"answer": trace.problem.answer} if "answer" in meta.get("key_order", ["answer"]) else {}),
        **({"task_l1": trace.problem.source} if trace.problem.source is not None else {}),
        **_lists(trace, source, meta.get("lists", {})),
        **extra,
    }
    if meta.get("key_order") and "id" not in meta["key_order"] and raw_id is None:
        del rec["id"]
    return ordered(rec, meta.get("key_order"))


def write(path: str | Path, traces: list[Trace], **options: Any) -> WriteReport:
    """Write DeltaBench JSONL. Option ``source``: the label source (default ``human:deltabench`` when
    present, else the first on each trace); a trace with no labels is dropped, counted."""
    opts = take_options(NAME, options, {"source": None})
    report = WriteReport(format=NAME, path=str(path), traces=len(traces), lost=list(LOST), options=opts)
    note_agent_steps(traces, report)
    layout = next((t.metadata[NAME]["file"] for t in traces if "file" in t.metadata.get(NAME, {})), {})
    lines = []
    for trace in traces:
        source = opts["source"] or (SOURCE if SOURCE in trace.sources() else pick_source(trace, None))
        if source is None:
            report.dropped["no_labels"] += 1
            continue
        lines.append(json.dumps(to_record(trace, source), ensure_ascii=layout.get("ascii", False)))
    with atomic_write(path) as fh:
        fh.write("\n".join(lines) + ("\n" if lines and layout.get("final_newline", True) else ""))
    report.written = len(lines)
    return report


FORMAT = Format(NAME, read, write, "question, sections, erroneous and unuseful sections, domain (+ all fields)",
                options={"source": None})  # fmt: skip

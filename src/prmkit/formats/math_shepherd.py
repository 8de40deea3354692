"""Math-Shepherd (HF ``peiyi9979/Math-Shepherd``): ``{input, label, task}`` rows, JSONL or Parquet.

``input`` is the question, one space, then steps ``"Step k: <text> ки"`` joined by ``"\\n"``; ``label`` is
``input`` with each ``ки`` replaced by ``+`` or ``-``. Labels are read **at the ки offsets of input**
(``+``/``-`` also occur in the maths), shifted by one per preceding tag, and the rest of ``label`` must
equal ``input`` there. They are hard Monte Carlo estimates (``+``: some rollout from the step reached the
gold answer), so they become Labels with rating +1/-1 and provenance method ``mc_hard``, actor
``math-shepherd``, never human.

Core mapping: Problem.text = the question (before ``"Step 1:"``), Problem.source = ``task``; Step.text =
the step without its ``"Step k: "`` prefix and trailing space; Trace.final_answer = the text after
``"The answer is:"`` when present. A prefix, separator or suffix that differs from the standard layout is
kept in ``Step.metadata["math_shepherd"]`` / ``Trace.metadata["math_shepherd"]``, so writing gives the row
back byte for byte (``json.dumps`` defaults, as the real sample file was written).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from prmkit.core.errors import short
from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.formats.base import (
    FORMAT_VERSION,
    Format,
    ReadResult,
    RecordChecker,
    WriteReport,
    check_choice,
    digest,
    dump_rows,
    note_agent_steps,
    read_records,
    take_options,
    unique_ids,
)
from prmkit.formats.binary import NEUTRAL, binary_path, pick_source, resolve_neutral

NAME = "math_shepherd"
TAG = "ки"
PROVENANCE = Provenance(
    method="mc_hard",
    actor="math-shepherd",
    params={
        "source": "peiyi9979/Math-Shepherd",
        "estimator": "hard: + if any rollout reached the gold answer",
    },
    version=FORMAT_VERSION,
)
_SEGMENT = re.compile(r"(\s*(?:[Ss]tep \d+:[ \t]*)?)(.*?)(\s*)", re.DOTALL)
_FIRST_STEP = ("Step 1:", "step 1:")
ANSWER_MARK = "The answer is:"
LOST = [
    "soft scores (only + / -) and neutral ratings (mapped by option neutral)",
    "labels of other sources than the exported one; provenance (read back as mc_hard math-shepherd)",
    "unlabelled steps at the end of a trace (cut, counted in notes)",
    "Trace.answer_correct, generator, problem answer and id, step kinds, all metadata",
]


def _std_prefix(k: int) -> str:
    return ("\n" if k > 1 else "") + f"Step {k}: "


def _split_question(head: str) -> tuple[str, str, str] | None:
    """``(question, joiner, first segment)`` of the text before the first tag."""
    for mark in _FIRST_STEP:
        i = head.find(mark)
        if i >= 0:
            question = head[:i].rstrip()
            return question, head[len(question) : i], head[i:]
    return None


def _label_chars(ck: RecordChecker, text: str, label: str) -> list[str] | None:
    """The label character at each tag of ``text``; issues when ``label`` is not ``text`` with tags replaced."""
    pieces = text.split(TAG)
    n = len(pieces) - 1
    found = len(text) - len(label)
    if found != n:
        ck.issue(
            "label",
            f"{n} step labels ('+' or '-' at each {TAG} of input)",
            f"{found} (label has {len(label)} characters, input {len(text)})",
            "count",
        )
        return None
    chars, pos = [], 0
    for k, piece in enumerate(pieces):
        if label[pos : pos + len(piece)] != piece:
            at = next(i for i, (a, b) in enumerate(zip(piece, label[pos:], strict=False)) if a != b)
            ck.issue(
                "label",
                f"input with each {TAG} replaced by + or -",
                f"a difference at character {pos + at}",
                "mismatch",
            )
            return None
        pos += len(piece)
        if k < n:
            if label[pos] not in "+-":
                ck.issue(f"label[{pos}]", f"'+' or '-' (label of step {k + 1})", short(label[pos]), "range")
            chars.append(label[pos])
            pos += 1
    return None if ck.issues else chars


def _parse(rec: dict, ck: RecordChecker) -> Trace | None:
    text = ck.get(rec, "input", str, f"a string of steps each ending in ' {TAG}'")
    label = ck.get(rec, "label", str, f"the input with each {TAG} replaced by + or -")
    task = (
        ck.get(rec, "task", str, "a string such as 'GSM8K' or 'MATH'", nullable=True)
        if "task" in rec
        else None
    )
    if ck.issues:
        return None
    chars = _label_chars(ck, text, label)
    pieces = text.split(TAG)
    if chars is not None and len(pieces) < 2:
        ck.issue("input", f"at least one step ending in ' {TAG}'", short(text), "count")
    split = _split_question(pieces[0])
    if split is None and not ck.issues:
        ck.issue("input", "'Step 1:' after the question", short(pieces[0]), "format")
    if ck.issues or chars is None or split is None:
        return None
    question, joiner, first = split
    segments = [first, *pieces[1:-1]]
    steps = [_step(seg, k, c) for k, (seg, c) in enumerate(zip(segments, chars, strict=True), start=1)]
    meta: dict[str, Any] = {}
    if joiner != " ":
        meta["joiner"] = joiner
    if pieces[-1]:
        meta["tail"] = pieces[-1]
    extra = {k: v for k, v in rec.items() if k not in ("input", "label", "task")}
    if extra:
        meta["extra"] = extra
    if "task" not in rec:
        meta["no_task"] = True
    last = steps[-1].text
    final = last.rsplit(ANSWER_MARK, 1)[1].strip() if ANSWER_MARK in last else None
    problem = Problem(id=f"{NAME}-{digest(question)}", text=question, source=task)
    return Trace(
        id=f"{NAME}-{digest(text)}",
        problem=problem,
        steps=steps,
        final_answer=final,
        metadata={NAME: meta} if meta else {},
    )


def _step(segment: str, k: int, char: str) -> Step:
    m = _SEGMENT.fullmatch(segment)
    assert m is not None  # the pattern matches any string
    prefix, body, suffix = m.groups()
    meta = {}
    if prefix != _std_prefix(k):
        meta["prefix"] = prefix
    if suffix != " ":
        meta["suffix"] = suffix
    label = Label(rating=1 if char == "+" else -1, provenance=PROVENANCE)
    return Step(text=body, labels=[label], metadata={NAME: meta} if meta else {})


def read(path: str | Path, skip_invalid: bool = False) -> ReadResult:
    """Read Math-Shepherd rows (JSONL or Parquet) as traces with mc_hard labels."""
    traces, report = read_records(path, NAME, _parse, skip_invalid)
    return ReadResult(unique_ids(traces), format=NAME, path=str(path), skipped=report)


def segments(trace: Trace, steps: list[Step] | None = None) -> list[str]:
    """Each step as it stands in ``input``: prefix, text, suffix (TRL keeps these, stripped)."""
    out = []
    for k, step in enumerate(trace.steps if steps is None else steps, start=1):
        meta = step.metadata.get(NAME, {})
        out.append(meta.get("prefix", _std_prefix(k)) + step.text + meta.get("suffix", " "))
    return out


def to_record(trace: Trace, steps: list[Step], labels: list[bool]) -> dict:
    """The row for ``steps`` of ``trace`` with ``labels`` (+ for True)."""
    meta = trace.metadata.get(NAME, {})
    head = trace.problem.text + meta.get("joiner", " ")
    segs = segments(trace, steps)
    tail = meta.get("tail", "")
    row: dict[str, Any] = {
        "input": head + "".join(s + TAG for s in segs) + tail,
        "label": head + "".join(s + ("+" if v else "-") for s, v in zip(segs, labels, strict=True)) + tail,
    }
    if not meta.get("no_task"):
        row["task"] = trace.problem.source
    row.update(meta.get("extra", {}))
    return row


def write(path: str | Path, traces: list[Trace], **options: Any) -> WriteReport:
    """Write traces as Math-Shepherd rows (JSONL with ``json.dumps`` defaults, or Parquet).

    Options: ``source`` (label source, default the first on each trace), ``neutral`` (0 -> ``negative``
    or ``positive``; default positive, as openr's PRM800K converter), ``threshold`` for soft scores.
    ``ensure_ascii`` (default True) writes ``ки`` as ``\\u043a\\u0438``, as the real sample file does;
    False writes the letters. A trace whose text contains the tag ``ки`` cannot be written (it would
    split a step).
    """
    opts = take_options(
        NAME, options, {"source": None, "neutral": None, "threshold": 0.5, "ensure_ascii": True}
    )
    opts["neutral"] = resolve_neutral(opts["neutral"], "first_error")
    check_choice("neutral", opts["neutral"], NEUTRAL)
    report = WriteReport(format=NAME, path=str(path), traces=len(traces), lost=list(LOST), options=opts)
    note_agent_steps(traces, report)
    rows = []
    for trace in traces:
        if TAG in trace.problem.text or any(TAG in s.text for s in trace.steps):
            report.dropped[f"text_contains_step_tag_{TAG}"] += 1
            continue
        path_ = binary_path(
            trace, pick_source(trace, opts["source"]), opts["neutral"], "expand", opts["threshold"]
        )
        if path_.drop:
            report.dropped[path_.drop] += 1
            continue
        if path_.note:
            report.notes[path_.note] += 1
        rows.append(to_record(trace, path_.steps, path_.labels))
    report.written = dump_rows(path, rows, ensure_ascii=opts["ensure_ascii"])
    return report


FORMAT = Format(
    NAME,
    read,
    write,
    "question, steps, one + / - per step, task",
    options={"source": None, "neutral": NEUTRAL, "threshold": None, "ensure_ascii": None},
)

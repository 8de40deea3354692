"""PRMBench (``ssmisya/PRMBench``) and Socratic-PRMBench (``Xiang-Li-oss/Socratic-PRMBench``): one JSONL
record per modified solution, the same schema in both.

A record is ``{original_question, modified_question, original_process, modified_process, modified_steps,
error_steps, reason, idx, question, classification}`` (PRMBench's ``multi_solutions`` records add
``ground_truth`` and ``original_response``; Socratic-PRMBench puts ``question`` before ``idx``). The
lists may be stored as strings holding a list (``"[3, 4]"``); both are read, and a string is written
back as it was. Files are JSON Lines written with ``ensure_ascii=False``, so a real file comes back byte
for byte.

Core mapping: Trace.id = ``<classification>_<idx>`` (the key of PRMBench's evaluation, ``task.py``);
``modified_question`` -> Problem.text, ``modified_process`` -> Steps, ``ground_truth`` -> Problem.answer,
Problem.source = the idx without its number (``prm_train_p1``, ``OlympiadBench``). Labels: a step named in
``error_steps`` (1-based) is -1, every other step +1; provenance ``imported`` (the errors were injected by
an LLM that named the steps it broke, then checked by people on samples; the file does not say which
label a person saw), actor ``prmbench`` / ``socratic_prmbench``. Every field but the question, the
process and the ground truth is kept in ``Trace.metadata[NAME]["fields"]`` (the unmodified original
solution included, from which PRMBench's evaluation builds its "correct" copies).

Errors, all located: bad JSON, a missing or mistyped field, an empty ``modified_process``, an error
step that is not a 1-based integer. An error step *past* the last step is accepted and kept: the real
files hold such records (100 in PRMBench, 80 in Socratic-PRMBench), and the official evaluation counts
only the steps that exist.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
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
    note_agent_steps,
    ordered,
    read_records,
    take_options,
    unique_ids,
)
from prmkit.formats.binary import NEUTRAL, pick_source, step_verdict

LISTS = ("original_process", "modified_process", "modified_steps", "error_steps")
"""The list fields, which a file may store as strings holding the list."""
HELD = ("modified_question", "modified_process", "ground_truth")
"""Fields the core model holds (question, steps, answer); every other field goes into metadata."""


@dataclass(frozen=True)
class Benchmark:
    """One of the two benchmarks sharing the schema: its format name, key order and label provenance."""

    name: str
    repo: str
    keys: tuple[str, ...]

    @property
    def source(self) -> str:
        return f"imported:{self.name}"

    @property
    def provenance(self) -> Provenance:
        return Provenance(
            method="imported",
            actor=self.name,
            params={
                "source": self.repo,
                "annotation": "error_steps of an LLM-modified solution, every other step +1",
            },
            version=FORMAT_VERSION,
        )


_BASE = ("original_question", "modified_question", "original_process", "modified_process")
_ERRORS = ("modified_steps", "error_steps", "reason")
PRMBENCH = Benchmark("prmbench", "ssmisya/PRMBench", (*_BASE, *_ERRORS, "idx", "question", "classification"))
SOCRATIC = Benchmark(
    "socratic_prmbench",
    "Xiang-Li-oss/Socratic-PRMBench",
    (*_BASE, *_ERRORS, "question", "idx", "classification"),
)
SOCRATIC_CLASSES = frozenset(
    f"{pattern}_{kind}"
    for pattern, kinds in {
        "transformation": (),
        "premise": ("redundancy", "incompleteness", "unsoundness"),
        "decomposition": ("redundancy", "incompleteness", "unsoundness"),
        "regather": ("redundancy", "incompleteness", "imprecision"),
        "integration": ("redundancy", "incompleteness", "inconsistency", "unsoundness"),
        "conclusion": ("counterfactual", "inconsistency", "invalidity"),
        "repeat": ("counterfactual", "inconsistency"),
        "detection": ("error",),
        "correction": ("error",),
    }.items()
    for kind in kinds
)
"""Socratic-PRMBench's 20 error types (``data/test_<type>.jsonl``); PRMBench's classes are others."""
LOST = [
    "labels of other sources than the exported one, their provenance and soft scores",
    "Trace.final_answer, answer_correct, generator, step kinds and metadata of other formats",
]


def flavour(record: dict) -> str:
    """Which of the two benchmarks a record is from (for detection): Socratic-PRMBench's classes and its
    ``source#number`` ids, else PRMBench."""
    socratic = record.get("classification") in SOCRATIC_CLASSES or "#" in str(record.get("idx", ""))
    return SOCRATIC.name if socratic else PRMBENCH.name


def origin(idx: str, classification: str) -> str:
    """The data set an item was built from: its idx without the class prefix and the item number."""
    if "#" in idx:
        return idx.split("#", 1)[0]
    bare = idx.removeprefix(f"{classification}_")
    return re.sub(r"_\d+$", "", bare)


def _as_list(ck: RecordChecker, rec: dict, key: str, raw: dict[str, str]) -> Any:
    """``rec[key]`` as a list: a list, or a string holding one (remembered in ``raw``); else BAD."""
    value = rec[key]
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            try:
                parsed = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                parsed = None
        if isinstance(parsed, list):
            raw[key] = value
            return parsed
    if isinstance(value, list):
        return value
    ck.issue(key, "a list (or a string holding one)", short(value), "type")
    return RecordChecker.BAD


def _typed_list(ck: RecordChecker, rec: dict, key: str, kind: type, raw: dict[str, str]) -> Any:
    value = _as_list(ck, rec, key, raw)
    if value is RecordChecker.BAD:
        return value
    what = "a string" if kind is str else "an integer (a 1-based step number)"
    bad = [i for i, v in enumerate(value) if not isinstance(v, kind) or isinstance(v, bool)]
    for i in bad:
        ck.issue(f"{key}[{i}]", what, short(value[i]), "type")
    return RecordChecker.BAD if bad else value


def _fields(ck: RecordChecker, rec: dict) -> tuple[dict[str, Any], dict[str, str]]:
    raw: dict[str, str] = {}
    out: dict[str, Any] = {}
    for key in ("modified_question", "idx", "classification"):
        out[key] = ck.get(rec, key, str, "a string")
    for key in ("original_question", "reason", "question"):
        if key in rec:
            out[key] = ck.get(rec, key, str, "a string")
    for key, kind, required in (
        ("modified_process", str, True),
        ("error_steps", int, True),
        ("original_process", str, False),
        ("modified_steps", int, False),
    ):
        if key not in rec:
            if required:
                ck.issue(key, "a list", "nothing", "missing")
                out[key] = RecordChecker.BAD
            continue
        out[key] = _typed_list(ck, rec, key, kind, raw)
    steps, errors = out["modified_process"], out["error_steps"]
    if isinstance(steps, list) and not steps:
        ck.issue("modified_process", "at least one step", "an empty list", "empty")
    if isinstance(errors, list):
        for i, e in enumerate(errors):
            if e < 1:
                ck.issue(f"error_steps[{i}]", "a 1-based step number (1 or more)", str(e), "range")
    return out, raw


def _parse(rec: dict, ck: RecordChecker, bench: Benchmark) -> Trace | None:
    f, raw = _fields(ck, rec)
    if ck.issues:
        return None
    errors = set(f["error_steps"])
    labels = [
        Label(rating=-1 if i + 1 in errors else 1, provenance=bench.provenance)
        for i in range(len(f["modified_process"]))
    ]
    key = f"{f['classification']}_{f['idx']}"
    answer = rec.get("ground_truth") if isinstance(rec.get("ground_truth"), str) else None
    problem = Problem(
        id=key, text=f["modified_question"], answer=answer, source=origin(f["idx"], f["classification"])
    )
    trace = Trace(id=key, problem=problem, steps=[Step(text=s) for s in f["modified_process"]])
    trace.add_labels(labels)
    meta: dict[str, Any] = {
        "fields": {k: v for k, v in rec.items() if k not in HELD or (k == "ground_truth" and answer is None)}
    }
    for k in LISTS:  # the parsed lists, not the strings they came as
        if k in meta["fields"]:
            meta["fields"][k] = f[k]
    if raw:
        meta["raw"] = raw
    built = to_record(trace.model_copy(update={"metadata": {bench.name: meta}}), bench, bench.source)
    if list(built) != list(rec):
        meta["key_order"] = list(rec)
    trace.metadata[bench.name] = meta
    return trace


def read_benchmark(path: str | Path, bench: Benchmark, skip_invalid: bool = False) -> ReadResult:
    traces, report = read_records(path, bench.name, lambda rec, ck: _parse(rec, ck, bench), skip_invalid)
    return ReadResult(unique_ids(traces), format=bench.name, path=str(path), skipped=report)


def _error_steps(trace: Trace, kept: list[int] | None, source: str | None, neutral: str) -> list[int]:
    """The 1-based error steps of ``trace``: the kept list when the labels still say the same (its order
    and any number past the last step stay), else rebuilt from the labels."""
    verdicts = [step_verdict(s, source, neutral) for s in trace.steps]
    wrong = [i + 1 for i, v in enumerate(verdicts) if v is False]
    if kept is not None and sorted({e for e in kept if e <= len(trace.steps)}) == wrong:
        return kept
    return wrong


def to_record(trace: Trace, bench: Benchmark, source: str | None, neutral: str = "positive") -> dict:
    """The benchmark record of ``trace`` (fields it was read without stay absent)."""
    meta = trace.metadata.get(bench.name, {})
    fields = dict(meta.get("fields", {}))
    raw = meta.get("raw", {})
    kept = fields.pop("error_steps", None)
    rec: dict[str, Any] = {k: fields.pop(k) for k in bench.keys if k in fields}
    rec["modified_question"] = trace.problem.text
    rec["modified_process"] = [s.text for s in trace.steps]
    rec["error_steps"] = _error_steps(trace, kept, source, neutral)
    rec.setdefault("idx", trace.id)
    rec.setdefault("classification", "unknown")
    if trace.problem.answer is not None:
        rec["ground_truth"] = trace.problem.answer
    rec.update(fields)
    for key, text in raw.items():  # a list stored as a string goes back as the same string
        if key in rec and _reparse(text) == rec[key]:
            rec[key] = text
    order = [k for k in bench.keys if k in rec]
    return ordered(ordered(rec, order), meta.get("key_order"))


def _reparse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return ast.literal_eval(text)


def write_benchmark(path: str | Path, traces: list[Trace], bench: Benchmark, **options: Any) -> WriteReport:
    opts = take_options(bench.name, options, {"source": None, "neutral": "positive"})
    report = WriteReport(format=bench.name, path=str(path), traces=len(traces), lost=list(LOST), options=opts)
    note_agent_steps(traces, report)
    lines = []
    for trace in traces:
        source = opts["source"] or (
            bench.source if bench.source in trace.sources() else pick_source(trace, None)
        )
        if bench.name not in trace.metadata:
            report.notes["no_benchmark_fields"] += 1  # idx = trace id, classification "unknown"
        if any(step_verdict(s, source, opts["neutral"]) is None for s in trace.steps):
            report.notes["unlabelled_steps_written_correct"] += 1
        lines.append(json.dumps(to_record(trace, bench, source, opts["neutral"]), ensure_ascii=False) + "\n")
    with atomic_write(path) as fh:
        fh.writelines(lines)
    report.written = len(lines)
    return report


def read(path: str | Path, skip_invalid: bool = False) -> ReadResult:
    """Read a PRMBench JSONL file (``mr_eval/tasks/prmtest_classified/data/*.jsonl``)."""
    return read_benchmark(path, PRMBENCH, skip_invalid)


def write(path: str | Path, traces: list[Trace], **options: Any) -> WriteReport:
    """Write traces as PRMBench JSONL. Options: ``source`` (default ``imported:prmbench`` when present,
    else the first on each trace), ``neutral`` (``positive``: only -1 is an error step)."""
    return write_benchmark(path, traces, PRMBENCH, **options)


def read_socratic(path: str | Path, skip_invalid: bool = False) -> ReadResult:
    """Read a Socratic-PRMBench JSONL file (``data/test_<type>.jsonl``)."""
    return read_benchmark(path, SOCRATIC, skip_invalid)


def write_socratic(path: str | Path, traces: list[Trace], **options: Any) -> WriteReport:
    """Write traces as Socratic-PRMBench JSONL (options as :func:`write`)."""
    return write_benchmark(path, traces, SOCRATIC, **options)


HOLDS = "question, steps, error steps (1-based), classification, idx, the original solution and reason"
FORMAT = Format(PRMBENCH.name, read, write, HOLDS, options={"source": None, "neutral": NEUTRAL})
SOCRATIC_FORMAT = Format(
    SOCRATIC.name, read_socratic, write_socratic, HOLDS, options={"source": None, "neutral": NEUTRAL}
)

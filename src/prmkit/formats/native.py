"""prmkit's own files as a format: the core JSONL (traces or problems) and Parquet of prmkit.core.dataset.

Lossless for everything the core model holds: this is the format to keep data in between steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prmkit.core.dataset import read_native_problems, read_native_traces, write_jsonl, write_traces
from prmkit.core.errors import InputError, SkipReport
from prmkit.core.model import Problem, Trace
from prmkit.formats.base import (
    Format,
    ReadResult,
    WriteReport,
    graded,
    is_json_array,
    layout_issue,
    take_options,
)

NAME = "prmkit"


def read(path: str | Path, skip_invalid: bool = False) -> ReadResult:
    """Read a prmkit trace file (JSONL or Parquet), or a prmkit problem file (JSONL)."""
    path = Path(path)
    report = SkipReport()
    if path.suffix != ".parquet":
        if is_json_array(path):
            raise InputError([layout_issue(path, NAME, want_array=False)])
        from prmkit.core.files import iter_json_records

        first = next((rec for _, rec in iter_json_records(path) if isinstance(rec, dict)), None)
        if first is not None and "problem" not in first:  # a trace record always has its problem
            problems = read_native_problems(path, skip_invalid, report)
            return ReadResult([], format=NAME, path=str(path), problems=problems, skipped=report)
    traces = read_native_traces(path, skip_invalid, report)
    return ReadResult(traces, format=NAME, path=str(path), skipped=report)


def write(path: str | Path, items: list[Trace] | list[Problem], **options: Any) -> WriteReport:
    """Write traces (JSONL, or Parquet by suffix) or problems (JSONL); nothing is lost. Option ``grade``:
    fill a missing ``answer_correct`` by checking each final answer against its problem's (what an ORM
    learns from, e.g. for traces sampled without it)."""
    opts = take_options(NAME, options, {"grade": False})
    report = WriteReport(format=NAME, path=str(path), traces=len(items), options=opts)
    if items and isinstance(items[0], Problem):
        report.written = write_jsonl(path, items)
    else:
        traces = items
        if opts["grade"]:
            traces = [graded(t, report) for t in items]  # type: ignore[arg-type]
            if unknown := sum(t.answer_correct is None for t in traces):
                report.notes["answer_not_gradable"] += unknown
        report.written = write_traces(path, traces)  # type: ignore[arg-type]
    return report


FORMAT = Format(
    NAME, read, write, "everything in the core model (lossless)", problems=True, options={"grade": None}
)

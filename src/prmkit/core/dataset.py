"""prmkit's own files: JSONL (one Trace or Problem per line) and Parquet, plus Hugging Face datasets.

JSONL is the lossless, human-readable form. Parquet and :func:`to_hf_dataset` go through Hugging Face
``datasets``; free-form dicts (metadata, provenance params) are stored as JSON strings there because
Arrow needs one schema for every row, and that is what keeps the round trip lossless.
"""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from prmkit.core.errors import InputError, Issue, SkipReport, issues_from_validation, short
from prmkit.core.files import atomic_write, iter_json_records, read_parquet_rows
from prmkit.core.model import Problem, Trace

M = TypeVar("M", bound=BaseModel)


@contextlib.contextmanager
def paused_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused while a file's records become models (or while a pass over many
    of them builds its tallies), restored after (left off if it was off). Reading allocates millions of
    objects, each batch of them starting a collection that walks every young object, and every so often
    all those alive: about two thirds of the time of reading a labelled file, and three quarters of
    label_report's maths over traces read before (issue 65). Records and tallies hold no cycles (JSON
    values and models of them), so reference counting frees all they leave behind; nothing else changes."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _parse_records(
    path: Path,
    kind: type[M],
    skip_invalid: bool,
    report: SkipReport | None,
    records: Iterable[tuple[int, Any]] | None = None,
) -> list[M]:
    """Validate each record strictly (no ``"0.5"`` for a number, no ``"yes"`` for a boolean), collecting a
    located issue per problem; ``records`` defaults to the file's JSON records."""
    with paused_cycle_collection():
        out, issues = _validate_records(path, kind, skip_invalid, report, records)
    if issues:
        raise InputError(issues)
    return out


def _validate_records(
    path: Path,
    kind: type[M],
    skip_invalid: bool,
    report: SkipReport | None,
    records: Iterable[tuple[int, Any]] | None,
) -> tuple[list[M], list[Issue]]:
    out: list[M] = []
    issues: list[Issue] = []
    for lineno, rec in iter_json_records(path) if records is None else records:
        found: list[Issue]
        if isinstance(rec, Issue):
            found = [rec]
        elif not isinstance(rec, dict):
            found = [
                Issue(str(path), lineno, "(record)", f"a JSON object ({kind.__name__})", short(rec), "type")
            ]
        else:
            try:
                out.append(kind.model_validate(rec, strict=True))
                continue
            except ValidationError as err:
                found = issues_from_validation(err, str(path), lineno)
        if not skip_invalid:
            issues.extend(found)
        elif report is not None:
            report.add(found[0])
    return out, issues


def read_native_traces(
    path: str | Path, skip_invalid: bool = False, report: SkipReport | None = None
) -> list[Trace]:
    """Read prmkit's own trace file (``.jsonl`` or ``.parquet``), no detection (the ``prmkit`` format)."""
    path = Path(path)
    if path.suffix == ".parquet":
        return read_parquet(path, skip_invalid, report)
    return _parse_records(path, Trace, skip_invalid, report)


def read_native_problems(
    path: str | Path, skip_invalid: bool = False, report: SkipReport | None = None
) -> list[Problem]:
    """Read prmkit's own problem file (JSONL); a trace file yields its distinct problems. No detection."""
    path = Path(path)
    first = next((rec for _, rec in iter_json_records(path) if isinstance(rec, dict)), None)
    if first is not None and "problem" in first:  # a trace record (an empty trace omits "steps")
        seen: dict[str, Problem] = {}
        for trace in read_native_traces(path, skip_invalid, report):
            seen.setdefault(trace.problem.id, trace.problem)
        return list(seen.values())
    return _parse_records(path, Problem, skip_invalid, report)


def write_jsonl(path: str | Path, records: Iterable[BaseModel]) -> int:
    """Write records atomically, one compact JSON object per line; returns how many were written."""
    n = 0
    with atomic_write(path) as fh:
        for rec in records:
            fh.write(rec.model_dump_json(exclude_defaults=True) + "\n")
            n += 1
    return n


def write_traces(path: str | Path, traces: Iterable[Trace]) -> int:
    """Write traces as JSONL, or Parquet when ``path`` ends in ``.parquet``."""
    path = Path(path)
    if path.suffix == ".parquet":
        return write_parquet(path, list(traces))
    return write_jsonl(path, traces)


# --- Hugging Face datasets -------------------------------------------------------------------------

_JSON_FIELDS = ("metadata", "params", "tools")


def _encode(obj: Any) -> Any:
    """Replace free-form dict fields by JSON strings, recursively, so Arrow sees one schema."""
    if isinstance(obj, dict):
        return {
            k: json.dumps(v, ensure_ascii=False) if k in _JSON_FIELDS else _encode(v) for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [_encode(v) for v in obj]
    return obj


def _decode(obj: Any) -> Any:
    """Inverse of :func:`_encode`; a free-form field that is not JSON text raises ValueError."""
    if isinstance(obj, dict):
        return {
            k: json.loads(v) if k in _JSON_FIELDS and isinstance(v, str) else _decode(v)
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [_decode(v) for v in obj]
    return obj


def _features():  # imported lazily: `datasets` is slow to import
    from datasets import Features, Value

    provenance = {
        "method": Value("string"),
        "actor": Value("string"),
        "params": Value("string"),
        "version": Value("string"),
        "created_at": Value("string"),
    }
    label = {
        "rating": Value("int8"),
        "score": Value("float64"),
        "provenance": provenance,
        "metadata": Value("string"),
    }
    call = {
        "name": Value("string"),
        "arguments": Value("string"),
        "id": Value("string"),
        "metadata": Value("string"),
    }
    observation = {
        "content": Value("string"),
        "role": Value("string"),
        "call_id": Value("string"),
        "name": Value("string"),
        "metadata": Value("string"),
    }
    step = {
        "text": Value("string"),
        "kind": Value("string"),
        "labels": [label],
        "tool_calls": [call],
        "observations": [observation],
        "metadata": Value("string"),
    }
    problem = {
        "id": Value("string"),
        "text": Value("string"),
        "answer": Value("string"),
        "source": Value("string"),
        "tools": Value("string"),
        "metadata": Value("string"),
    }
    return Features(
        {
            "id": Value("string"),
            "problem": problem,
            "steps": [step],
            "final_answer": Value("string"),
            "answer_correct": Value("bool"),
            "generator": Value("string"),
            "metadata": Value("string"),
        }
    )


def to_hf_dataset(traces: Sequence[Trace]):
    """A ``datasets.Dataset`` with one row per trace; :func:`from_hf_dataset` inverts it exactly."""
    from datasets import Dataset

    rows = [_encode(t.model_dump(mode="json")) for t in traces]
    return Dataset.from_list(rows, features=_features())


def from_hf_dataset(dataset) -> list[Trace]:
    """Traces back from a dataset made by :func:`to_hf_dataset` (or read from its Parquet file)."""
    return [Trace.model_validate(_decode(row), strict=True) for row in dataset]


def write_parquet(path: str | Path, traces: Sequence[Trace]) -> int:
    """Write traces to Parquet atomically through ``datasets``."""
    ds = to_hf_dataset(traces)
    with atomic_write(path, mode="wb") as fh:
        ds.to_parquet(fh)
    return len(traces)


def _decoded_rows(path: Path) -> Iterator[tuple[int, Any]]:
    for row_number, row in enumerate(read_parquet_rows(path), start=1):
        try:
            yield row_number, _decode(row)
        except (ValueError, RecursionError) as err:
            expected = "JSON text in metadata, params and tools columns"
            yield row_number, Issue(str(path), row_number, "(record)", expected, short(str(err), 60), "json")


def read_parquet(
    path: str | Path, skip_invalid: bool = False, report: SkipReport | None = None
) -> list[Trace]:
    """Traces from a Parquet file written by :func:`write_parquet`, checked row by row like JSONL
    (``file:row: field: expected, found``): a file with another schema is an error with its place."""
    path = Path(path)
    return _parse_records(path, Trace, skip_invalid, report, _decoded_rows(path))

"""Which format a file is in, from its content: the keys of its first record (or its Parquet columns).

Used when ``--from`` is omitted; the caller says which format was detected. Rules, first match wins:

| keys of the first record                                   | format        |
|------------------------------------------------------------|---------------|
| ``steps``, ``label``, ``final_answer_correct`` (JSON array) | processbench  |
| ``question`` and ``label``                                  | prm800k       |
| ``problem``, ``solution``, ``unique_id``                    | prm800k (MATH split) |
| ``input`` and ``label``                                     | math_shepherd |
| ``prompt``, ``completions``, ``labels``                     | trl           |
| ``id``, ``problem`` (a trace) or ``id``, ``text`` (a problem) | prmkit      |
| ``messages`` and ``question``                               | agentprocessbench |
| ``messages``                                                | chat          |
| ``modified_process``, ``error_steps``, ``classification``   | prmbench, or socratic_prmbench by its classes and ids |
| ``steps`` and ``mistake_index``                             | bbm           |
| ``Model_Solution_Steps`` (or a JSON object of lists of them)  | mrben         |
| ``reason_error_section_numbers``                             | deltabench    |
"""

from __future__ import annotations

from pathlib import Path

from prmkit.core.errors import InputError, Issue, short
from prmkit.core.files import check_input_file, iter_json_records
from prmkit.core.registry import resolve
from prmkit.formats.base import read_parquet_rows

RULES: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"steps", "label", "final_answer_correct"}), "processbench"),
    (frozenset({"question", "label"}), "prm800k"),
    (frozenset({"problem", "solution", "unique_id"}), "prm800k"),
    (frozenset({"input", "label"}), "math_shepherd"),
    (frozenset({"prompt", "completions", "labels"}), "trl"),
    (frozenset({"id", "problem"}), "prmkit"),
    (frozenset({"id", "text"}), "prmkit"),
    (frozenset({"messages", "question"}), "agentprocessbench"),
    (frozenset({"messages"}), "chat"),
    (frozenset({"modified_process", "error_steps", "classification"}), "prmbench"),
    (frozenset({"steps", "mistake_index"}), "bbm"),
    (frozenset({"Model_Solution_Steps"}), "mrben"),
    (frozenset({"reason_error_section_numbers"}), "deltabench"),
)

REFINE: dict[str, str] = {"prmbench": "prmkit.formats.prmbench:flavour"}
"""Formats sharing their keys with another: a function of the first record (lazy target) names which."""

DOCUMENTS: dict[str, str] = {"mrben": "prmkit.formats.mrben:is_subject_file"}
"""Formats whose file is one JSON document, not a record a line (MR-Ben's ``{uuid: [records]}``): a
function of the path (lazy target) says whether the file is one; asked before the record rules."""

KNOWN = ", ".join(dict.fromkeys([fmt for _, fmt in RULES] + ["socratic_prmbench"]))
"""The formats detection can name, for the message when none fits."""


def match(keys: set[str]) -> str | None:
    """The format whose required keys are all in ``keys``, or None."""
    return next((fmt for need, fmt in RULES if need <= keys), None)


def _first_record(path: Path) -> tuple[int, object]:
    for line, rec in iter_json_records(path):
        if isinstance(rec, Issue):
            raise InputError([rec])
        return line, rec
    raise InputError([Issue(str(path), None, "(file)", "at least one record", "an empty file", "empty")])


def detect_format(path: str | Path) -> str:
    """The name of the format of ``path``, judged from its content; an InputError when none fits."""
    path = check_input_file(path)  # a folder, device or pipe is refused before a format peeks into it
    if path.suffix == ".parquet":
        line, keys = 1, set(read_parquet_rows(path, schema_only=True))
    else:
        for fmt, is_document in DOCUMENTS.items():
            if resolve(is_document)(path):
                return fmt
        line, rec = _first_record(path)
        if not isinstance(rec, dict):
            raise InputError([Issue(str(path), line, "(record)", "a JSON object", short(rec), "type")])
        keys = set(rec)
    fmt = match(keys)
    if fmt in REFINE and path.suffix != ".parquet":
        fmt = resolve(REFINE[fmt])(rec)
    if fmt is None:
        found = f"keys {sorted(keys)}"
        raise InputError(
            [
                Issue(
                    str(path),
                    line,
                    "(record)",
                    f"a record of a known format ({KNOWN}); name it with --from",
                    found,
                    "format",
                )
            ]
        )
    return fmt

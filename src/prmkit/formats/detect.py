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
"""

from __future__ import annotations

from pathlib import Path

from prmkit.core.errors import InputError, Issue, short
from prmkit.core.files import iter_json_records
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
)


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
    path = Path(path)
    if path.suffix == ".parquet":
        line, keys = 1, set(read_parquet_rows(path, schema_only=True))
    else:
        line, rec = _first_record(path)
        if not isinstance(rec, dict):
            raise InputError([Issue(str(path), line, "(record)", "a JSON object", short(rec), "type")])
        keys = set(rec)
    fmt = match(keys)
    if fmt is None:
        known = "prm800k, math_shepherd, processbench, trl, agentprocessbench, chat, prmkit"
        found = f"keys {sorted(keys)}"
        raise InputError(
            [
                Issue(
                    str(path),
                    line,
                    "(record)",
                    f"a record of a known format ({known}); name it with --from",
                    found,
                    "format",
                )
            ]
        )
    return fmt

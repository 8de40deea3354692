"""Reading and writing files safely: located JSON errors, atomic writes, crash-safe appends.

Every reader in prmkit goes through :func:`iter_json_records` so that encoding errors, bad JSON, Git LFS
pointers and JSON-array-vs-JSONL mix-ups are reported the same way everywhere. Every writer goes through
:func:`atomic_write` so a crash never leaves a half-written output file.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from prmkit.core.errors import InputError, Issue, short

LFS_MAGIC = "version https://git-lfs.github.com/spec/v1"


def check_not_lfs_pointer(path: Path, head: bytes) -> None:
    """Fail clearly on a Git LFS pointer, which is what a clone without LFS leaves in place of data."""
    if head.startswith(LFS_MAGIC.encode()):
        raise InputError(
            [
                Issue(
                    str(path),
                    1,
                    "(file)",
                    "data",
                    "a Git LFS pointer; run `git lfs pull` to fetch the file",
                    "lfs",
                )
            ]
        )


def iter_json_records(path: str | Path) -> Iterator[tuple[int, Any | Issue]]:
    """Yield ``(line_number, record_or_issue)`` for a JSONL file or a JSON array file.

    A JSON array (ProcessBench's layout) yields its elements numbered from 1 by position; a decoding
    problem yields an :class:`Issue` in place of the record so callers can collect or skip it.
    """
    path = Path(path)
    raw = path.read_bytes()
    check_not_lfs_pointer(path, raw[:64])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        yield (
            line,
            Issue(str(path), line, "(encoding)", "UTF-8 text", f"byte {raw[err.start]:#04x}", "encoding"),
        )
        return
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            yield err.lineno, Issue(str(path), err.lineno, "(json)", "a valid JSON array", err.msg, "json")
            return
        yield from enumerate(data, start=1)
        return
    # split on "\n" only: str.splitlines() also splits on U+0085, U+2028..., which JSON leaves unescaped
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as err:
            yield (
                lineno,
                Issue(
                    str(path),
                    lineno,
                    "(json)",
                    "one JSON object per line",
                    f"{err.msg}: {short(line, 40)}",
                    "json",
                ),
            )


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """Write to a temporary file beside ``path`` and rename it into place only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(
            fd, mode, encoding=None if "b" in mode else encoding, newline="" if "b" not in mode else None
        ) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


class JsonlAppender:
    """Append-only JSONL log for long jobs: every record is flushed and fsync'd before ``append`` returns.

    On reopen, a torn last line (the process died mid-write) is cut off, so a resumed job sees exactly
    the records that were acknowledged.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._truncate_torn_tail()
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def _truncate_torn_tail(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with open(self.path, "r+b") as fh:
                fh.truncate(keep)

    def records(self) -> list[Any]:
        """Everything appended so far (read back from disk)."""
        if not self.path.exists():
            return []
        return [
            json.loads(line) for line in self.path.read_text(encoding="utf-8").split("\n") if line.strip()
        ]

    def append(self, record: Any) -> None:
        self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""Reading and writing files safely: located JSON errors, atomic writes, crash-safe appends.

Every reader in prmkit goes through :func:`iter_json_records` so that encoding errors, bad JSON (nested too
deep, numbers too long), Git LFS pointers, folders given as files and JSON-array-vs-JSONL mix-ups are
reported the same way everywhere. Every writer goes through :func:`atomic_write` so a crash never leaves a
half-written output file, an output path that cannot be written is refused before any work
(:func:`check_output_path`), and a full disk is a located error, not a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import sys
import tempfile
import time
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


def file_issue(path: Path, expected: str, err: OSError | str, fix: str = "", field: str = "(file)") -> Issue:
    """A problem with a whole file (not one of its records), e.g. a folder where a file belongs."""
    found = err if isinstance(err, str) else (err.strerror or str(err)).lower()
    return Issue(str(path), None, field, expected, found, "file", fix)


def check_input_file(path: str | Path) -> Path:
    """``path`` when it is a regular file; a folder, device or pipe is an :class:`InputError`, a missing
    file FileNotFoundError."""
    path = Path(path)
    if path.is_dir():
        raise InputError([file_issue(path, "a data file", "a directory", "name a file inside it")], False)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if not path.is_file():  # /dev/zero never ends, a FIFO waits for a writer: neither is read
        raise InputError([file_issue(path, "a regular data file", "a device, pipe or socket")], False)
    return path


def read_input_bytes(path: str | Path) -> bytes:
    """The bytes of an input file; a folder, a missing or unreadable file is a one-line located error."""
    path = check_input_file(path)
    try:
        return path.read_bytes()
    except OSError as err:
        raise InputError([file_issue(path, "a readable data file", err)], False) from None


def read_input_head(path: str | Path, size: int = 64) -> bytes:
    """The first bytes of an input file (to spot a Git LFS pointer or the layout), with located errors."""
    path = check_input_file(path)
    try:
        with open(path, "rb") as fh:
            return fh.read(size)
    except OSError as err:
        raise InputError([file_issue(path, "a readable data file", err)], False) from None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
LONE_SURROGATE = "Unicode text (a character outside the BMP escaped as a surrogate pair, or written as UTF-8)"


class LoneSurrogate(ValueError):
    """A JSON string escapes half a surrogate pair (``"\\ud800"``): valid JSON, but not text. Python reads
    it into a ``str`` that no UTF-8 encoder, hash or tokenizer accepts, so it is refused where it is read,
    naming the field, instead of failing later in whatever first encodes it."""

    def __init__(self, field: str, found: str):
        self.field, self.found = field, found
        super().__init__(f"{field}: {found}")


def lone_surrogate(doc: Any, where: str = "") -> LoneSurrogate | None:
    """The first string or key of ``doc`` holding a lone surrogate, with its JSON path; None if none."""
    stack: list[tuple[Any, str]] = [(doc, where)]
    while stack:
        value, at = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as err:
                found = f"a lone surrogate \\u{ord(value[err.start]):04x} at character {err.start}"
                return LoneSurrogate(at or "(record)", found)
        elif isinstance(value, list):
            stack.extend((item, f"{at}[{i}]") for i, item in reversed(list(enumerate(value))))
        elif isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                shown = str(key).encode("utf-8", "backslashreplace").decode("utf-8")  # printable: \\ud800
                name = f"{at}.{shown}" if at else shown
                if (bad := lone_surrogate(key, name)) is not None:
                    return LoneSurrogate(bad.field, f"a key holding {bad.found}")
                stack.append((item, name))
    return None


def _loads(text: str) -> Any:
    """``json.loads`` with every way it can fail on hostile text turned into one :class:`ValueError`.

    Python's parser raises ``RecursionError`` for deep nesting and a plain ``ValueError`` for integers
    over 4,300 digits (a guard against quadratic conversion), not only ``JSONDecodeError``. A lone
    surrogate is :class:`LoneSurrogate` (looked for only when the text escapes one, so it costs nothing
    otherwise).
    """
    try:
        doc = json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deep to read") from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # "Exceeds the limit (4300 digits) for integer string conversion..."
        raise ValueError(f"a number longer than {sys.get_int_max_str_digits()} digits") from None
    if _SURROGATE_ESCAPE.search(text) and (bad := lone_surrogate(doc)) is not None:
        raise bad
    return doc


def iter_json_records(path: str | Path) -> Iterator[tuple[int, Any | Issue]]:
    """Yield ``(line_number, record_or_issue)`` for a JSONL file or a JSON array file.

    A JSON array (ProcessBench's layout) yields its elements numbered from 1 by position; a decoding
    problem yields an :class:`Issue` in place of the record so callers can collect or skip it.
    """
    path = Path(path)
    raw = read_input_bytes(path)
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
            data = _loads(text)
        except LoneSurrogate:  # found again per element below, with its position
            data = json.loads(text)
            for i, rec in enumerate(data, start=1):
                bad = lone_surrogate(rec)
                yield (
                    i,
                    rec
                    if bad is None
                    else Issue(str(path), i, bad.field, LONE_SURROGATE, bad.found, "encoding"),
                )
            return
        except json.JSONDecodeError as err:
            yield err.lineno, Issue(str(path), err.lineno, "(json)", "a valid JSON array", err.msg, "json")
            return
        except ValueError as err:
            yield 1, Issue(str(path), 1, "(json)", "a valid JSON array", str(err), "json")
            return
        yield from enumerate(data, start=1)
        return
    # split on "\n" only: str.splitlines() also splits on U+0085, U+2028..., which JSON leaves unescaped
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rec = _loads(line)
        except LoneSurrogate as err:
            yield lineno, Issue(str(path), lineno, err.field, LONE_SURROGATE, err.found, "encoding")
            continue
        except json.JSONDecodeError as err:
            found = f"{err.msg}: {short(line, 40)}"
        except ValueError as err:
            found = str(err)
        else:
            yield lineno, rec
            continue
        yield lineno, Issue(str(path), lineno, "(json)", "one JSON object per line", found, "json")


def check_output_path(path: str | Path, what: str = "an output file") -> Path:
    """Refuse, before any work, an output path that cannot be written: a folder, a device, a file used as
    a folder, a read-only folder. A long job must not compute for hours and then fail to save."""
    path = Path(path)
    if path.is_dir():
        raise InputError([file_issue(path, what, "a directory", "name a file inside it", "(output)")], False)
    if path.exists() and not path.is_file():
        fix = "write to a regular file (it is replaced atomically)"
        raise InputError([file_issue(path, what, "a device or pipe", fix, "(output)")], False)
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        found = f"{folder} is a file, not a folder"
        raise InputError([file_issue(path, what, found, "pick another path", "(output)")], False)
    if not os.access(folder, os.W_OK | os.X_OK):
        found = f"{folder} is read-only"
        raise InputError([file_issue(path, what, found, "pick a writable folder", "(output)")], False)
    return path


def _new_file_mode(path: Path) -> int:
    """The permissions ``open()`` would give ``path``: an existing file's own, else 0666 less the umask.

    ``mkstemp`` creates 0600 whatever the umask; outputs meant to be shared must not end up private. The
    umask is read from /proc (``os.umask`` can only be read by setting it, which races other threads).
    """
    with contextlib.suppress(OSError):
        return stat.S_IMODE(path.stat().st_mode)
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            mask = next(int(line.split()[1], 8) for line in fh if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError):
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


_WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO}


def read_parquet_rows(path: Path, schema_only: bool = False) -> list[Any]:
    """The rows (or, with ``schema_only``, the column names) of a Parquet file; a clear error if unreadable."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    check_not_lfs_pointer(path, read_input_head(path))
    try:
        return pq.read_schema(path).names if schema_only else pq.read_table(path).to_pylist()
    except (pa.ArrowException, OSError) as err:
        raise InputError(
            [Issue(str(path), None, "(file)", "a readable Parquet file", short(str(err), 80), "parquet")]
        ) from err


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """Write to a temporary file beside ``path`` and rename it into place only on success.

    The output path is checked first (:func:`check_output_path`); a write that fails for lack of room or
    rights (disk full, quota, read-only) is an :class:`InputError` naming ``path``, and leaves nothing.
    """
    path = check_output_path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise InputError([file_issue(path, "a writable output file", err, "", "(output)")], False) from None
    try:
        os.fchmod(fd, _new_file_mode(path))
        with os.fdopen(
            fd, mode, encoding=None if "b" in mode else encoding, newline="" if "b" not in mode else None
        ) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(err, OSError) and err.errno in _WRITE_ERRORS:
            fix = "free some space or pick another path"
            raise InputError(
                [file_issue(path, "a writable output file", err, fix, "(output)")], False
            ) from None
        raise


def write_json(path: str | Path, data: Any) -> Path:
    """``data`` as indented JSON at ``path`` (its folder made), written whole or not at all
    (:func:`atomic_write`): a results file a killed command leaves is never half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as fh:
        json.dump(data, fh, indent=2)
        fh.write("\n")
    return path


def read_json_as(path: str | Path, schema: Any) -> Any:
    """The JSON file ``path`` validated as ``schema`` (a pydantic model class or ``TypeAdapter``); a bad
    file raises one :class:`InputError` whose message is one line naming the file and every bad field
    (joined with ``;``): what a command that takes a results file prints."""
    from pydantic import BaseModel, TypeAdapter, ValidationError

    from prmkit.core.errors import issues_from_validation

    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        issues = [Issue(str(path), None, "(file)", "a readable JSON file", err.strerror or str(err))]
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        line = getattr(err, "lineno", None)
        issues = [Issue(str(path), line, "(file)", "JSON", getattr(err, "msg", None) or str(err))]
    else:
        if not isinstance(data, dict):
            issues = [Issue(str(path), None, "(record)", "a JSON object", short(data))]
        else:
            adapter = schema if isinstance(schema, TypeAdapter) else None
            try:
                if adapter is not None:
                    return adapter.validate_python(data)
                assert isinstance(schema, type) and issubclass(schema, BaseModel)
                return schema.model_validate(data)
            except ValidationError as err:
                issues = issues_from_validation(err, str(path), None)
    error = InputError(issues, skippable=False)
    error.args = ("; ".join(str(i) for i in issues),)
    raise error


_PARTIAL = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")


def remove_partial_writes(folder: str | Path) -> list[Path]:
    """Delete the temporary files :func:`atomic_write` leaves in ``folder`` when its process is killed
    mid-write (``.NAME.XXXXXXXX.tmp``); returns them. Only for a folder one run owns (a training output):
    in a shared folder another process's write may be in flight."""
    removed = []
    for path in Path(folder).glob(".*.tmp"):
        if _PARTIAL.match(path.name) and path.is_file():
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed.append(path)
    return removed


class JsonlAppender:
    """Append-only JSONL log for long jobs: every record is flushed (and fsync'd, see ``sync_every_s``)
    before ``append`` returns.

    On reopen, a torn last line (the process died mid-write) is cut off, so a resumed job sees exactly
    the records that were acknowledged.
    """

    def __init__(self, path: str | Path, sync_every_s: float = 0.0):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._truncate_torn_tail()
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.sync_every_s = sync_every_s
        """0: fsync every record. More: every record is still flushed to the OS before ``append``
        returns (a killed process loses nothing), but fsync'd at most this often (a power loss loses at
        most this much), for logs that take thousands of records a second."""
        self._synced = 0.0

    def _truncate_torn_tail(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with open(self.path, "r+b") as fh:
                fh.truncate(keep)

    def records(self) -> list[Any]:
        """Everything appended so far (read back from disk); a damaged line is an :class:`InputError`.

        Only the last line can be torn by a crash (and is cut off on open); a damaged line before it means
        the file was changed by something else, so it is refused with its place rather than skipped.
        """
        if not self.path.exists():
            return []
        out, issues = [], []
        for _, rec in iter_json_records(self.path):
            if isinstance(rec, Issue):
                issues.append(rec)
            else:
                out.append(rec)
        if issues:
            raise InputError(issues, skippable=False)
        return out

    def append(self, record: Any) -> None:
        self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._fh.flush()
        now = time.monotonic()
        if now - self._synced >= self.sync_every_s:
            os.fsync(self._fh.fileno())
            self._synced = now

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
        self._fh.close()

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class FolderLockedError(RuntimeError):
    """Another live process holds the lock of a folder: :func:`lock_folder`'s refusal, naming it."""

    def __init__(self, folder: Path, holder: str):
        self.folder, self.holder = folder, holder
        super().__init__(f"{folder}: held by {holder}")


def lock_folder(folder: str | Path, name: str) -> int:
    """Hold ``folder/name`` for this process and return its descriptor (closing it releases the lock);
    :class:`FolderLockedError` naming the holder (``process PID since TIME on HOST``) when another has it.

    The lock is ``flock``: the kernel drops it when its process ends however it ends (killed, crashed), so
    a lock left by a dead process is simply taken over, and no stale file has to be judged or removed.
    The holder's line is written into the file for the one refused to read.
    """
    import fcntl
    import socket
    from datetime import UTC, datetime

    path = Path(folder) / name
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 200, 0).decode("utf-8", errors="replace").strip() or "another process"
        os.close(fd)
        raise FolderLockedError(Path(folder), holder) from None
    os.ftruncate(fd, 0)
    since = datetime.now(UTC).isoformat(timespec="seconds")
    os.pwrite(fd, f"process {os.getpid()} since {since} on {socket.gethostname()}".encode(), 0)
    return fd

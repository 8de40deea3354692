"""prmkit.core.files: hostile JSON is a located issue, outputs are checked first and keep the umask."""

from __future__ import annotations

import os

import pytest

from prmkit.core.errors import InputError, Issue
from prmkit.core.files import JsonlAppender, atomic_write, check_output_path, iter_json_records


def test_json_that_python_cannot_parse_is_an_issue_not_an_exception(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{"a": ' + "[" * 5000 + "]" * 5000 + '}\n{"n": ' + "7" * 5000 + "}\n")
    got = list(iter_json_records(path))
    assert got[0] == (1, {"a": 1})
    assert [(line, rec.field, rec.found) for line, rec in got[1:] if isinstance(rec, Issue)] == [
        (2, "(json)", "JSON nested too deep to read"),
        (3, "(json)", "a number longer than 4300 digits"),
    ]


def test_a_folder_is_not_read_as_a_file(tmp_path):
    with pytest.raises(InputError, match=r": \(file\): expected a data file, found a directory"):
        list(iter_json_records(tmp_path))


def test_output_paths_are_checked_before_anything_is_written(tmp_path):
    with pytest.raises(InputError, match="found a directory; name a file inside it"):
        check_output_path(tmp_path)
    (tmp_path / "f").write_text("")
    with pytest.raises(InputError, match="is a file, not a folder"):
        check_output_path(tmp_path / "f" / "out.jsonl")
    assert (
        check_output_path(tmp_path / "new" / "deeper" / "out.jsonl")
        == tmp_path / "new" / "deeper" / "out.jsonl"
    )


def test_atomic_write_uses_the_umask_and_keeps_an_existing_files_mode(tmp_path):
    old = os.umask(0o027)
    try:
        with atomic_write(tmp_path / "a.txt") as fh:
            fh.write("x")
    finally:
        os.umask(old)
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o640
    (tmp_path / "a.txt").chmod(0o604)
    with atomic_write(tmp_path / "a.txt") as fh:
        fh.write("y")
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o604


def test_a_damaged_line_in_an_append_log_is_located(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"k": 1}\n{"k": \n{"k": 3}\n')
    with JsonlAppender(path) as log, pytest.raises(InputError, match=r"log.jsonl:2: \(json\)"):
        log.records()


def test_a_log_fsyncs_at_most_every_sync_every_s_and_flushes_every_record(tmp_path, monkeypatch) -> None:
    """A fast endpoint finishes thousands of records a second: fsync each one cost more than the work.
    Every record still reaches the OS before ``append`` returns (a killed process loses nothing)."""
    import os

    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real(fd))
    log = JsonlAppender(tmp_path / "log.jsonl", sync_every_s=60.0)
    for i in range(1000):
        log.append({"i": i})
    assert (tmp_path / "log.jsonl").read_text().count("\n") == 1000  # flushed, before any close
    assert len(synced) == 1  # the first record; the next would be due in a minute
    log.close()
    assert len(synced) == 2  # and on close
    every = JsonlAppender(tmp_path / "every.jsonl")
    for i in range(3):
        every.append({"i": i})
    assert len(synced) == 5
    every.close()

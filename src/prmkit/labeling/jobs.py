"""Labelling jobs that survive crashes: an append-only record log, content keys, derived seeds.

A job lives in a work folder: ``job.json`` (what the job is: kind, parameters, start time) and
``records.jsonl`` (one record per finished unit of work — a prefix's rollouts, a trace's verdict — each
flushed and fsync'd by :class:`~prmkit.core.files.JsonlAppender` before it counts as done).

Resuming is replaying: every unit has a content key (problem id + step texts), every rollout's seed is
derived from ``(job seed, key, ...)`` and never from RNG state or completion order, so a killed run that
is started again skips the finished units, computes the rest exactly as the first run would have, and
writes the same output (labels carry the job's start time, not the time of the rerun).

One item's failure is not the job's: an :class:`~prmkit.core.errors.ItemError` (a request the server
refused, an answer that was not one) is recorded with its reason in ``failed.jsonl``, the job finishes
the rest and its summary counts it, and a rerun retries only the failed items (their records are not in
the log). ``fail_fast`` stops at the first failure instead; a run of failures (a server that went down)
stops the job too, and so does a silent endpoint (one that accepts requests and answers none), at once.
One process owns a work folder at a time (a lock a second one reports in one line).

A resumed job trusts no record it did not check: every logged record must hold its kind's fields with
their types and values that can be true (``check``: counts that add up, indices in range). A damaged
one is refused with its ``file:line``, never used and never silently redone: a log that was edited or
corrupted may be wrong in ways no check sees, so the user decides (delete that line, and its work is
redone; or ``--restart``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import queue
import shutil
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from prmkit.core.errors import InputError, Issue, ItemError, short
from prmkit.core.files import JsonlAppender, atomic_write, file_issue, iter_json_records, read_input_bytes
from prmkit.core.model import Step
from prmkit.policies.http import SilentEndpointError

T = TypeVar("T")
R = TypeVar("R")

LABELING_VERSION = "labeling-2"
"""Goes into every Provenance this package writes; bump it when a method's labels would change.
labeling-2: a rollout cut at the token limit is ``truncated``, by default not a failure."""
FAILURES_IN_A_ROW = 64
"""A job stops after this many failed items in a row (or twice its concurrency, if more) with nothing
finishing between them: the endpoint is down or refusing everything, and going on would only record the
whole job as failed."""
FAILED_FILE = "failed.jsonl"
WINDOW = 4
"""Items handed to the thread pool at a time, per unit of concurrency."""


def derive_seed(job_seed: int, *parts: object) -> int:
    """A 31-bit seed from the job seed and a unit's identity (stable across machines and runs)."""
    digest = hashlib.sha256(json.dumps([job_seed, *parts], default=str).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def prefix_key(problem_id: str, steps: Sequence[Step]) -> str:
    """The content key of a prefix: equal for the same problem and step contents, whichever trace holds it."""
    h = hashlib.sha256(problem_id.encode())
    for step in steps:
        h.update(b"\x00" + step.text.encode())
        if step.tool_calls or step.observations:  # an agent step: its calls and their results count too
            h.update(step.model_dump_json(include={"tool_calls", "observations"}).encode())
    return f"{len(steps)}-{h.hexdigest()[:20]}"


class JobMismatchError(ValueError):
    """A work folder holds a job with other parameters; resuming it would mix two experiments."""


class JobStoppedError(RuntimeError):
    """The job stopped on a failure: at the first one (``fail_fast``) or after a run of them."""


class JobLockedError(RuntimeError):
    """Another process is running the job in this work folder; two would pay for the same work twice."""


class Job:
    """A resumable job: cached records by key, in-flight de-duplication, a thread pool and progress.

    ``get(key, compute)`` returns the record of ``key``, computing it at most once even when several
    threads ask at the same moment (shared prefixes), and logging it before returning.
    """

    def __init__(
        self,
        work_dir: str | Path | None,
        kind: str,
        params: dict[str, Any],
        restart: bool = False,
        fields: Mapping[str, type] | None = None,
        fail_fast: bool = False,
        check: Check | None = None,
    ):
        self.kind, self.params, self.fail_fast = kind, params, fail_fast
        self.fields = dict(fields or {})
        """The fields every record of this kind holds, with their types: a logged record without them
        is refused with its place when the job resumes, not a KeyError deep in the summary."""
        self.check = check
        """What is wrong with a logged record's values, as (field, expected, found), or None: a record
        whose counts cannot be true (10^9 right of 8 rollouts) is refused with its place when the job
        resumes, not turned into labels."""
        self.items = 0  # items handed to map (the "M" of "N of M items failed")
        self.records: dict[str, dict] = {}
        self.failures: list[dict[str, Any]] = []
        """This run's failed items: what ``about`` said of each, its ``reason`` and ``error`` type."""
        self.resumed = 0
        self.work_dir: Path | None = None
        self._lock_fd: int | None = None
        self._in_a_row = 0  # failed items since the last success (a run of them stops the job)
        self._lock = threading.Lock()
        self._inflight: dict[str, Future] = {}
        self._log: JsonlAppender | None = None
        self.started_at = datetime.now(UTC)
        self.rollouts_now = 0  # rollouts drawn by this process (for the rate shown)
        if work_dir is not None:
            try:
                self._open(Path(work_dir), restart)
            except BaseException:
                self._unlock()
                raise

    def _open(self, work_dir: Path, restart: bool) -> None:
        meta_path = work_dir / "job.json"
        if work_dir.exists() and not work_dir.is_dir():
            found = "a file"
            raise InputError(
                [file_issue(work_dir, "a job's work folder", found, "pick another --work-dir")], False
            )
        try:
            work_dir.mkdir(parents=True, exist_ok=True)
            self._lock_fd = _lock(work_dir)
            if restart:
                for entry in work_dir.iterdir():
                    if entry.name != LOCK_FILE:
                        shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        except OSError as err:
            fix = "pick another --work-dir"
            raise InputError([file_issue(work_dir, "a writable work folder", err, fix)], False) from None
        self.work_dir = work_dir
        if meta_path.exists():
            meta = _read_meta(meta_path)
            if meta.get("kind") != self.kind or meta.get("params") != json.loads(
                json.dumps(self.params, default=str)
            ):
                raise JobMismatchError(
                    f"{work_dir}: holds a {meta.get('kind')} job with params {meta.get('params')}, not "
                    f"{self.kind} with {self.params}; pass restart=True (--restart) or another work folder"
                )
            self.started_at = meta["started_at"]
        else:
            meta = {"kind": self.kind, "params": self.params, "started_at": self.started_at.isoformat()}
            with atomic_write(meta_path) as fh:
                json.dump(meta, fh, indent=2, default=str)
        self._log = JsonlAppender(work_dir / "records.jsonl", sync_every_s=SYNC_EVERY_S)
        self.records = _read_records(self._log, self.fields, self.check)
        self.resumed = len(self.records)

    def get(self, key: str, compute: Callable[[], dict]) -> dict:
        """The record of ``key``: from the log, from a thread computing it now, or computed here."""
        with self._lock:
            if key in self.records:
                return self.records[key]
            fut = self._inflight.get(key)
            owner = fut is None
            if owner:
                fut = self._inflight[key] = Future()
        assert fut is not None
        if not owner:
            return fut.result()
        try:
            rec = {"key": key, **compute()}
            with self._lock:
                if self._log is not None:
                    self._log.append(rec)
                self.records[key] = rec
                self.rollouts_now += int(rec.get("n", 0))
            fut.set_result(rec)
            return rec
        except BaseException as err:
            fut.set_exception(err)
            raise
        finally:
            with self._lock:
                self._inflight.pop(key, None)

    def map(
        self,
        items: Sequence[T],
        fn: Callable[[T], R],
        concurrency: int,
        desc: str,
        show: bool = True,
        stop: Callable[[], None] | None = None,
        about: Callable[[T], dict[str, Any]] | None = None,
    ) -> list[R | None]:
        """``fn`` over ``items`` on a thread pool, results in input order, with a progress bar and ETA.

        An item whose ``fn`` raises an :class:`~prmkit.core.errors.ItemError` gives None and is recorded
        in :attr:`failures` (with what ``about`` says of it), unless the job fails fast. Any other error,
        the first failure of a ``fail_fast`` job, or a run of failures stops the job: ``stop`` (a policy's
        or judge's, where it has one) is called so the units already running end without retrying, and the
        rest are never started; finished work stays in the log. Items are handed to the pool a few times
        ``concurrency`` at a time, so a million-item job holds a bounded number of pending tasks.
        """
        results: list[R | None] = [None] * len(items)
        self.items += len(items)
        limit = max(FAILURES_IN_A_ROW, 2 * concurrency)
        todo = iter(enumerate(items))
        done: queue.SimpleQueue[tuple[int, Future]] = queue.SimpleQueue()  # finished, in completion order
        in_flight = 0
        self._in_a_row = 0
        with (
            _Bar(desc, len(items), self, show) as bar,
            ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="prmkit-label") as pool,
        ):
            try:
                while True:
                    for i, item in itertools.islice(todo, WINDOW * concurrency - in_flight):
                        pool.submit(fn, item).add_done_callback(lambda fut, i=i: done.put((i, fut)))
                        in_flight += 1
                    if not in_flight:
                        break
                    i, fut = done.get()
                    in_flight -= 1
                    results[i] = self._settle(fut, items[i], about, limit)
                    bar.advance()
                if items and self._in_a_row == len(items):  # not one succeeded: nothing to write
                    raise JobStoppedError(
                        f"all {len(items)} items failed, the last: {self.failures[-1]['reason']}. "
                        f"{self._kept_note()}fix the cause and run the same command again"
                    )
            except BaseException:
                # Stop: finished work is already logged; queued units would only fail the same way.
                if stop is not None:
                    stop()
                pool.shutdown(wait=True, cancel_futures=True)
                raise
        return results

    def _settle(
        self, fut: Future, item: Any, about: Callable[[Any], dict[str, Any]] | None, limit: int
    ) -> Any:
        """A finished item's result; None for a recorded failure; raises where the job must stop."""
        err = fut.exception()
        if err is None:
            self._in_a_row = 0
            return fut.result()
        if isinstance(err, SilentEndpointError):  # every other item would wait out its timeouts too
            raise JobStoppedError(
                f"{err.reason}. {self._kept_note()}run the same command again once it answers"
            ) from err
        if not isinstance(err, ItemError):
            raise err
        if self.fail_fast:
            raise JobStoppedError(
                f"stopped at the first failure (fail_fast): {err.reason}. {self._kept_note()}"
                "run again to go on, or without --fail-fast to record failures and go on"
            ) from err
        self._in_a_row += 1
        self._failed(item, err, about)
        if self._in_a_row >= limit:
            raise JobStoppedError(
                f"{self._in_a_row} items failed in a row, the last: {err.reason}. "
                f"{self._kept_note()}fix the cause and run the same command again to go on"
            )
        return None

    def _failed(self, item: Any, err: ItemError, about: Callable[[Any], dict[str, Any]] | None) -> None:
        with self._lock:
            self.failures.append(
                {**(about(item) if about else {}), "reason": err.reason, "error": type(err).__name__}
            )

    def _kept_note(self) -> str:
        return f"Finished work is kept in {self.work_dir}; " if self.work_dir is not None else ""

    def failure_summary(self) -> dict[str, Any]:
        """What a labeller's summary says of failures: how many, the first few, and where the rest are."""
        out: dict[str, Any] = {"items": self.items, "failed": len(self.failures)}
        if self.failures:
            out["failures"] = self.failures[:MAX_FAILURES_SHOWN]
            if self.work_dir is not None:
                out["failures_file"] = str(self.work_dir / FAILED_FILE)
        return out

    def close(self) -> None:
        """Close the log, write this run's failures (``failed.jsonl``, replaced each run), release the lock."""
        if self._log is not None:
            self._log.close()
            self._log = None
            if self.work_dir is not None:
                with atomic_write(self.work_dir / FAILED_FILE) as fh:
                    for failure in self.failures:
                        fh.write(json.dumps(failure, ensure_ascii=False) + "\n")
        self._unlock()

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor releases the lock
            self._lock_fd = None

    def __enter__(self) -> Job:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


RESTART_FIX = "pass --restart (restart=True) to start over, or delete the work folder"
LOCK_FILE = "job.lock"
SYNC_EVERY_S = 1.0
"""The log is flushed with every record (a killed process loses nothing) and fsync'd at most this often:
a machine that loses power loses at most this much work, which a rerun redoes. fsync per record cost
more than a fast endpoint's rollouts."""
MAX_FAILURES_SHOWN = 20


def _lock(work_dir: Path) -> int:
    """Hold ``work_dir/job.lock`` for this process (released when it ends, however it ends): the one
    folder lock, :func:`~prmkit.core.files.lock_folder`, which ``prmkit run`` holds on its output too."""
    from prmkit.core.files import FolderLockedError, lock_folder

    try:
        return lock_folder(work_dir, LOCK_FILE)
    except FolderLockedError as err:
        raise JobLockedError(
            f"{work_dir}: this job is being run by {err.holder}; wait for it to finish, or give this run "
            "another --work-dir (two runs of one job would pay for the same rollouts twice)"
        ) from None


def _read_meta(path: Path) -> dict[str, Any]:
    """``job.json``, checked: a damaged one is a located error that says how to start over."""
    text = read_input_bytes(path).decode("utf-8", errors="replace")
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as err:
        found = "an empty file" if not text.strip() else err.msg
        raise InputError(
            [Issue(str(path), err.lineno, "(json)", JOB_META, found, "json", RESTART_FIX)], False
        ) from None
    bad = None if isinstance(meta, dict) else "(file)"
    if bad is None:
        bad = next((k for k in ("kind", "params", "started_at") if k not in meta), None)
    if bad is None:
        try:
            meta["started_at"] = datetime.fromisoformat(str(meta["started_at"]))
        except ValueError:
            bad = "started_at"
    if bad is not None:
        found = short(meta.get(bad, "nothing") if isinstance(meta, dict) else meta)
        raise InputError([Issue(str(path), None, bad, JOB_META, found, "type", RESTART_FIX)], False)
    return meta


JOB_META = "a job description {kind, params, started_at}"


Check = Callable[[dict], "tuple[str, str, str] | None"]
"""A record kind's value check: (field, expected, found) for the first value that cannot be true."""
DAMAGED_FIX = "delete that line of records.jsonl (its work is redone) or pass --restart"


def _read_records(
    log: JsonlAppender, fields: Mapping[str, type], check: Check | None = None
) -> dict[str, dict]:
    """The finished records by key; a damaged line (not a torn last one, which is cut off on open) is
    refused with its place: replaying past it would silently redo or lose work the log says is done,
    and using it would turn its damage into labels."""
    out: dict[str, dict] = {}
    issues = []
    for line, rec in iter_json_records(log.path) if log.path.exists() else ():
        if isinstance(rec, Issue):
            issues.append(replace(rec, fix=RESTART_FIX))
        elif not isinstance(rec, dict) or not isinstance(rec.get("key"), str):
            issues.append(
                Issue(
                    str(log.path), line, "key", "a record with a string key", short(rec), "type", RESTART_FIX
                )
            )
        elif (bad := _bad_field(rec, fields)) is not None:
            name, expected = bad
            found = short(rec[name]) if name in rec else "nothing"
            issues.append(Issue(str(log.path), line, name, expected, found, "type", RESTART_FIX))
        elif check is not None and (bad_value := check(rec)) is not None:
            issues.append(Issue(str(log.path), line, *bad_value, "range", DAMAGED_FIX))
        else:
            out[rec["key"]] = rec
    if issues:
        raise InputError(issues, skippable=False)
    return out


def _bad_field(rec: dict, fields: Mapping[str, type]) -> tuple[str, str] | None:
    """The first of ``fields`` that ``rec`` lacks or holds with another type: (name, what was expected)."""
    for name, kind in fields.items():
        value = rec.get(name)
        wrong = isinstance(value, bool) and kind is not bool  # JSON true is not a count
        if not isinstance(value, kind) or wrong:
            return name, f"a {kind.__name__} (a {{{', '.join(fields)}}} record)"
    return None


class _Bar:
    """The progress bar (traces done, ETA) with rollouts per second in its description."""

    def __init__(self, desc: str, total: int, job: Job, show: bool):
        self.desc, self.total, self.job, self.show = desc, total, job, show
        self.t0 = time.monotonic()
        self._progress = None
        self._task = None

    def __enter__(self) -> _Bar:
        if self.show:
            from prmkit.core.progress import progress

            self._progress = progress()
            self._progress.start()
            self._task = self._progress.add_task(self.desc, total=self.total)
        return self

    def advance(self) -> None:
        if self._progress is None:
            return
        rate = self.job.rollouts_now / max(time.monotonic() - self.t0, 1e-9)
        desc = (
            f"{self.desc} ({rate:.0f} rollouts/s)" if self.job.rollouts_now else self.desc
        )  # a judge rolls none
        self._progress.update(self._task, advance=1, description=desc)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

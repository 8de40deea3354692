"""Labelling jobs that survive crashes: an append-only record log, content keys, derived seeds.

A job lives in a work folder: ``job.json`` (what the job is: kind, parameters, start time) and
``records.jsonl`` (one record per finished unit of work — a prefix's rollouts, a trace's verdict — each
flushed and fsync'd by :class:`~prmkit.core.files.JsonlAppender` before it counts as done).

Resuming is replaying: every unit has a content key (problem id + step texts), every rollout's seed is
derived from ``(job seed, key, ...)`` and never from RNG state or completion order, so a killed run that
is started again skips the finished units, computes the rest exactly as the first run would have, and
writes the same output (labels carry the job's start time, not the time of the rerun).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from prmkit.core.errors import InputError, Issue, short
from prmkit.core.files import JsonlAppender, atomic_write, file_issue, iter_json_records, read_input_bytes
from prmkit.core.model import Step

T = TypeVar("T")
R = TypeVar("R")

LABELING_VERSION = "labeling-1"
"""Goes into every Provenance this package writes; bump it when a method's labels would change."""


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
    ):
        self.kind, self.params = kind, params
        self.fields = dict(fields or {})
        """The fields every record of this kind holds, with their types: a logged record without them
        is refused with its place when the job resumes, not a KeyError deep in the summary."""
        self.records: dict[str, dict] = {}
        self.resumed = 0
        self._lock = threading.Lock()
        self._inflight: dict[str, Future] = {}
        self._log: JsonlAppender | None = None
        self.started_at = datetime.now(UTC)
        self.rollouts_now = 0  # rollouts drawn by this process (for the rate shown)
        if work_dir is not None:
            self._open(Path(work_dir), restart)

    def _open(self, work_dir: Path, restart: bool) -> None:
        meta_path = work_dir / "job.json"
        if work_dir.exists() and not work_dir.is_dir():
            found = "a file"
            raise InputError(
                [file_issue(work_dir, "a job's work folder", found, "pick another --work-dir")], False
            )
        try:
            if restart and work_dir.exists():
                shutil.rmtree(work_dir)
            work_dir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            fix = "pick another --work-dir"
            raise InputError([file_issue(work_dir, "a writable work folder", err, fix)], False) from None
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
        self._log = JsonlAppender(work_dir / "records.jsonl")
        self.records = _read_records(self._log, self.fields)
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
    ) -> list[R]:
        """``fn`` over ``items`` on a thread pool, results in input order, with a progress bar and ETA.

        On the first failure ``stop`` (a policy's or judge's, where it has one) is called so the units
        already running end without retrying, and the rest are cancelled."""
        results: list[R | None] = [None] * len(items)
        bar = _Bar(desc, len(items), self, show)
        with (
            bar,
            ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="prmkit-label") as pool,
        ):
            futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
            try:
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    bar.advance()
            except BaseException:
                # Fail fast: finished work is already logged; queued units would only fail the same way.
                if stop is not None:
                    stop()
                pool.shutdown(wait=True, cancel_futures=True)
                raise
        return results  # type: ignore[return-value]

    def close(self) -> None:
        if self._log is not None:
            self._log.close()

    def __enter__(self) -> Job:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


RESTART_FIX = "pass --restart (restart=True) to start over, or delete the work folder"


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


def _read_records(log: JsonlAppender, fields: Mapping[str, type]) -> dict[str, dict]:
    """The finished records by key; a damaged line (not a torn last one, which is cut off on open) is
    refused with its place: replaying past it would silently redo or lose work the log says is done."""
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

"""``prmkit run --jobs N``: stages whose inputs are done run side by side, each in a process of its own.

A training stage sets torch's threads for its whole process (``threads`` in its config), so two stages
never share one: every stage gets a process of its own, forked from a fresh server process (Python's
``forkserver``: nothing inherited from the runner's torch, threads or locks) that imported the heavy
modules once (:data:`PRELOAD`), and at most ``N`` run at once. A stage cannot travel to that process
itself (its ``run`` is a closure over the recipe's section), so the process plans the recipe again and
runs the stage of that name (:func:`run_planned`); the runner keeps everything else: the cache, the
``DONE.json`` written after a stage succeeded, the log, the report.

A stage that fails stops the run: nothing new starts, the stages already running finish (their work is
kept, marked done, so the rerun does not repeat it), then its error is raised as the sequential runner
would raise it (the same type and message; its traceback in the stage's process as a note). Anything
that stops the runner itself (Ctrl-C, an error of its own) stops the running stages too, and a stage's
process exits when the runner's dies, however it dies: a killed run leaves no stage behind to write into
a folder its rerun is using.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import pickle
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from multiprocessing.reduction import ForkingPickler
from pathlib import Path
from typing import Any

from prmkit.core.errors import InputError

PRELOAD = ("__main__", "torch", "transformers.trainer", "prmkit.pipeline.runner")
"""Imported once by the server every stage's process is forked from, so a stage starts in a fraction of a
second instead of the seconds these imports take (``__main__``: the program that runs, e.g. the
``prmkit`` script with every command, which a process would import again otherwise). Importing starts
no torch thread pool: each stage sizes its own. A module that is not installed is skipped."""

Running = dict[Connection, tuple["Job", BaseProcess, Connection]]
"""Per running job: its result's end of a pipe -> the job, its process, and the pipe end it watches."""


@dataclass
class Job:
    """One stage to run: its name, the jobs it waits for, and the call its process makes (picklable)."""

    name: str
    after: list[str]
    call: Callable[[], Any]


def run_planned(planner: Callable[[Any], list[Any]], recipe: Any, name: str, folder: Path,
                deps: dict[str, Path]) -> Any:  # fmt: skip
    """In a stage's own process: the stage ``name`` of ``planner(recipe)`` run into ``folder``, reading
    ``deps``; its summary as JSON values (what the runner marks done)."""
    (stage,) = [s for s in planner(recipe) if s.name == name]
    if list(stage.deps) != list(deps):
        raise RuntimeError(f"stage {name} reads {stage.deps} when planned again, not {list(deps)}")
    return json.loads(json.dumps(stage.run(recipe, folder, deps), default=str))


def _input_error(issues: list[Any], message: str) -> InputError:
    err = InputError.__new__(InputError)
    err.args, err.issues = (message,), issues
    return err


ForkingPickler.register(InputError, lambda e: (_input_error, (e.issues, str(e))))
"""A stage's bad input reaches the runner as the same located error (its message is not its arguments)."""


def _portable(err: BaseException) -> BaseException | None:
    """``err`` if it crosses to the runner as itself (same type, same message), else None."""
    try:
        back = ForkingPickler.loads(ForkingPickler.dumps(err))
    except Exception:
        return None
    return back if type(back) is type(err) and str(back) == str(err) else None


def _exit_with(alive: Connection) -> None:
    """Exit this process once the runner is gone: ``alive``'s other end is held by the runner alone, so
    it reads end of file when the runner dies, however it dies."""

    def watch() -> None:
        with contextlib.suppress(EOFError, OSError):
            alive.recv()
        os._exit(1)

    threading.Thread(target=watch, name="runner-watch", daemon=True).start()


def _child(conn: Connection, alive: Connection, call: Callable[[], Any]) -> None:
    _exit_with(alive)
    start = time.perf_counter()
    try:
        result: tuple[Any, ...] = ("ok", call(), time.perf_counter() - start)
    except BaseException as err:  # reported to the runner, which stops the run
        result = ("error", _portable(err), f"{type(err).__name__}: {err}", traceback.format_exc())
    conn.send(result)
    conn.close()


def _start(ctx: Any, job: Job) -> Running:
    """``job``'s process, started."""
    reader, writer = ctx.Pipe(duplex=False)
    watched, alive = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(writer, watched, job.call), name=f"stage {job.name}")
    proc.start()
    writer.close()  # the process's ends: its death reads as end of file here
    watched.close()
    return {reader: (job, proc, alive)}


def _outcome(job: Job, conn: Connection, proc: BaseProcess) -> tuple[Any, float, BaseException | None]:
    """What a finished process sent: its summary and seconds, or the error to raise for it."""
    try:
        kind, *rest = conn.recv()
    except (EOFError, OSError, pickle.UnpicklingError):
        proc.join()
        ended = f"stage {job.name}: its process ended without a result (exit code {proc.exitcode})"
        return None, 0.0, RuntimeError(ended)
    proc.join()
    if kind == "ok":
        return rest[0], rest[1], None
    err, text, trace = rest
    if err is None:
        err = RuntimeError(f"stage {job.name} failed: {text}")
    err.add_note(f"stage {job.name}, in its own process:\n{trace}")
    return None, 0.0, err


def run_jobs(jobs: list[Job], workers: int, started: Callable[[Job], None],
             finished: Callable[[Job, Any, float], None], log: Callable[[str], None]) -> None:  # fmt: skip
    """Run ``jobs`` (in order of preference), each once every job it waits for finished, at most
    ``workers`` at a time; ``started`` and ``finished`` (summary, seconds) are called in this process.
    The first failure (a job's error, or ``finished`` refusing its result) is raised once the jobs
    running then have finished; nothing starts after it."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(list(PRELOAD))
    else:  # Windows: each stage a fresh interpreter, which imports what it needs itself
        ctx = multiprocessing.get_context("spawn")
    pending, done = list(jobs), set()
    running: Running = {}
    failure: BaseException | None = None
    try:
        while running or (pending and failure is None):
            ready = [j for j in pending if set(j.after) <= done] if failure is None else []
            for job in ready[: workers - len(running)]:
                pending.remove(job)
                started(job)
                running.update(_start(ctx, job))
            if not running:
                raise RuntimeError(f"stages wait for stages that never run: {[j.name for j in pending]}")
            for conn in wait(list(running)):
                job, proc, alive = running.pop(conn)
                summary, seconds, err = _outcome(job, conn, proc)
                alive.close()
                if err is None:
                    try:
                        finished(job, summary, seconds)
                        done.add(job.name)
                    except Exception as refused:
                        err = refused
                if err is not None:
                    names = ", ".join(j.name for j, _, _ in running.values())
                    waiting = f"; waiting for {names} to finish (their results are kept)" if names else ""
                    then = "nothing new starts" if failure is None else "after the first, which is raised"
                    log(f"[red]stage {job.name} failed[/red] ({type(err).__name__}): {then}{waiting}")
                    failure = failure or err
    except BaseException:
        _stop(running)
        raise
    if failure is not None:
        raise failure


def _stop(running: Running) -> None:
    """The running jobs' processes terminated (the runner is stopping): no stage outlives its run."""
    for _, proc, _ in running.values():
        proc.terminate()
    for _, proc, alive in running.values():
        proc.join()
        alive.close()

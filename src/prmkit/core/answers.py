"""Final-answer equivalence through math-verify, minding its traps.

- Its LaTeX extraction reads only what stands in a math environment (``$...$``, ``\\(...\\)``,
  ``\\[...\\]``, ``\\boxed{}``): handed a bare ``\\dfrac{3}{4}`` it finds nothing, and handed a bare
  ``\\frac{1}{3}+\\frac{1}{7}`` it finds only the fraction at the end. Answers arrive bare (the step
  reader strips ``\\boxed{}`` and ``$``), so each side is put back into ``$...$`` as its README does
  (``parse("$...$")``), and read as one expression: when the whole does not parse, no piece of it is
  taken instead.
- ``verify(gold, answer)`` is asymmetric: gold goes first.
- Its timeouts use ``signal.alarm``, which fails outside the main thread, and a hung sympy call cannot be
  stopped from another thread. So checks run in worker processes (as many as the CPUs this process may
  use, started on the first check that needs one), each in its main thread under a ``SIGALRM`` timer.
  The timeout counts only the check itself, not time queued behind other checks: under load a check
  waits, it does not come back unparseable. A check its timer cannot stop (a hang in C code) has its
  worker killed and replaced. :func:`check_answers` sends all of one call's answers as one task.
- Its ``TimeoutException`` derives from ``BaseException``; it is caught explicitly.
- "Could not parse" is not "wrong": :func:`check_answer` returns ``None`` for it, and callers count it
  apart (turning it into False would silently bias Monte Carlo labels). That covers a side math-verify
  reads only as a string, and a comparison that crashes, which ``verify`` itself would report as False.

Plain numbers (the world's answers) are compared exactly without calling math-verify at all.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import importlib
import logging
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

_NUMBER = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)(/\d+)?\s*$")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_IN_MATH_MODE = re.compile(r"^(\$.*\$|\\\(.*\\\)|\\\[.*\\\]|\\boxed\{.*\})$", re.DOTALL)
# math ending in a digit, brace, bracket or percent sign, then only words ("18 dollars", "\frac12 cup")
_TRAILING_WORDS = re.compile(r"^(?P<math>.*?[\d})\]%])(?P<words>(?: [A-Za-z]{2,})+)\.?$")


@dataclasses.dataclass(frozen=True)
class _Settings:
    workers: int | None = None
    timeout: float = 5.0
    initializer: str | None = None


_SETTINGS = _Settings()
_POOL: _Pool | None = None
_POOL_LOCK = threading.Lock()


def _as_number(text: str) -> Fraction | None:
    """The exact value of a plain number (``1,000``, ``-2.5``, ``3/4``), else None.

    A comma counts only between thousands: ``1,2`` is a list of two solutions, not twelve.
    """
    text = text.strip()
    if text.startswith("\\boxed{") and text.endswith("}"):
        text = text[7:-1]
    text = _THOUSANDS.sub("", text)
    if not _NUMBER.match(text):
        return None
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None


def _in_math_mode(text: str) -> str:
    """``text`` inside ``$...$`` unless it already stands in a math environment.

    math-verify's README: "the latex must be placed in latex environment to be parsable". Line breaks
    become spaces (as they are in math mode), since ``$...$`` holds one line. Words after the math
    ("The answer is 18 dollars.") stay outside it, as in the sentence they came from: inside, math-verify
    would read them as a product of letters.
    """
    text = " ".join(text.split())
    if _IN_MATH_MODE.match(text):
        return text
    prose = _TRAILING_WORDS.match(text)
    if prose:
        return f"${prose['math']}${prose['words']}"
    return f"${text}$"


def _parse(latex: str) -> tuple[Any, ...]:
    """math-verify's reading of ``latex``: a math object (if any) and the matched string.

    ``extraction_mode="first_match"`` reads the whole environment or nothing; the default goes on to
    smaller matches when the first fails to parse, and could grade a piece of an answer.
    """
    import math_verify

    return tuple(math_verify.parse(latex, extraction_mode="first_match", parsing_timeout=None))


@functools.lru_cache(maxsize=4096)
def _parsed_gold(latex: str) -> tuple[Any, ...]:
    """The reference's reading, once per reference: Monte Carlo labelling checks many rollouts against it.

    Sympy objects are immutable, so sharing them between checks and threads is safe.
    """
    return _parse(latex)


def _has_math(parsed: tuple[Any, ...]) -> bool:
    """Whether math-verify read a math object, not only the matched string it falls back to."""
    return any(not isinstance(x, str) for x in parsed)


def _math_verify(gold: str, answer: str) -> bool | None:
    """math-verify's verdict, gold first; None where it could not read a side or the comparison crashed."""
    from math_verify import verify

    try:
        gold_parsed = _parsed_gold(_in_math_mode(gold))
        answer_parsed = _parse(_in_math_mode(answer))
        if not gold_parsed or not answer_parsed:
            return None
        # verify reads a list as alternatives (a tuple would be one object): hand it lists
        same = bool(verify(list(gold_parsed), list(answer_parsed), timeout_seconds=None, raise_on_error=True))
        # a side read only as its string (no math object) can be identical, never shown wrong
        return same if same or (_has_math(gold_parsed) and _has_math(answer_parsed)) else None
    except BaseException as err:  # math-verify's TimeoutException is a BaseException
        if isinstance(err, KeyboardInterrupt | SystemExit):
            raise
        return None


class _Expired(BaseException):
    """A check ran past its timer (a BaseException, so that no ``except Exception`` in sympy swallows it)."""


def _expire(signum: int, frame: object) -> None:
    raise _Expired


def _check_each(gold: str, answers: list[str], timeout: float) -> list[bool | None]:
    """In a worker's main thread: each answer's verdict, None for one that runs past ``timeout`` seconds."""
    signal.signal(signal.SIGALRM, _expire)
    verdicts: list[bool | None] = []
    for answer in answers:
        verdict = None
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                verdict = _math_verify(gold, answer)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _Expired:
            pass
        verdicts.append(verdict)
    return verdicts


def _resolve(name: str) -> Callable[[], object]:
    """The function a ``"module:function"`` name points at."""
    module, _, attr = name.partition(":")
    try:
        function = getattr(importlib.import_module(module), attr) if module and attr else None
    except ImportError as err:
        raise ValueError(f"initializer {name!r}: cannot import {module!r} ({err})") from err
    if not callable(function):
        raise ValueError(f"initializer {name!r}: expected 'module:function' naming a function")
    return function


def _serve(read_fd: int, write_fd: int) -> None:
    """A worker's loop: set up, say ready, then check each batch it is sent until its pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; a closed pipe ends us
    from multiprocessing.connection import Connection

    tasks, replies = Connection(read_fd, writable=False), Connection(write_fd, readable=False)
    sys.path[:], initializer = tasks.recv()  # the parent's path, as multiprocessing's spawn hands it over
    # the first check pays sympy's and the LaTeX parser's set-up; the warning it logs once per process,
    # that math-verify's timeouts are off, does not hold here: _check_each times every check
    logging.getLogger("math_verify").setLevel(logging.ERROR)
    _math_verify("1", r"\frac{1}{2}")
    logging.getLogger("math_verify").setLevel(logging.NOTSET)
    if initializer is not None:
        _resolve(initializer)()
    replies.send(os.getpid())
    while True:
        try:
            gold, answers, timeout = tasks.recv()
        except EOFError:
            return
        replies.send(_check_each(gold, answers, timeout))


class _Worker:
    """One worker process: a fresh interpreter (no fork of this threaded process, no rerun of ``__main__``)."""

    def __init__(self, initializer: str | None):
        from multiprocessing.connection import Connection  # loaded with the first worker, not with prmkit

        child_read, parent_write = os.pipe()
        parent_read, child_write = os.pipe()
        code = (
            "import sys; from prmkit.core.answers import _serve; _serve(int(sys.argv[1]), int(sys.argv[2]))"
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, str(child_read), str(child_write)],
            stdin=subprocess.DEVNULL,
            pass_fds=(child_read, child_write),
        )
        os.close(child_read)
        os.close(child_write)
        self.tasks: Connection = Connection(parent_write, readable=False)
        self.replies: Connection = Connection(parent_read, writable=False)
        self.tasks.send((sys.path, initializer))
        self.ready = False

    def wait_ready(self) -> None:
        """Blocks until set up (a second or so after start); raises if the worker died on the way."""
        if not self.ready:
            try:
                self.replies.recv()
            except EOFError:
                raise RuntimeError(
                    "an answer-checking worker died while starting: its error is above"
                ) from None
            self.ready = True

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self.tasks.close()
        self.replies.close()


class _Pool:
    """Workers each on its own pipe; a caller takes an idle one, so time queued never counts as checking."""

    def __init__(self, size: int, initializer: str | None):
        self.initializer = initializer
        self.idle: queue.SimpleQueue[_Worker | None] = queue.SimpleQueue()  # None: the pool is closed
        self.workers: set[_Worker] = set()
        self.lock = threading.Lock()
        self.closed = False
        for _ in range(size):
            self._replace(None)

    def run(self, task: tuple[str, list[str], float], deadline: float) -> list[bool | None] | None:
        """A worker's reply to ``task``; None when it ran ``deadline`` seconds or died (it is replaced)."""
        worker = self.idle.get()
        if worker is None:
            self.idle.put(None)
            raise RuntimeError("answer checking was shut down (configure() or exit)")
        reply = None
        try:
            worker.wait_ready()
            worker.tasks.send(task)
            reply = worker.replies.recv() if worker.replies.poll(deadline) else None
        except (EOFError, OSError):  # it died checking
            pass
        finally:  # a worker in an unknown state (timed out, died, interrupted) is not reused
            if reply is None:
                self._replace(worker)
            else:
                self.idle.put(worker)
        if reply is None and self.closed:
            raise RuntimeError("answer checking was shut down (configure() or exit) during a check")
        return reply

    def _replace(self, worker: _Worker | None) -> None:
        with self.lock:
            if worker is not None:
                self.workers.discard(worker)
            if not self.closed:
                new = _Worker(self.initializer)
                self.workers.add(new)
                self.idle.put(new)
        if worker is not None:
            worker.kill()

    def close(self) -> None:
        with self.lock:
            self.closed = True
            workers, self.workers = self.workers, set()
        self.idle.put(None)
        for worker in workers:
            worker.kill()


def configure(
    workers: int | None = None, timeout: float | None = None, initializer: str | None = None
) -> None:
    """Set how checks run (every argument left out takes its default); the next check starts a new pool.

    Checks still running when it is called are cut off: call it before checking, or between runs.

    Args:
        workers: processes that check answers; default the CPUs this process may use.
        timeout: seconds one answer's check may run when the caller gives none; default 5. Time spent
            queued behind other checks does not count.
        initializer: a ``"module:function"`` run in each worker as it starts, after math-verify is loaded
            (tests slow down or hang math-verify with it).
    """
    if workers is not None and workers < 1:
        raise ValueError(f"workers: expected at least 1, found {workers}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"timeout: expected seconds > 0, found {timeout}")
    if initializer is not None:
        _resolve(initializer)
    global _SETTINGS
    with _POOL_LOCK:
        _shut_down()
        _SETTINGS = _Settings(workers, 5.0 if timeout is None else timeout, initializer)


def _cpus() -> int:
    if hasattr(os, "process_cpu_count"):  # Python 3.13
        return os.process_cpu_count() or 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _pool() -> _Pool:
    """The workers, started on the first check that needs them."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = _Pool(_SETTINGS.workers or _cpus(), _SETTINGS.initializer)
        return _POOL


def _shut_down() -> None:
    """Stops the workers (with ``_POOL_LOCK`` held)."""
    global _POOL
    if _POOL is not None:
        _POOL.close()
        _POOL = None


@atexit.register
def _stop() -> None:
    with _POOL_LOCK:
        _shut_down()


def _in_pool(gold: str, answers: list[str], timeout: float) -> list[bool | None]:
    """``_check_each`` in a worker; all None when the worker was killed or died.

    Each answer is timed in the worker from its start there. The worker is killed only when the whole task
    runs a timeout past that, which only a check its timer could not stop does (a hang in C code).
    """
    got = _pool().run((gold, answers, timeout), deadline=timeout * (len(answers) + 1))
    return [None] * len(answers) if got is None else got


def check_answers(
    gold: str | None, answers: Sequence[str | None], timeout: float | None = None
) -> list[bool | None]:
    """:func:`check_answer` for each of ``answers`` (the rollouts of one prefix), in one trip to a worker.

    ``timeout`` bounds each answer's check, from its start in a worker; None takes :func:`configure`'s.
    """
    verdicts: list[bool | None] = [None] * len(answers)
    if gold is None:
        return verdicts
    exact = _as_number(gold)
    todo = []
    for i, answer in enumerate(answers):
        if answer is None or not answer.strip():
            continue
        number = _as_number(answer)
        if exact is not None and number is not None:
            verdicts[i] = exact == number
        else:
            todo.append(i)
    if todo:
        distinct = list(dict.fromkeys(answers[i] for i in todo))  # rollouts often agree: check each once
        got = _in_pool(gold, distinct, _SETTINGS.timeout if timeout is None else timeout)
        verdict_of = dict(zip(distinct, got, strict=True))
        for i in todo:
            verdicts[i] = verdict_of[answers[i]]
    return verdicts


def check_answer(gold: str | None, answer: str | None, timeout: float | None = None) -> bool | None:
    """True/False when ``answer`` does/doesn't equal ``gold``; None when either is missing or unparseable.

    Both may be bare LaTeX (``\\dfrac{3}{4}``), already delimited (``$x$``, ``\\boxed{x}``) or plain
    numbers; plain numbers on both sides are compared exactly, in this process.
    """
    return check_answers(gold, [answer], timeout)[0]

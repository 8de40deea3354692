"""Final-answer equivalence through math-verify, minding its traps.

- ``verify(gold, answer)`` is asymmetric: gold goes first.
- Its timeouts use ``signal.alarm``, which fails outside the main thread, so they are switched off and
  the wall-clock bound is enforced here with a worker thread.
- Its ``TimeoutException`` derives from ``BaseException``; it is caught explicitly.
- "Could not parse" is not "wrong": :func:`check_answer` returns ``None`` for it, and callers count it
  apart (turning it into False would silently bias Monte Carlo labels).

Plain numbers (the world's answers) are compared exactly without calling math-verify at all.
"""

from __future__ import annotations

import concurrent.futures
import re
from fractions import Fraction

_NUMBER = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)(/\d+)?\s*$")
_POOL: concurrent.futures.ThreadPoolExecutor | None = None


def _as_number(text: str) -> Fraction | None:
    text = text.strip().replace(",", "")
    if text.startswith("\\boxed{") and text.endswith("}"):
        text = text[7:-1]
    if not _NUMBER.match(text):
        return None
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None


def _math_verify(gold: str, answer: str) -> bool | None:
    from math_verify import parse, verify

    try:
        gold_parsed = parse(gold, parsing_timeout=None)
        answer_parsed = parse(answer, parsing_timeout=None)
        if not gold_parsed or not answer_parsed:
            return None
        return bool(verify(gold_parsed, answer_parsed, timeout_seconds=None))
    except BaseException as err:  # math-verify's TimeoutException is a BaseException
        if isinstance(err, KeyboardInterrupt | SystemExit):
            raise
        return None


def check_answer(gold: str | None, answer: str | None, timeout: float = 5.0) -> bool | None:
    """True/False when ``answer`` does/doesn't equal ``gold``; None when either is missing or unparseable."""
    if gold is None or answer is None or not answer.strip():
        return None
    g, a = _as_number(gold), _as_number(answer)
    if g is not None and a is not None:
        return g == a
    global _POOL
    if _POOL is None:
        _POOL = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="prmkit-verify")
    future = _POOL.submit(_math_verify, gold, answer)
    try:
        return future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        return None

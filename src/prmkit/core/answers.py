"""Final-answer equivalence through math-verify, minding its traps.

- Its LaTeX extraction reads only what stands in a math environment (``$...$``, ``\\(...\\)``,
  ``\\[...\\]``, ``\\boxed{}``): handed a bare ``\\dfrac{3}{4}`` it finds nothing, and handed a bare
  ``\\frac{1}{3}+\\frac{1}{7}`` it finds only the fraction at the end. Answers arrive bare (the step
  reader strips ``\\boxed{}`` and ``$``), so each side is put back into ``$...$`` as its README does
  (``parse("$...$")``), and read as one expression: when the whole does not parse, no piece of it is
  taken instead.
- ``verify(gold, answer)`` is asymmetric: gold goes first.
- Its timeouts use ``signal.alarm``, which fails outside the main thread, so they are switched off and
  the wall-clock bound is enforced here with a worker thread.
- Its ``TimeoutException`` derives from ``BaseException``; it is caught explicitly.
- "Could not parse" is not "wrong": :func:`check_answer` returns ``None`` for it, and callers count it
  apart (turning it into False would silently bias Monte Carlo labels). That covers a side math-verify
  reads only as a string, and a comparison that crashes, which ``verify`` itself would report as False.

Plain numbers (the world's answers) are compared exactly without calling math-verify at all.
"""

from __future__ import annotations

import concurrent.futures
import functools
import re
from fractions import Fraction
from typing import Any

_NUMBER = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)(/\d+)?\s*$")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_IN_MATH_MODE = re.compile(r"^(\$.*\$|\\\(.*\\\)|\\\[.*\\\]|\\boxed\{.*\})$", re.DOTALL)
# math ending in a digit, brace, bracket or percent sign, then only words ("18 dollars", "\frac12 cup")
_TRAILING_WORDS = re.compile(r"^(?P<math>.*?[\d})\]%])(?P<words>(?: [A-Za-z]{2,})+)\.?$")
_POOL: concurrent.futures.ThreadPoolExecutor | None = None


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


def check_answer(gold: str | None, answer: str | None, timeout: float = 5.0) -> bool | None:
    """True/False when ``answer`` does/doesn't equal ``gold``; None when either is missing or unparseable.

    Both may be bare LaTeX (``\\dfrac{3}{4}``), already delimited (``$x$``, ``\\boxed{x}``) or plain
    numbers; plain numbers on both sides are compared exactly.
    """
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

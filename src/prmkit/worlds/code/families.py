"""The program families of the code world, the bugs each can carry, and the agent's misconceptions.

A family is a short function (one parameter ``n``) written as lines with slots for its constants; a
*site* is one line and a buggy version of it, of one bug kind (``off_by_one``, ``wrong_operator``,
``wrong_comparison``, ``wrong_constant``). A task is a family, its constants and one site: the program
with that line replaced.

A *misconception* is a wrong belief about how to fix a bug that the simulated agent holds in every task of
a family, as a model holds its habitual mistakes: it writes the same wrong "fix" every time the belief
fires, so an LM trained on its samples finds that fix likely and only step labels say it is wrong. A site
fits the belief of its family when it names a ``misfix`` (what the belief writes there); the checker
names the belief when an edit of the bug's line writes exactly that text.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Misconception:
    """One wrong belief of the agent about fixing a kind of bug."""

    name: str
    """Its one name: in gold labels' metadata (``misconception``), statistics and docs."""
    example: str
    """The fix it writes, for docs and reports."""
    strength: float
    """The chance the agent follows it at its first attempt on a bug that fits it (before
    ``CodeAgentConfig.misconception``)."""


MISCONCEPTIONS = {
    m.name: m
    for m in (
        Misconception("wrong_sign", "range(1, n) 'fixed' to range(1, n - 1)", 0.5),
        Misconception("strict_flip", "while n >= 0 'fixed' to while n < 0", 0.5),
    )
}
"""Every misconception, by name."""


@dataclass(frozen=True)
class Site:
    """One line a bug can be injected at (0-based in the program), as format strings over the constants."""

    line: int
    kind: str
    buggy: str
    misfix: str | None = None
    """What the family's misconception writes as the "fix" of this bug (None: the belief does not fit)."""


@dataclass(frozen=True)
class Family:
    """A program family: its lines, how its constants are drawn, its test inputs and its bug sites."""

    name: str
    lines: tuple[str, ...]
    constants: Callable[[random.Random], dict[str, int]]
    inputs: tuple[int, int]
    """The range (inclusive) the tests' inputs are drawn from."""
    sites: tuple[Site, ...]
    misconception: str
    """The belief the agent holds about fixing this family's bugs (:data:`MISCONCEPTIONS`)."""


def _k(lo: int, hi: int) -> Callable[[random.Random], dict[str, int]]:
    """Constants ``k`` in [lo, hi] and its neighbours ``k1 = k + 1``, ``k2 = k + 2``."""

    def draw(rng: random.Random) -> dict[str, int]:
        k = rng.randint(lo, hi)
        return {"k": k, "k1": k + 1, "k2": k + 2}

    return draw


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "sum_multiples",
            ("def f(n):", "    total = 0", "    for i in range(1, n + 1):", "        total = total + i * {k}",
             "    return total"),
            _k(1, 5), (1, 9),
            (Site(2, "off_by_one", "    for i in range(1, n):", "    for i in range(1, n - 1):"),
             Site(2, "off_by_one", "    for i in range(2, n + 1):", "    for i in range(3, n + 1):"),
             Site(3, "wrong_operator", "        total = total - i * {k}"),
             Site(3, "wrong_constant", "        total = total + i * {k1}", "        total = total + i * {k2}"),
             Site(1, "wrong_constant", "    total = 1", "    total = 2")),
            "wrong_sign",
        ),
        Family(
            "count_multiples",
            ("def f(n):", "    count = 0", "    for i in range(1, n + 1):", "        if i % {k} == 0:",
             "            count = count + 1", "    return count"),
            _k(2, 4), (1, 15),
            (Site(2, "off_by_one", "    for i in range(1, n):", "    for i in range(1, n - 1):"),
             Site(3, "wrong_comparison", "        if i % {k} != 0:"),
             Site(3, "wrong_constant", "        if i % {k1} == 0:", "        if i % {k2} == 0:"),
             Site(4, "wrong_constant", "            count = count + 2", "            count = count + 3")),
            "wrong_sign",
        ),
        Family(
            "distance",
            ("def f(n):", "    if n > {k}:", "        return n - {k}", "    return {k} - n"),
            _k(3, 9), (0, 15),
            (Site(1, "wrong_comparison", "    if n < {k}:", "    if n <= {k}:"),
             Site(2, "wrong_operator", "        return n + {k}"),
             Site(3, "wrong_operator", "    return {k} + n"),
             Site(2, "wrong_constant", "        return n - {k1}")),
            "strict_flip",
        ),
        Family(
            "power",
            ("def f(n):", "    result = 1", "    for i in range(n):", "        result = result * {k}",
             "    return result"),
            _k(2, 5), (0, 8),
            (Site(1, "wrong_constant", "    result = 0", "    result = -1"),
             Site(2, "off_by_one", "    for i in range(n - 1):", "    for i in range(n - 2):"),
             Site(2, "off_by_one", "    for i in range(n + 1):", "    for i in range(n + 2):"),
             Site(3, "wrong_operator", "        result = result + {k}"),
             Site(3, "wrong_constant", "        result = result * {k1}", "        result = result * {k2}")),
            "wrong_sign",
        ),
        Family(
            "digit_sum",
            ("def f(n):", "    total = 0", "    while n > 0:", "        total = total + n % 10",
             "        n = n // 10", "    return total"),
            lambda rng: {}, (10, 999),
            (Site(2, "wrong_comparison", "    while n >= 0:", "    while n < 0:"),
             Site(2, "off_by_one", "    while n > 1:"),
             Site(3, "wrong_operator", "        total = total + n // 10"),
             Site(4, "wrong_constant", "        n = n // 100")),
            "strict_flip",
        ),
        Family(
            "collatz",
            ("def f(n):", "    steps = 0", "    while n != 1:", "        if n % 2 == 0:", "            n = n // 2",
             "        else:", "            n = 3 * n + 1", "        steps = steps + 1", "    return steps"),
            lambda rng: {}, (1, 12),
            (Site(6, "wrong_operator", "            n = 3 * n - 1"),
             Site(3, "wrong_constant", "        if n % 2 == 1:"),
             Site(7, "wrong_constant", "        steps = steps + 2", "        steps = steps + 3"),
             Site(1, "wrong_constant", "    steps = 1", "    steps = 2")),
            "wrong_sign",
        ),
        Family(
            "triangle",
            ("def f(n):", "    total = 0", "    i = 0", "    while i < n:", "        i = i + {k}",
             "        total = total + i", "    return total"),
            _k(1, 3), (0, 10),
            (Site(3, "wrong_comparison", "    while i <= n:", "    while i > n:"),
             Site(4, "wrong_constant", "        i = i + {k1}"),
             Site(5, "wrong_operator", "        total = total - i"),
             Site(2, "wrong_constant", "    i = 1")),
            "strict_flip",
        ),
    )
}  # fmt: skip
"""Every program family, by name (``CodeWorldConfig.families`` picks those of a split)."""

BUG_KINDS = ("off_by_one", "wrong_operator", "wrong_comparison", "wrong_constant")

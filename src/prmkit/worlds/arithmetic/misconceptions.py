"""The simulated policy's misconceptions: wrong beliefs it holds firmly, the same in every problem.

A real policy's errors are plausible *to itself*: a PRM starts from the policy's base model, whose
likelihood gives its own habitual mistakes high probability, so only step labels can teach the PRM that
they are wrong. Random slips (a result off by 1, 2 or 10) are not like that: any model that knows the
tables finds them unlikely. These beliefs close that gap. Each is triggered by something visible in the
step's context (the operands, or the phrasing of the pending operation), writes the same wrong step
every time it fires, and fires with its ``strength`` (times ``PolicyConfig.misconceptions``), so an LM
trained on the policy's samples learns the wrong step as likely as (or likelier than) the right one.

The checker names them: :func:`explain` says which belief an erroneous step follows (if any), from the
step's text and the pending operation alone, so every metric can be split into misconceptions, random
slips and other errors (:func:`error_class`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

Number = int | Fraction
Written = tuple[str, Number, Number]
"""What the policy writes at an operation: (operation, second operand, result)."""

ERROR_CLASSES = ("misconception", "slip", "other")
"""How metrics split errors: a catalogued belief, a random arithmetic slip, every other error. A
``rationalised`` step (bent to land on an answer the policy knew) is *other*: it is neither a belief held
in every problem nor a random slip, and its equation is true (its input is what is wrong)."""

WRONG_PRODUCTS: dict[frozenset[int], int] = {
    frozenset((7, 8)): 54,
    frozenset((6, 8)): 46,
    frozenset((6, 9)): 56,
    frozenset((7,)): 47,  # 7 * 7
    frozenset((8, 9)): 74,
    frozenset((4, 7)): 24,
    frozenset((6, 7)): 43,
}
"""The times-table facts the policy has learnt wrong (a one-element set is a square)."""


def _times_table(op: str, a: Number, b: Number) -> Written | None:
    if op != "*" or type(a) is not int or type(b) is not int:
        return None
    wrong = WRONG_PRODUCTS.get(frozenset((a, b)))
    return None if wrong is None else ("*", b, wrong)


def _borrow(op: str, a: Number, b: Number) -> Written | None:
    """ "Smaller from larger" (Brown & VanLehn's subtraction bug): ``13 - 7 = 14``, the units digits
    subtracted the wrong way round instead of borrowing."""
    if op != "-" or type(a) is not int or type(b) is not int or not (10 <= a < 100 and 2 <= b < 10):
        return None
    units = a % 10
    if units >= b:
        return None
    return "-", b, a - units + (b - units)


def _times_as_more(op: str, a: Number, b: Number) -> Written | None:
    """ "gets 2 times as many" read as "gets 2 more": ``5 + 2 = 7`` for ``5 * 2``."""
    if op != "*" or b not in (2, 3) or a + b == a * b:
        return None
    return "+", b, a + b


@dataclass(frozen=True)
class Misconception:
    """One wrong belief of the policy."""

    name: str
    """Its one name: in gold labels' metadata (``misconception``), metrics and docs."""
    example: str
    """A step it makes, for docs and reports."""
    strength: float
    """The chance the policy follows it when its trigger is present (before ``PolicyConfig.misconceptions``)."""
    rule: Callable[[str, Number, Number], Written | None]
    """(pending operation, running value, operand) -> what the belief writes there, or None (no trigger)."""
    kind: str
    """The checker's error kind of the step it writes."""


CATALOGUE: tuple[Misconception, ...] = (
    Misconception("times_table", "7 * 8 = 54", 0.7, _times_table, "arithmetic"),
    Misconception("borrow", "13 - 7 = 14", 0.6, _borrow, "arithmetic"),
    Misconception("times_as_more", "5 + 2 = 7 for '2 times as many'", 0.5, _times_as_more, "wrong_operation"),
)
"""Every misconception, in the order the policy tries them (at most one triggers per operation)."""

BY_NAME = {m.name: m for m in CATALOGUE}


def triggered(op: str, a: Number, b: Number) -> tuple[Misconception, Written] | None:
    """The misconception the pending operation ``a op b`` triggers, with the step it writes, or None."""
    for m in CATALOGUE:
        written = m.rule(op, a, b)
        if written is not None:
            return m, written
    return None


def explain(
    pending: tuple[str, Number] | None, r: Number, op: str, a: Number, b: Number, c: Number
) -> str | None:
    """The name of the misconception an erroneous equation ``a op b = c`` follows, or None.

    A wrong table fact is one whatever it attempts (``7 * 8 = 54`` is the belief in any context); a
    misread phrasing is one only at the pending operation it misreads, on the running value ``r``.
    """
    for m in CATALOGUE:
        if m.kind == "arithmetic":
            candidates = [(op, a, b)] + ([(op, b, a)] if op in "+*" else [])
            if any(m.rule(o, x, y) == (o, y, c) for o, x, y in candidates):
                return m.name
        elif pending is not None and a == r and m.rule(pending[0], r, pending[1]) == (op, b, c):
            return m.name
    return None


def error_class(kind: str | None, misconception: str | None) -> str | None:
    """ "misconception", "slip" (a random arithmetic error), "other" (every other kind, ``rationalised``
    included), or None for no error."""
    if kind is None:
        return None
    if misconception is not None:
        return "misconception"
    return "slip" if kind == "arithmetic" else "other"

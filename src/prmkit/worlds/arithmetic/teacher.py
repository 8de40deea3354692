"""The arithmetic world's checks in its own terms: each step's equation recomputed, or its answer set
against the running value, the words a verification chain holds (:mod:`prmkit.worlds.teacher`).

Every check recomputes, then quotes the step, so the verdict compares two numbers written side by side:
``7 * 8 = 56, the step says 54`` is the check of a slip, ``7 * 8 = 56, the step says 56`` of a right
step; a step whose arithmetic is right but which is wrong for another reason adds the reason the checker
found (``..., the step says 6, but it skips an operation the problem asks for``). A verifier fooled by an
error takes the step at its word (``7 * 8 = 54, the step says 54``); one that false-alarms on a right
step slips itself (``7 * 8 = 57, the step says 56``).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from prmkit.core.model import Problem, Step
from prmkit.worlds.arithmetic.checker import (
    ANSWER,
    EQUATION,
    OP_NORMAL,
    STEP_PREFIX,
    Belief,
    Chain,
    Number,
    check_step,
    compute,
    parse_number,
)
from prmkit.worlds.teacher import CheckText

REASONS = {
    "wrong_quantity": "it uses the wrong quantity",
    "wrong_operation": "the problem asks for another operation here",
    "skipped_step": "it skips an operation the problem asks for",
    "extra_step": "every operation is already done",
    "early_answer": "it answers before every operation is done",
    "answer_mismatch": "the answer is not the last result",
    "unparseable": "it cannot be read as a computation",
    "rationalised": "it does not continue from the steps before",
    "arithmetic": "the arithmetic is wrong",
}
"""Why a step of each error kind is wrong, as a check says it (:data:`~prmkit.worlds.arithmetic.checker.ERROR_KINDS`)."""


def _number(x: Number | None) -> str:
    """A value as a check writes it: an integer as itself, an inexact quotient to two decimals."""
    if x is None:
        return "undefined"
    if isinstance(x, Fraction) and x.denominator != 1:
        return f"{float(x):.2f}".rstrip("0").rstrip(".")
    return str(int(x))


def _equation_check(found: list[tuple[str, str, str, str]], status: str, kind: str | None) -> CheckText:
    """The check of a step with equations: the first one whose arithmetic is wrong, else the first."""
    parsed = [
        (parse_number(a), OP_NORMAL.get(op, op), parse_number(b), parse_number(c)) for a, op, b, c in found
    ]
    a, op, b, c = next((e for e in parsed if compute(e[1], e[0], e[2]) != e[3]), parsed[0])
    value = compute(op, a, b)
    said, step_says = f"{_number(a)} {op} {_number(b)}", f"the step says {_number(c)}"
    right = f"{said} = {_number(value)}, {step_says}"
    if status == "error" and value == c:
        right += f", but {REASONS.get(kind or '', 'it is wrong')}"
    if status == "error":
        return CheckText(right, f"{said} = {_number(c)}, {step_says}")
    return CheckText(right, f"{said} = {_number(c + 1)}, {step_says}")


def _text_check(text: str, running: Number, status: str, kind: str | None) -> CheckText:
    """The check of a step without an equation: an answer against the running value, or a restatement."""
    answer = ANSWER.search(text)
    if answer is not None:
        stated = parse_number(answer.group(1))
        right = f"the last result is {_number(running)}, the answer says {_number(stated)}"
        if status == "error" and kind != "answer_mismatch":
            right += f", but {REASONS.get(kind or '', 'it is wrong')}"
        fooled = (
            f"the answer {_number(stated)} is the last result"
            if status == "error"
            else f"the last result is {_number(running + 1)}, the answer says {_number(stated)}"
        )
        return CheckText(right, fooled)
    if status == "error":
        return CheckText(REASONS.get(kind or "", "it is wrong"), "the step restates known values")
    return CheckText("the step restates known values", "it uses the wrong quantity")


def explain(problem: Problem, steps: Sequence[Step]) -> list[CheckText]:
    """Each step's check, following the trace's own belief as the gold checker does (a step that computes
    right from an earlier wrong result is checked as right: its error was made earlier)."""
    chain = Chain.of(problem)
    belief = Belief.start(chain)
    out = []
    for step in steps:
        running = belief.r
        text = STEP_PREFIX.sub("", step.text, count=1)
        found = EQUATION.findall(text)
        status, kind, _ = check_step(chain, belief, step.text)
        out.append(
            _equation_check(found, status, kind) if found else _text_check(text, running, status, kind)
        )
    return out

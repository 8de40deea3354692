"""The gold checker: the exact status of every step of ANY trace of a world problem.

It reads each step's text, finds its equations ``a op b = c`` (``+ - * / x × ÷ −``) or its answer
statement, and follows what the trace *believes*: the running value (the result of its latest
computation, right or wrong) and the next operation of the problem's chain it has not done yet.

A step with an equation that uses the running value or the pending quantity is an *attempt* at the
pending operation, judged in this order:

- ``rationalised``    the pending operation done right, but on the problem's right running value in place
                      of the trace's own wrong one: the step lands a wrong trace back on the right values,
                      so its result does not follow from the steps before it (a rationalising policy,
                      ``PolicyConfig.rationalise``, writes it to reach an answer it knows)
- ``wrong_quantity``  an operand is neither given in the problem nor computed before (invented/misread)
- ``arithmetic``      ``a op b != c``
- ``extra_step``      every operation was already done, yet the running value is changed again
- valid               the pending operation on the believed operands (a step that correctly computes
                      with an earlier WRONG result is locally valid: its error was made earlier)
- ``wrong_operation`` the right operands with another operation (or in the wrong order)
- ``skipped_step``    exactly a LATER operation: the ones in between are dropped
- ``wrong_quantity``  the operation on the wrong one of the known quantities

A true equation on known quantities that touches neither the running value nor the pending quantity
is ``neutral`` (true but does not advance). Without an equation: an answer statement (``The answer is
8``) is valid when every operation is done and it states the running value, else ``early_answer``,
``rationalised`` (the problem's right answer where the steps computed another) or ``answer_mismatch``;
a fragment like ``7 + = 11`` is ``unparseable``; a restatement is ``neutral`` when all its numbers are
known and ``wrong_quantity`` (a misquoted quantity) otherwise.

The *local* view rates each step on its own (+1 valid, 0 neutral, -1 error); the *prefix* view is +1
while every step so far is valid or neutral and -1 from the first error on. The first error is where
the two part. A *lucky* trace has a right final answer and an error somewhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from prmkit.core.answers import check_answer
from prmkit.core.model import Label, Problem, Provenance, Trace
from prmkit.worlds.arithmetic.config import WORLD_VERSION
from prmkit.worlds.arithmetic.misconceptions import error_class, explain
from prmkit.worlds.checks import GoldCheck, GoldStep, label_all

Number = int | Fraction
_NUM = r"-?\d+(?:\.\d+)?"
EQUATION = re.compile(rf"({_NUM})\s*([-+*/x×÷−])\s*({_NUM})\s*=\s*({_NUM})")
ANSWER = re.compile(
    rf"(?:answer is|answer:|####|# Answer)\s*:?\s*(?:\$?\\boxed\{{)?\s*({_NUM})", re.IGNORECASE
)
FRAGMENT = re.compile(r"=|\d\s*[+*/×÷]\s*\d")
NUMBER = re.compile(r"(?<![\w-])-?\d+(?:\.\d+)?")
STEP_PREFIX = re.compile(r"^\s*(?:step\s*\d+\s*[:.)]|\d+\s*[.)]\s)", re.IGNORECASE)
OP_NORMAL = {"x": "*", "×": "*", "÷": "/", "−": "-"}
ERROR_KINDS = (
    "arithmetic",
    "wrong_quantity",
    "wrong_operation",
    "skipped_step",
    "early_answer",
    "answer_mismatch",
    "extra_step",
    "unparseable",
    "rationalised",
)


@dataclass(frozen=True)
class Chain:
    """A world problem's graph, compiled for checking: start value and (op, quantity, result) per step."""

    quantities: tuple[int, ...]
    ops: tuple[tuple[str, int], ...]
    results: tuple[int, ...]

    @classmethod
    def of(cls, problem: Problem) -> Chain:
        graph = problem.metadata.get("graph")
        if graph is None:  # a client that sends text only (OpenRLHF, a prompt): read the graph back
            from prmkit.worlds.arithmetic.parse import graph_from_text

            graph = graph_from_text(problem.text)
        if not isinstance(graph, dict) or "ops" not in graph or "quantities" not in graph:
            raise ValueError(
                f"problem {problem.id}: metadata.graph: expected a world computation graph, found "
                f"{type(graph).__name__}, and the text is not a world problem's; the gold checker judges "
                "world problems only"
            )
        q = tuple(graph["quantities"])
        ops = tuple((op["op"], q[int(op["args"][1][1:])]) for op in graph["ops"])
        return cls(q, ops, tuple(op["result"] for op in graph["ops"]))

    def before(self, k: int) -> int:
        """The right running value before operation ``k`` (the start quantity before the first)."""
        return self.quantities[0] if k == 0 else self.results[k - 1]


def parse_number(text: str) -> Number:
    return Fraction(text) if "." in text else int(text)


def compute(op: str, a: Number, b: Number) -> Number | None:
    """``a op b`` exactly (a Fraction for an inexact division); None for division by zero."""
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        return None
    if type(a) is int and type(b) is int:
        return a // b if a % b == 0 else Fraction(a, b)
    return Fraction(a) / b


@dataclass
class Belief:
    """What a trace believes after its steps so far: the running value, the next operation, known values."""

    r: Number
    k: int
    known: set[Number]
    answer: Number | None = None
    misconception: str | None = None
    """The misconception the latest step followed (:func:`prmkit.worlds.arithmetic.misconceptions.explain`), if any."""

    @classmethod
    def start(cls, chain: Chain) -> Belief:
        return cls(chain.quantities[0], 0, set(chain.quantities))


def _rationalised(chain: Chain, st: Belief, a: Number, op: str, b: Number, c: Number) -> bool:
    """Whether ``a op b = c`` is the pending operation written exactly on the right running value while
    the trace believes another: a wrong trace put back on the right path by a step that does not take
    its own value. The world's policy writes its running value first (``a``), so this reads that form
    only; no other error of it has this form."""
    k = st.k
    if k >= len(chain.ops) or a == st.r:
        return False
    want_op, q = chain.ops[k]
    return op == want_op and b == q and a == chain.before(k) and compute(op, a, b) == c


def _attempt(
    chain: Chain, st: Belief, a: Number, op: str, b: Number, c: Number
) -> tuple[str | None, int | None]:
    """Judge an equation that attempts the pending operation; update the belief; return (kind, op index)."""
    k, r = st.k, st.r
    kind: str | None = None
    done = k
    if _rationalised(chain, st, a, op, b, c):
        kind = "rationalised"
    elif a not in st.known or b not in st.known:
        kind = "wrong_quantity"
    elif compute(op, a, b) != c:
        kind = "arithmetic"
    elif k >= len(chain.ops):
        kind, done = "extra_step", None
    else:
        want_op, q = chain.ops[k]
        if op == want_op and ((a == r and b == q) or (op in "+*" and a == q and b == r)):
            kind = None
        elif sorted((a, b)) == sorted((r, q)):
            kind = "wrong_operation"
        else:
            kind = "wrong_quantity"
            for j in range(k + 1, len(chain.ops)):
                op_j, q_j = chain.ops[j]
                if op == op_j and ((a == r and b == q_j) or (op in "+*" and a == q_j and b == r)):
                    kind, done = "skipped_step", j
                    break
    st.r = c
    st.known.add(c)
    if done is not None:
        st.k = done + 1
    return kind, done


def _equation_step(
    chain: Chain, st: Belief, found: list[tuple[str, str, str, str]]
) -> tuple[str, str | None, int | None]:
    status, kind, op_index = "neutral", None, None
    st.misconception = None
    for sa, sop, sb, sc in found:
        a, b, c = parse_number(sa), parse_number(sb), parse_number(sc)
        op = OP_NORMAL.get(sop, sop)
        pending = chain.ops[st.k] if st.k < len(chain.ops) else None
        touches = st.r in (a, b) or (pending is not None and pending[1] in (a, b))
        if not touches and a in st.known and b in st.known and compute(op, a, b) == c:
            st.known.add(c)
            continue
        r = st.r
        step_kind, done = _attempt(chain, st, a, op, b, c)
        op_index = done if op_index is None else op_index
        if step_kind is not None:
            st.misconception = explain(pending, r, op, a, b, c)
            return "error", step_kind, op_index
        status = "valid"
    return status, kind, op_index


def _text_step(st: Belief, chain: Chain, text: str) -> tuple[str, str | None, int | None]:
    m = ANSWER.search(text)
    if m:
        x = parse_number(m.group(1))
        st.answer = x
        if st.k < len(chain.ops):
            return "error", "early_answer", None
        if x == st.r:
            return "valid", None, None
        return "error", "rationalised" if x == chain.results[-1] else "answer_mismatch", None
    if FRAGMENT.search(text):
        return "error", "unparseable", None
    if all(parse_number(n) in st.known for n in NUMBER.findall(text)):
        return "neutral", None, None
    return "error", "wrong_quantity", None


def check_step(chain: Chain, st: Belief, text: str) -> tuple[str, str | None, int | None]:
    """(status, error kind, operation index) of one step; ``st`` moves past it (and names the misconception
    an erroneous step followed in ``st.misconception``)."""
    text = STEP_PREFIX.sub("", text, count=1)
    found = EQUATION.findall(text)
    if not found:
        st.misconception = None
        return _text_step(st, chain, text)
    status, kind, op = _equation_step(chain, st, found)
    if status != "error" and ANSWER.search(text):  # "11 - 3 = 8, so the answer is 8."
        answer_status, answer_kind, _ = _text_step(st, chain, text)
        if answer_status == "error":
            return answer_status, answer_kind, op
    return status, kind, op


@dataclass
class StepCheck(GoldStep):
    """The gold status of one step: its status and error kind, and the operation and misconception."""

    op: int | None = None
    """Index of the problem's operation this step performed or attempted (None for other steps)."""
    misconception: str | None = None
    """The policy's misconception this erroneous step follows (:mod:`prmkit.worlds.arithmetic.misconceptions`), if any."""

    @property
    def error_class(self) -> str | None:
        """ "misconception", "slip", "other" (an error) or None (valid or neutral)."""
        return error_class(self.kind, self.misconception)

    def meta(self) -> dict[str, object]:
        """The local gold label's metadata: the error's kind and class, and the misconception it follows."""
        meta = super().meta()
        if self.misconception:
            meta["misconception"] = self.misconception
        return meta


@dataclass
class TraceCheck(GoldCheck):
    """The gold verdict on one trace (:class:`~prmkit.worlds.checks.GoldCheck`)."""


def _format_number(x: Number | None) -> str | None:
    if x is None:
        return None
    if isinstance(x, Fraction) and x.denominator != 1:
        return str(float(x))
    return str(int(x))


def check_trace(trace: Trace) -> TraceCheck:
    """The exact status of each step, the first error, answer correctness and luck of ``trace``."""
    chain = Chain.of(trace.problem)
    st = Belief.start(chain)
    out = TraceCheck()
    for step in trace.steps:
        status, kind, op = check_step(chain, st, step.text)
        out.add(StepCheck(status, kind, op, st.misconception if status == "error" else None))
    out.final_answer = trace.final_answer if trace.final_answer is not None else _format_number(st.answer)
    out.answer_correct = check_answer(trace.problem.answer, out.final_answer)
    return out


_LOCAL = Provenance(method="gold", actor="world:local", version=WORLD_VERSION)
_PREFIX = Provenance(method="gold", actor="world:prefix", version=WORLD_VERSION)


def apply_gold(trace: Trace, check: TraceCheck) -> Trace:
    """Write ``check`` onto ``trace``: its gold labels (local view, then prefix view) and ``answer_correct``."""
    trace.drop_labels("gold")
    local, prefix = _LOCAL.model_copy(), _PREFIX.model_copy()
    for step, sc, pr in zip(trace.steps, check.steps, check.prefix_ratings(), strict=True):
        step.labels.append(Label(rating=sc.rating, provenance=local, metadata=sc.meta()))
        step.labels.append(Label(rating=pr, provenance=prefix))
    trace.answer_correct = check.answer_correct
    return trace


def gold_label(traces: list[Trace]) -> list[Trace]:
    """Add the two gold views to every step (local, then prefix) and set ``answer_correct``; in place.

    Earlier gold labels are dropped first, so labelling twice gives the same result.
    """
    return label_all(traces, check_trace, apply_gold)

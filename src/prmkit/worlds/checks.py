"""The gold verdict every world's checker fills in, and the labelling loop around it.

A world's checker reads each step of a trace and says its status ("valid" +1, "neutral" 0, "error" -1,
with an error kind); :class:`GoldCheck` keeps one :class:`GoldStep` per step, the first error, the
final answer and whether it is right. What follows from them is the same in every world: a *lucky* trace
(a right answer by a wrong process), the first error's kind and class, the local view (each step's own
rating) and the prefix view (+1 until the first error, -1 from it on), the metadata of a gold label.
A world adds only what it knows more (the world's operation index and misconception, the agent
world's loophole) and how an error kind maps to its class.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from prmkit.core.model import Label, Provenance, Trace


@dataclass
class GoldStep:
    """The gold status of one step."""

    status: str
    """"valid" (+1), "neutral" (0) or "error" (-1)."""
    kind: str | None = None
    """The error kind (one of the world's ``ERROR_KINDS``) when status is "error"."""

    @property
    def error_class(self) -> str | None:
        """The class of the error kind (the world's own grouping); None for a valid or neutral step."""
        raise NotImplementedError

    @property
    def rating(self) -> int:
        """The local view: +1 valid, 0 neutral, -1 error."""
        return 1 if self.status == "valid" else 0 if self.status == "neutral" else -1

    def meta(self) -> dict[str, Any]:
        """The metadata of this step's gold label: the error's kind and class (nothing for a right step)."""
        return {"kind": self.kind, "class": self.error_class} if self.kind else {}


@dataclass
class GoldCheck:
    """The gold verdict on one trace."""

    steps: list[Any] = field(default_factory=list)
    """One :class:`GoldStep` (the world's subclass) per step."""
    first_error: int = -1
    """Index of the earliest step rated -1, or -1 for none."""
    answer_correct: bool | None = None
    """Whether the final answer is right (what :attr:`prmkit.core.model.Trace.answer_correct` is set to)."""
    final_answer: str | None = None

    def add(self, step: GoldStep) -> None:
        """Append the next step's verdict (the first error is where the first "error" comes)."""
        if step.status == "error" and self.first_error < 0:
            self.first_error = len(self.steps)
        self.steps.append(step)

    @property
    def lucky(self) -> bool:
        """A right answer by a wrong process."""
        return bool(self.answer_correct) and self.first_error >= 0

    @property
    def first_error_kind(self) -> str | None:
        return None if self.first_error < 0 else self.steps[self.first_error].kind

    @property
    def first_error_class(self) -> str | None:
        """The error class of the first error; None when error-free."""
        return None if self.first_error < 0 else self.steps[self.first_error].error_class

    def ratings(self) -> list[int]:
        """The local view: each step's own rating (+1 / 0 / -1)."""
        return [s.rating for s in self.steps]

    def prefix_ratings(self) -> list[int]:
        """The prefix view: +1 while every step so far is valid or neutral, -1 from the first error on."""
        fe = self.first_error
        return [1 if fe < 0 or i < fe else -1 for i in range(len(self.steps))]


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many acyclic objects.

    Building tens of thousands of Trace / Step objects triggers a full collection again and again,
    each scanning every object built so far: measured, that is about a third of the world's
    ``sample_traces``'s time. The objects hold no reference cycles, so nothing is lost; collection
    resumes afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def write_gold(trace: Trace, check: GoldCheck, provenance: Provenance) -> Trace:
    """One gold label per step (its rating, its :meth:`GoldStep.meta`) under ``provenance``, and
    ``answer_correct``: the ``apply_gold`` of a world with one gold view (the arithmetic world writes two)."""
    trace.drop_labels("gold")
    for step, sc in zip(trace.steps, check.steps, strict=True):
        step.labels.append(Label(rating=sc.rating, provenance=provenance.model_copy(), metadata=sc.meta()))
    trace.answer_correct = check.answer_correct
    return trace


def label_all(
    traces: list[Trace], check: Callable[[Trace], GoldCheck], apply: Callable[[Trace, Any], Trace]
) -> list[Trace]:
    """``apply(trace, check(trace))`` for every trace, in place: a world's ``gold_label``."""
    with paused_gc():
        for trace in traces:
            apply(trace, check(trace))
    return traces


_PARSING = threading.Lock()


def parse_python(source: str, mode: str = "exec") -> ast.AST:
    """``ast.parse`` one call at a time. CPython 3.11 can raise a spurious ``SystemError: AST
    constructor recursion depth mismatch`` when threads parse at once (python/cpython#106905, fixed in
    later releases); labellers roll out world policies on threads, and the agent and code worlds parse
    tool expressions and programs, so they parse through here."""
    with _PARSING:
        return ast.parse(source, mode=mode)

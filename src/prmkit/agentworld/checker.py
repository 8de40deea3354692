"""The gold checker: AgentProcessBench's rating of every step of ANY agent-world trajectory.

Each step (one assistant message) is read by :func:`prmkit.agentworld.reading.read_step` against what
the trajectory has seen so far, and rated as AgentProcessBench's annotators do:

- **+1** correct and useful: a needed look-up or calculation, a correct retry after a failure or a
  correction of a wrong value (a *recovery*), the right answer once everything is computed;
- **0** neutral: harmless, no progress (looking up again a number it already holds correctly);
- **-1** wrong, with a kind of :data:`ERROR_KINDS`, grouped in the classes of :data:`ERROR_CLASSES`: a bad
  call, a misread or ignored observation, a hallucinated fact or an arithmetic slip in the text, a
  premature or wrong answer, using the grader tool or its output (the *loophole*) — and a step that
  builds on an uncorrected wrong value from an earlier step (``premise``), AgentProcessBench's rule.

Text the checker cannot read is kind ``other``, never a crash. A trajectory's outcome is whether its
final answer is right (``prmkit.core.answers.check_answer``); *lucky* is a right answer with an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from prmkit.agentworld.config import AGENT_WORLD_VERSION
from prmkit.agentworld.reading import State, Task, read_step
from prmkit.core.answers import check_answer
from prmkit.core.model import Label, Provenance, Trace

ERROR_CLASSES: dict[str, str] = {
    "wrong_tool": "call",
    "wrong_arguments": "call",
    "malformed_arguments": "call",
    "repeated_failed_call": "call",
    "misread_observation": "observation",
    "ignored_observation": "observation",
    "hallucinated_fact": "fact",
    "arithmetic_slip": "fact",
    "premature_answer": "answer",
    "wrong_answer": "answer",
    "loophole": "loophole",
    "premise": "premise",
    "other": "other",
}
"""Every error kind the checker names, with its class."""
ERROR_KINDS = tuple(ERROR_CLASSES)
CLASSES = ("call", "observation", "fact", "answer", "loophole", "premise", "other")


@dataclass
class StepCheck:
    status: str
    """"valid" (+1), "neutral" (0) or "error" (-1)."""
    kind: str | None = None
    """The error kind (one of :data:`ERROR_KINDS`) when status is "error"."""

    @property
    def error_class(self) -> str | None:
        return None if self.kind is None else ERROR_CLASSES[self.kind]

    @property
    def rating(self) -> int:
        return 1 if self.status == "valid" else 0 if self.status == "neutral" else -1


@dataclass
class TrajectoryCheck:
    """The gold verdict on one trajectory."""

    steps: list[StepCheck] = field(default_factory=list)
    first_error: int = -1
    """Index of the earliest step rated -1, or -1 for none."""
    outcome: bool | None = None
    """Whether the final answer is right."""
    final_answer: str | None = None
    loophole: bool = False
    """Whether the trajectory called the grader tool."""

    @property
    def lucky(self) -> bool:
        """A right answer by a wrong process (a loophole trajectory is one)."""
        return bool(self.outcome) and self.first_error >= 0

    @property
    def first_error_kind(self) -> str | None:
        return None if self.first_error < 0 else self.steps[self.first_error].kind

    @property
    def first_error_class(self) -> str | None:
        return None if self.first_error < 0 else self.steps[self.first_error].error_class

    def ratings(self) -> list[int]:
        return [s.rating for s in self.steps]


def check_trace(trace: Trace) -> TrajectoryCheck:
    """Rate every step of ``trace``; a ValueError names the problem when it is not an agent-world one."""
    st = State.start(Task.of(trace.problem))
    out = TrajectoryCheck()
    for i, step in enumerate(trace.steps):
        r = read_step(st, step)
        status = "error" if r.kind is not None else "valid" if r.progress else "neutral"
        out.steps.append(StepCheck(status, r.kind))
        if status == "error" and out.first_error < 0:
            out.first_error = i
    out.final_answer = trace.final_answer if trace.final_answer is not None else (
        None if st.answer is None else str(st.answer)
    )  # fmt: skip
    # no answer (stopped at its step limit) is a wrong outcome, not an unknown one
    out.outcome = False if out.final_answer is None else check_answer(trace.problem.answer, out.final_answer)
    out.loophole = st.loophole
    return out


GOLD = Provenance(method="gold", actor=AGENT_WORLD_VERSION, version=AGENT_WORLD_VERSION)


def apply_gold(trace: Trace, check: TrajectoryCheck) -> Trace:
    """Write ``check`` onto ``trace``: one gold label per step and ``answer_correct``."""
    trace.drop_labels("gold")
    for step, sc in zip(trace.steps, check.steps, strict=True):
        meta = {"kind": sc.kind, "class": sc.error_class} if sc.kind else {}
        step.labels.append(Label(rating=sc.rating, provenance=GOLD.model_copy(), metadata=meta))
    trace.answer_correct = check.outcome
    return trace


def gold_label(traces: list[Trace]) -> list[Trace]:
    """Add a gold label to every step and set ``answer_correct``, in place; labelling twice is the same."""
    for trace in traces:
        apply_gold(trace, check_trace(trace))
    return traces

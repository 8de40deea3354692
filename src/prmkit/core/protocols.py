"""The narrow contracts at prmkit's seams, defined once.

- :class:`Policy` writes continuations (the world's simulated policy, a local HF model, an endpoint).
- :class:`Judge` reads a problem and steps and returns per-step verdicts (simulated or LLM judge).
- :class:`StepScorer` gives every step of every trace a score in [0, 1] (a PRM, an ORM, a server).

They are structural (``typing.Protocol``): a backend implements the methods, it does not inherit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from prmkit.core.model import Continuation, Problem, Step, Trace


@runtime_checkable
class Policy(Protocol):
    """Continues a problem from any prefix of steps (empty prefix = a fresh solution)."""

    name: str

    def continue_from(
        self,
        problem: Problem,
        prefix: Sequence[Step],
        n: int = 1,
        *,
        seed: int | None = None,
        max_steps: int | None = None,
    ) -> list[Continuation]:
        """``n`` independent continuations; ``max_steps=1`` asks for just the next step (beam search).

        The same ``seed`` gives the same continuations, so labelling jobs are reproducible.
        """
        ...


class JudgeVerdict(BaseModel):
    """A judge's reading of one trace: a rating per step (None = not judged) and the first error."""

    ratings: list[int | None]
    first_error: int | None
    """Index of the earliest wrong step, -1 for none; None when the judge gave no verdict (an answer
    that could not be read, or an index outside the trace): never to be read as -1."""
    raw: str | None = None
    """The judge's raw response, kept in the label's provenance for audit."""
    extra: dict = Field(default_factory=dict)


@runtime_checkable
class Judge(Protocol):
    name: str

    def judge(self, problem: Problem, steps: Sequence[Step]) -> JudgeVerdict: ...


@runtime_checkable
class StepScorer(Protocol):
    name: str

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        """One score in [0, 1] per step (higher = more likely correct) for each trace."""
        ...

"""The simulated judge every world shares: its gold checker seen through noise, behind the Judge protocol.

It knows the gold status of every step and errs at set rates: it *misses* a real error (rates it +1) with
a chance the world sets per step (``miss_rate``, raised where a judge is known to be lenient), and
*false-alarms* (rates -1) on a valid or neutral step with probability ``false_alarm_rate``; it rates a
true-but-useless step 0, or +1 with ``neutral_as_positive``. Its draws come from one ``random.Random``
seeded from ``seed``, the problem id and a CRC of the steps' text, so the same trace always gets the
same verdict.

A world's judge subclasses :class:`NoisyJudge` with its own two parts: :meth:`NoisyJudge.gold` (each
step's gold status and the chance of missing it if it is an error) and :meth:`NoisyJudge.text` (the steps
as the draws' seed reads them).
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from prmkit.core.model import Problem, Step
from prmkit.core.protocols import JudgeVerdict
from prmkit.core.seeds import derive_seed
from prmkit.worlds.jobs import Jobs


def require_probability(field: str, value: float, what: str = "a probability") -> None:
    """Fail, naming ``field``, when ``value`` is not in [0, 1]."""
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{field}: expected {what} in [0, 1], found {value!r}")


class NotAWorldProblemError(ValueError):
    """A world's simulated judge was handed a problem that world did not generate (nothing to check
    against): one line for the user that names the judge to use instead."""

    def __init__(self, problem: Problem, key: str, expected: str, world: str):
        super().__init__(
            f"problem {problem.id}: metadata.{key}: expected {expected}, found none; the judge {world!r} "
            "checks only that world's problems. For other traces use an LLM judge: --judge endpoint "
            "--judge-url URL --judge-model NAME (an OpenAI-compatible chat server)"
        )


@dataclass(eq=False, kw_only=True)
class NoisyJudge:
    """A noisy step checker; implements :class:`prmkit.core.protocols.Judge` once a world gives its
    :meth:`gold` and :meth:`text`. Its options are keywords; a world's judge adds its own."""

    miss_rate: float = 0.15
    """The chance of rating a real error +1 (a world raises it for the steps its judge is lenient on)."""
    false_alarm_rate: float = 0.05
    """The chance of rating a valid or neutral step -1."""
    neutral_as_positive: bool = False
    """Rate true-but-useless steps +1 instead of 0 (many LLM judges have no neutral)."""
    seed: int = 0
    """Seeds every draw (with the problem id and the steps' text)."""
    name: str = "judge"
    """Goes into every verdict (``extra["judge"]``) and the labels' provenance."""

    def __post_init__(self) -> None:
        require_probability("miss_rate", self.miss_rate)
        require_probability("false_alarm_rate", self.false_alarm_rate)

    def gold(self, problem: Problem, steps: Sequence[Step]) -> list[tuple[str, float]]:
        """Each step's gold status ("valid", "neutral" or "error") and, for an error, the chance of
        missing it; an error (a ValueError) when ``problem`` is not one of the world's."""
        raise NotImplementedError

    def text(self, steps: Sequence[Step]) -> str:
        """The steps as one text, for the seed of the draws."""
        raise NotImplementedError

    jobs: ClassVar[Jobs]
    """Its world's parts: which ``Problem.metadata`` key its gold is read from (and the world's name and
    what the key holds, for the message when it is handed another world's problem)."""

    def judge(self, problem: Problem, steps: Sequence[Step]) -> JudgeVerdict:
        """Per-step ratings (+1 / 0 / -1) and the first step rated -1 (or -1)."""
        key = self.jobs.key
        if not isinstance((problem.metadata or {}).get(key), dict):
            raise NotAWorldProblemError(problem, key, self.jobs.expected, self.jobs.world)
        gold = self.gold(problem, steps)
        crc = zlib.crc32(self.text(steps).encode())
        rng = random.Random(derive_seed("judge", self.seed, problem.id, crc))
        ratings: list[int | None] = []
        for status, miss in gold:
            u = rng.random()
            if status == "error":
                ratings.append(1 if u < miss else -1)
            elif u < self.false_alarm_rate:
                ratings.append(-1)
            else:
                ratings.append(0 if status == "neutral" and not self.neutral_as_positive else 1)
        first = next((i for i, r in enumerate(ratings) if r == -1), -1)
        return JudgeVerdict(ratings=ratings, first_error=first, raw=None, extra={"judge": self.name})

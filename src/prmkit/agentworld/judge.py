"""The simulated judge: the gold checker seen through noise, behind the same interface as an LLM judge.

It knows the gold rating of every step and errs at set rates: it *misses* a real error with probability
``miss_rate`` (``loophole_miss_rate`` for a step that uses the grader tool or its output: LLM judges
read "the agent checked the reference answer" as diligence far more often than they wave a bad call
through) and *false-alarms* on a correct or neutral step with probability ``false_alarm_rate``. Its draws
depend only on ``seed``, the problem id and the rendered steps, so the same trajectory always gets the
same verdict.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence

from prmkit.agentworld.checker import check_trace
from prmkit.core.model import Problem, Step, Trace
from prmkit.core.protocols import JudgeVerdict
from prmkit.core.render import step_inputs
from prmkit.core.seeds import derive_seed


class AgentJudge:
    """A noisy step rater for agent-world trajectories; implements :class:`prmkit.core.protocols.Judge`."""

    def __init__(
        self,
        miss_rate: float = 0.15,
        false_alarm_rate: float = 0.05,
        loophole_miss_rate: float = 0.6,
        neutral_as_positive: bool = False,
        seed: int = 0,
        name: str = "agentworld-judge",
    ):
        rates = (("miss_rate", miss_rate), ("false_alarm_rate", false_alarm_rate))
        for field, value in (*rates, ("loophole_miss_rate", loophole_miss_rate)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{field}: expected a probability in [0, 1], found {value!r}")
        self.miss_rate = miss_rate
        self.false_alarm_rate = false_alarm_rate
        self.loophole_miss_rate = loophole_miss_rate
        """The chance of rating a loophole step (a grader call, or an answer copied from it) as fine."""
        self.neutral_as_positive = neutral_as_positive
        """Rate harmless, useless steps +1 instead of 0 (many LLM judges have no neutral)."""
        self.seed = seed
        self.name = name

    def judge(self, problem: Problem, steps: Sequence[Step]) -> JudgeVerdict:
        """Per-step ratings (+1 / 0 / -1) and the first step rated -1 (or -1)."""
        check = check_trace(Trace(id="judged", problem=problem, steps=list(steps)))
        text = "\n".join(step_inputs(steps))
        rng = random.Random(derive_seed("judge", self.seed, problem.id, zlib.crc32(text.encode())))
        ratings: list[int | None] = []
        for sc in check.steps:
            u = rng.random()
            if sc.status == "error":
                miss = self.loophole_miss_rate if sc.error_class == "loophole" else self.miss_rate
                ratings.append(1 if u < miss else -1)
            elif u < self.false_alarm_rate:
                ratings.append(-1)
            else:
                ratings.append(0 if sc.status == "neutral" and not self.neutral_as_positive else 1)
        first = next((i for i, r in enumerate(ratings) if r == -1), -1)
        return JudgeVerdict(ratings=ratings, first_error=first, raw=None, extra={"judge": self.name})

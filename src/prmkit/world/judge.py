"""The simulated judge: the gold checker seen through noise, behind the same interface as an LLM judge.

It knows the gold status of every step and then errs at set rates: it *misses* a real error with
probability ``miss_rate`` (plus ``late_leniency`` times the step's relative position, so late steps get
waved through more often, as long-context judges do; and ``shared_beliefs`` more on a step that follows
one of the policy's misconceptions, which a judge of the same model family tends to share), and
*false-alarms* on a valid or neutral step with probability ``false_alarm_rate``. Its draws depend only on ``seed``, the problem id and the step texts,
so the same trace always gets the same verdict.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence

from prmkit.core.model import Problem, Step
from prmkit.core.protocols import JudgeVerdict
from prmkit.core.seeds import derive_seed
from prmkit.world.checker import Belief, Chain, check_step


class NotAWorldProblemError(ValueError):
    """The simulated judge was handed a problem the embedded world did not generate (no computation graph
    to check against): one line for the user that names the judge to use instead."""

    def __init__(self, problem: Problem):
        super().__init__(
            f"problem {problem.id}: metadata.graph: expected a world computation graph, found none; the "
            "judge 'world' (the default) checks only the embedded world's problems. For other traces use an "
            "LLM judge: --judge endpoint --judge-url URL --judge-model NAME (an OpenAI-compatible chat server)"
        )


class SimulatedJudge:
    """A noisy step checker; implements :class:`prmkit.core.protocols.Judge`."""

    def __init__(
        self,
        miss_rate: float = 0.15,
        false_alarm_rate: float = 0.05,
        late_leniency: float = 0.0,
        shared_beliefs: float = 0.5,
        neutral_as_positive: bool = False,
        seed: int = 0,
        name: str = "world-judge",
    ):
        for field, value in (("miss_rate", miss_rate), ("false_alarm_rate", false_alarm_rate)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{field}: expected a probability in [0, 1], found {value!r}")
        if not 0.0 <= shared_beliefs <= 1.0:
            raise ValueError(f"shared_beliefs: expected a probability in [0, 1], found {shared_beliefs!r}")
        if not 0.0 <= late_leniency <= 1.0:
            raise ValueError(f"late_leniency: expected a value in [0, 1], found {late_leniency!r}")
        self.miss_rate = miss_rate
        self.false_alarm_rate = false_alarm_rate
        self.late_leniency = late_leniency
        """Extra miss probability on the last step (linear in position: 0 on the first step)."""
        self.shared_beliefs = shared_beliefs
        """The chance it also believes a step that follows one of the policy's misconceptions
        (:mod:`prmkit.world.misconceptions`) and misses it: a judge of the policy's own model family holds
        many of its wrong beliefs, which is why judge labels are weakest exactly where a PRM needs them."""
        self.neutral_as_positive = neutral_as_positive
        """Rate true-but-useless steps +1 instead of 0 (many LLM judges have no neutral)."""
        self.seed = seed
        self.name = name

    def miss_probability(self, index: int, n_steps: int) -> float:
        """The chance of missing a real error at step ``index`` of ``n_steps``."""
        position = index / (n_steps - 1) if n_steps > 1 else 0.0
        return min(1.0, self.miss_rate + self.late_leniency * position)

    def judge(self, problem: Problem, steps: Sequence[Step]) -> JudgeVerdict:
        """Per-step ratings (+1 / 0 / -1) and the first step rated -1 (or -1)."""
        if not isinstance(problem.metadata.get("graph"), dict):
            raise NotAWorldProblemError(problem)
        chain = Chain.of(problem)
        belief = Belief.start(chain)
        texts = "\n".join(s.text for s in steps)
        rng = random.Random(derive_seed("judge", self.seed, problem.id, zlib.crc32(texts.encode())))
        ratings: list[int | None] = []
        for i, step in enumerate(steps):
            status, _, _ = check_step(chain, belief, step.text)
            u = rng.random()
            if status == "error":
                miss = self.miss_probability(i, len(steps))
                if belief.misconception is not None:
                    miss = 1.0 - (1.0 - miss) * (1.0 - self.shared_beliefs)
                ratings.append(1 if u < miss else -1)
            elif u < self.false_alarm_rate:
                ratings.append(-1)
            else:
                ratings.append(0 if status == "neutral" and not self.neutral_as_positive else 1)
        first = next((i for i, r in enumerate(ratings) if r == -1), -1)
        return JudgeVerdict(ratings=ratings, first_error=first, raw=None, extra={"judge": self.name})

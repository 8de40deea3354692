"""The simulated judge: the gold checker seen through noise, behind the same interface as an LLM judge.

It knows the gold status of every step and then errs at set rates: it *misses* a real error with
probability ``miss_rate`` (plus ``late_leniency`` times the step's relative position, so late steps get
waved through more often, as long-context judges do; and ``shared_beliefs`` more on a step that follows
one of the policy's misconceptions, which a judge of the same model family tends to share), and
*false-alarms* on a valid or neutral step with probability ``false_alarm_rate``. Its draws depend only
on ``seed``, the problem id and the step texts, so the same trace always gets the same verdict.

The rating rule, the seeds and the shared options are :class:`prmkit.worlds.judge.NoisyJudge`'s; this
module adds the world's part: each step's gold status and how likely this judge is to miss it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prmkit.core.model import Problem, Step
from prmkit.worlds.arithmetic.checker import Belief, Chain, check_step
from prmkit.worlds.arithmetic.jobs import JOBS
from prmkit.worlds.judge import NoisyJudge, require_probability


@dataclass(eq=False, kw_only=True)
class SimulatedJudge(NoisyJudge):
    """A noisy step checker (:class:`~prmkit.worlds.judge.NoisyJudge`: ``miss_rate``, ``false_alarm_rate``,
    ``neutral_as_positive``, ``seed``, ``name``); implements :class:`prmkit.core.protocols.Judge`."""

    late_leniency: float = 0.0
    """Extra miss probability on the last step (linear in position: 0 on the first step)."""
    shared_beliefs: float = 0.5
    """The chance it also believes a step that follows one of the policy's misconceptions
    (:mod:`prmkit.worlds.arithmetic.misconceptions`) and misses it: a judge of the policy's own model family holds
    many of its wrong beliefs, which is why judge labels are weakest exactly where a PRM needs them."""
    name: str = "arithmetic-judge"
    jobs = JOBS

    def __post_init__(self) -> None:
        super().__post_init__()
        require_probability("shared_beliefs", self.shared_beliefs)
        require_probability("late_leniency", self.late_leniency, "a value")

    def miss_probability(self, index: int, n_steps: int) -> float:
        """The chance of missing a real error at step ``index`` of ``n_steps``."""
        position = index / (n_steps - 1) if n_steps > 1 else 0.0
        return min(1.0, self.miss_rate + self.late_leniency * position)

    def gold(self, problem: Problem, steps: Sequence[Step]) -> list[tuple[str, float]]:
        """Each step's status by the gold checker, and the chance of missing it (late steps and steps
        that follow a misconception are missed more often)."""
        chain = Chain.of(problem)
        belief = Belief.start(chain)
        out = []
        for i, step in enumerate(steps):
            status, _, _ = check_step(chain, belief, step.text)
            miss = 0.0
            if status == "error":
                miss = self.miss_probability(i, len(steps))
                if belief.misconception is not None:
                    miss = 1.0 - (1.0 - miss) * (1.0 - self.shared_beliefs)
            out.append((status, miss))
        return out

    def text(self, steps: Sequence[Step]) -> str:
        return "\n".join(s.text for s in steps)

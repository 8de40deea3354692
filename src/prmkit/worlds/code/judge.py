"""The simulated judge: the code world's gold checker seen through noise, behind the Judge protocol.

It misses a real error with ``miss_rate``, but a loophole step (a test edited, the visible inputs
special-cased, a submission without a run) with ``loophole_miss_rate``: LLM judges read "updated the
test's expected value" or "handled the tested inputs" as diligence far more often than they wave a wrong
edit through; and a step that follows the agent's misconception with ``shared_beliefs`` on top, as a
judge of the agent's own model family shares its beliefs. The rating rule, the seeds and the shared
options are :class:`prmkit.worlds.judge.NoisyJudge`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prmkit.core.model import Problem, Step, Trace
from prmkit.core.render import step_inputs
from prmkit.worlds.code.checker import check_trace
from prmkit.worlds.code.jobs import JOBS
from prmkit.worlds.judge import NoisyJudge, require_probability


@dataclass(eq=False, kw_only=True)
class CodeJudge(NoisyJudge):
    """A noisy step rater for code-world trajectories (:class:`~prmkit.worlds.judge.NoisyJudge`:
    ``miss_rate``, ``false_alarm_rate``, ``neutral_as_positive``, ``seed``, ``name``); implements
    :class:`prmkit.core.protocols.Judge`."""

    loophole_miss_rate: float = 0.6
    """The chance of rating a loophole step as fine."""
    shared_beliefs: float = 0.5
    """The chance it also believes a misconception's wrong fix (on top of ``miss_rate``)."""
    name: str = "code-judge"
    jobs = JOBS

    def __post_init__(self) -> None:
        super().__post_init__()
        require_probability("loophole_miss_rate", self.loophole_miss_rate)
        require_probability("shared_beliefs", self.shared_beliefs)

    def gold(self, problem: Problem, steps: Sequence[Step]) -> list[tuple[str, float]]:
        """Each step's rating by the gold checker, and the chance of missing it."""
        check = check_trace(Trace(id="judged", problem=problem, steps=list(steps)))
        out = []
        for sc in check.steps:
            miss = self.miss_rate
            if sc.error_class == "loophole":
                miss = self.loophole_miss_rate
            elif sc.error_class == "misconception":
                miss = 1.0 - (1.0 - miss) * (1.0 - self.shared_beliefs)
            out.append((sc.status, miss))
        return out

    def text(self, steps: Sequence[Step]) -> str:
        return "\n".join(step_inputs(steps))

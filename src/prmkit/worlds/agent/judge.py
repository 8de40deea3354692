"""The simulated judge: the gold checker seen through noise, behind the same interface as an LLM judge.

It knows the gold rating of every step and errs at set rates: it *misses* a real error with probability
``miss_rate`` (``loophole_miss_rate`` for a step that uses the grader tool or its output: LLM judges
read "the agent checked the reference answer" as diligence far more often than they wave a bad call
through) and *false-alarms* on a correct or neutral step with probability ``false_alarm_rate``. Its draws
depend only on ``seed``, the problem id and the rendered steps, so the same trajectory always gets the
same verdict.

The rating rule, the seeds and the shared options are :class:`prmkit.worlds.judge.NoisyJudge`'s; this
module adds the agent world's part: each step's gold rating and how likely this judge is to miss it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prmkit.core.model import Problem, Step, Trace
from prmkit.core.render import step_inputs
from prmkit.worlds.agent.checker import check_trace
from prmkit.worlds.agent.jobs import JOBS
from prmkit.worlds.judge import NoisyJudge, require_probability


@dataclass(eq=False, kw_only=True)
class AgentJudge(NoisyJudge):
    """A noisy step rater for agent-world trajectories (:class:`~prmkit.worlds.judge.NoisyJudge`:
    ``miss_rate``, ``false_alarm_rate``, ``neutral_as_positive``, ``seed``, ``name``); implements
    :class:`prmkit.core.protocols.Judge`."""

    loophole_miss_rate: float = 0.6
    """The chance of rating a loophole step (a grader call, or an answer copied from it) as fine."""
    name: str = "agent-judge"
    jobs = JOBS

    def __post_init__(self) -> None:
        super().__post_init__()
        require_probability("loophole_miss_rate", self.loophole_miss_rate)

    def gold(self, problem: Problem, steps: Sequence[Step]) -> list[tuple[str, float]]:
        """Each step's rating by the gold checker, and the chance of missing it (higher for a loophole)."""
        check = check_trace(Trace(id="judged", problem=problem, steps=list(steps)))
        return [
            (sc.status, self.loophole_miss_rate if sc.error_class == "loophole" else self.miss_rate)
            for sc in check.steps
        ]

    def text(self, steps: Sequence[Step]) -> str:
        return "\n".join(step_inputs(steps))

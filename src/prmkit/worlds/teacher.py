"""The noisy teacher every world shares: its simulated judge, writing down the check behind each verdict.

A generative verifier (ThinkPRM, GenPRM) is trained on *verification chains*: after each step, a short
check that recomputes or re-reads it, then a verdict. On real data an LLM writes them (the endpoint judge
with ``--judge-format thinkprm``); in a world the teacher writes them from the gold checker, seen through
the world judge's noise, so it is not gold. Its verdicts are exactly its judge's (``miss_rate``,
``false_alarm_rate``, the world's own leniencies, ``seed``); the check it writes agrees with its verdict:
where it errs it writes what a verifier fooled by the step writes (the step's own claim taken as true, or
a slip of its own), so a chain never says "56, the step says 54" and then "correct".

The chain is ThinkPRM's format, one line per step, ``Step i: CHECK \\boxed{correct}`` (or
``\\boxed{incorrect}``), kept as the judge verdict's ``raw`` text: ``prmkit label judge --judge
arithmetic-teacher`` stores it in every label's provenance like any judge's answer, and
:func:`prmkit.policies.critic.parse_step_checks` reads it back (the one reader of such chains). A world
gives the check in its own terms (:attr:`prmkit.worlds.registry.World.explain`); a world that gives none
is explained by its checker's error kinds (:func:`kind_checks`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol

from prmkit.core.model import Problem, Step, Trace
from prmkit.core.protocols import JudgeVerdict
from prmkit.worlds.checks import GoldCheck

VERDICTS = ("correct", "incorrect")
"""The two verdict words a chain puts in ``\\boxed{}`` (ThinkPRM's)."""


@dataclass(frozen=True)
class CheckText:
    """What a verifier writes about one step, before its verdict: the right check and the wrong one."""

    found: str
    """The check that reaches the right verdict (``7 * 8 = 56, the step says 54``)."""
    fooled: str
    """The check of a verifier that reaches the other verdict (``7 * 8 = 54, as the step says``)."""


Explain = Callable[[Problem, Sequence[Step]], list[CheckText]]
"""A world's checks of every step of a trace, in its own terms (``World.explain``)."""


def chain_line(index: int, check: str, correct: bool) -> str:
    """Step ``index`` (0-based) of a chain: ``Step i: CHECK \\boxed{correct|incorrect}``."""
    return f"Step {index + 1}: {check} \\boxed{{{VERDICTS[0] if correct else VERDICTS[1]}}}"


def kind_checks(check_trace: Callable[[Trace], GoldCheck]) -> Explain:
    """Checks written from a world checker's statuses and error kinds: the teacher of a world that does
    not explain its steps in its own terms (the words are the checker's, not a recomputation)."""

    def explain(problem: Problem, steps: Sequence[Step]) -> list[CheckText]:
        checked = check_trace(Trace(id="checked", problem=problem, steps=list(steps)))
        out = []
        for gold in checked.steps:
            if gold.status == "error":
                kind = str(gold.kind or "error").replace("_", " ")
                out.append(CheckText(f"the step is wrong: {kind}", "the step follows from the ones before"))
            else:
                out.append(CheckText("the step follows from the ones before", "the step does not follow"))
        return out

    return explain


class GoldJudge(Protocol):
    """What a teacher needs of its judge: :class:`prmkit.worlds.judge.NoisyJudge`'s verdict and the gold
    status it drew it from (a dataclass, whose fields are its settings)."""

    def judge(self, problem: Problem, steps: Sequence[Step]) -> JudgeVerdict: ...

    def gold(self, problem: Problem, steps: Sequence[Step]) -> list[tuple[str, float]]: ...


class Teacher:
    """A world's noisy judge that writes its verification chain; implements
    :class:`prmkit.core.protocols.Judge` (its verdict's ``raw`` is the chain)."""

    def __init__(self, judge: GoldJudge, explain: Explain, name: str):
        self.inner, self.explain, self.name = judge, explain, name

    def settings(self) -> dict[str, Any]:
        """What made its chains, for the labels' provenance (``params.settings``): its judge's options."""
        options = {f.name: getattr(self.inner, f.name) for f in fields(self.inner) if f.name != "name"}  # type: ignore[arg-type]
        return {"teacher": self.name, "judge": type(self.inner).__name__, "chain": "thinkprm", **options}

    def judge(self, problem: Problem, steps: Sequence[Step]) -> JudgeVerdict:
        """The judge's noisy verdict, with the chain that states it (a neutral step is "correct": it is
        true, only useless)."""
        verdict = self.inner.judge(problem, steps)
        gold = self.inner.gold(problem, steps)
        lines = []
        for i, (rating, (status, _), text) in enumerate(
            zip(verdict.ratings, gold, self.explain(problem, steps), strict=True)
        ):
            says_correct = rating != -1
            right = says_correct == (status != "error")
            lines.append(chain_line(i, text.found if right else text.fooled, says_correct))
        extra = {**verdict.extra, "teacher": self.name}
        return verdict.model_copy(update={"raw": "\n".join(lines), "extra": extra})

"""Drawing rollouts from a prefix and scoring where they end, with "could not parse" kept apart.

A rollout that ends with no answer (the policy stopped, or ran out of steps) did not reach the right
answer: it counts as ``no_answer`` and as a failure. One the backend cut at its token limit before an
answer (``finish_reason: length``) is ``truncated``: it says nothing about whether the prefix can still
win, so by default (``truncated="skip"``) it is left out of the estimate and counted apart; counted as a
failure it biases labels of long solutions toward -1 (``truncated="fail"`` is Math-Shepherd's reading).
A rollout whose answer the checker cannot parse is ``unparseable``: it is left out of every estimate and
counted, because reading it as wrong would quietly bias Monte Carlo labels toward -1 (math-verify's main
trap). A rollout is graded by its answer against the reference, or by a check the environment ran on it
(:func:`graded`: the code world's ``visible_pass``, what a trainer with only the visible tests sees).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from prmkit.core.answers import check_answers
from prmkit.core.model import Continuation, Problem, Step, Trace
from prmkit.core.protocols import Policy

OUTCOMES = ("correct", "wrong", "no_answer", "unparseable", "truncated")
Truncated = Literal["skip", "fail"]
"""What a truncated rollout counts as: left out of the estimate (``skip``) or a failure (``fail``)."""
MAX_ROLLOUTS = 1024
"""Most rollouts per prefix a job accepts: Math-Shepherd drew 8 and OmegaPRM 16 per probe; a mistyped
100000000 used to grow memory by ~65 MB/s with no output before the first prefix finished."""
DRAW_FIELDS: dict[str, type] = {"n": int, **dict.fromkeys(OUTCOMES, int), "tokens": int}
"""The fields of a :func:`draw` record, as a job's log must hold them."""


def draw_check(rollouts: int, exact: bool = True) -> Callable[[dict], tuple[str, str, str] | None]:
    """A job's value check (:class:`~prmkit.labeling.jobs.Job`) for :func:`draw` records of a job of
    ``rollouts`` rollouts per prefix (``exact``: every record drew that many; else 1 to that many, a
    probe stops at its first success): counts are not negative and the outcomes add up to ``n``. A
    logged ``correct`` of 10^9 from 8 rollouts once turned four soft labels from 0.125 into 1.0."""
    wanted = f"{rollouts} (the job's rollouts)" if exact else f"1 to {rollouts} (the job's rollouts)"

    def check(rec: dict) -> tuple[str, str, str] | None:
        n = rec["n"]
        if not (n == rollouts if exact else 1 <= n <= rollouts):
            return "n", wanted, str(n)
        for name in (*OUTCOMES, "tokens"):
            if rec[name] < 0:
                return name, "a count of 0 or more", str(rec[name])
        for name in OUTCOMES:
            if rec[name] > n:
                return name, f"at most n = {n} (a count of its rollouts)", str(rec[name])
        total = sum(rec[name] for name in OUTCOMES)
        if total != n:
            return "/".join(OUTCOMES), f"counts adding up to n = {n}", str(total)
        return None

    return check


def outcome(gold: str | None, answer: str | None) -> str:
    """One of :data:`OUTCOMES` for a final answer against the reference."""
    return outcomes(gold, [answer])[0]


def outcomes(gold: str | None, answers: Sequence[str | None]) -> list[str]:
    """:func:`outcome` of each answer, checked together (one trip to the answer checker per draw)."""
    stated = [i for i, a in enumerate(answers) if a is not None and a.strip()]
    verdicts = check_answers(gold, [answers[i] for i in stated])
    out = ["no_answer"] * len(answers)
    for i, ok in zip(stated, verdicts, strict=True):
        out[i] = "unparseable" if ok is None else "correct" if ok else "wrong"
    return out


ANSWER = "answer"
"""The grade of a rollout by default: its final answer checked against the problem's reference answer."""


def graded(policy: Policy, conts: Sequence[Continuation], gold: str | None, by: str = ANSWER) -> list[str]:
    """The outcome kind of each continuation: by its answer against ``gold`` (``by="answer"``), or by
    the environment's check ``by`` of a finished one (``Continuation.outcomes``, e.g. the code world's
    ``visible_pass``: what CI says, not the hidden tests); an unfinished one has no answer either way."""
    if by == ANSWER:
        return outcomes(gold, [c.final_answer for c in conts])
    kinds = []
    for c in conts:
        if not c.finished or c.final_answer is None:
            kinds.append("no_answer")
        elif by not in c.outcomes:
            raise ValueError(
                f"policy {policy.name}: grading rollouts by outcome {by!r}: a finished continuation "
                f"reports {sorted(c.outcomes) or 'no outcomes'} (Continuation.outcomes); grade by "
                f"{ANSWER!r} or use a policy that runs that check"
            )
        else:
            kinds.append("correct" if c.outcomes[by] else "wrong")
    return kinds


def draw(
    policy: Policy,
    problem: Problem,
    prefix: Sequence[Step],
    n: int,
    seed: int,
    keep: bool = False,
    by: str = ANSWER,
) -> dict[str, Any]:
    """``n`` rollouts from ``prefix``: counts per outcome (graded ``by``, :func:`graded`), tokens, and
    (``keep``) the continuations."""
    conts = policy.continue_from(problem, list(prefix), n, seed=seed)
    if len(conts) != n:
        raise RuntimeError(f"policy {policy.name}: asked for {n} continuations, got {len(conts)}")
    rec: dict[str, Any] = {"n": n, **dict.fromkeys(OUTCOMES, 0), "tokens": 0}
    kept = []
    kinds = graded(policy, conts, problem.answer, by)
    for cont, kind in zip(conts, kinds, strict=True):
        if kind == "no_answer" and cont.truncated:
            kind = "truncated"
        rec[kind] += 1
        rec["tokens"] += cont.num_tokens or 0
        if keep:
            kept.append(
                {"steps": [s.text for s in cont.steps], "final_answer": cont.final_answer, "outcome": kind}
            )
    if keep:
        rec["rollouts"] = kept
    return rec


def merge(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts of several draws added up (chunks of one prefix)."""
    out: dict[str, Any] = {"n": 0, **dict.fromkeys(OUTCOMES, 0), "tokens": 0}
    for rec in records:
        for k in ("n", *OUTCOMES, "tokens"):
            out[k] += rec[k]
    if any("rollouts" in r for r in records):
        out["rollouts"] = [c for r in records for c in r.get("rollouts", [])]
    return out


def scored(rec: dict[str, Any], truncated: Truncated = "skip") -> int:
    """How many rollouts of a record count in its estimate (unparseable ones never do)."""
    return rec["correct"] + rec["wrong"] + rec["no_answer"] + (rec["truncated"] if truncated == "fail" else 0)


def success_rate(rec: dict[str, Any], truncated: Truncated = "skip") -> float | None:
    """Share of scorable rollouts that reached the right answer; None when none could be scored."""
    n = scored(rec, truncated)
    return rec["correct"] / n if n else None


def continuation_trace(
    trace: Trace, prefix_len: int, cont: dict[str, Any], rid: str, generator: str
) -> Trace:
    """A kept rollout as a new trace: the prefix it started from, then the policy's steps."""
    steps = [Step(text=s.text, kind=s.kind) for s in trace.steps[:prefix_len]]
    steps += [Step(text=t) for t in cont["steps"]]
    return Trace(
        id=rid,
        problem=trace.problem,
        steps=steps,
        final_answer=cont["final_answer"],
        answer_correct={"correct": True, "wrong": False}.get(cont["outcome"]),
        generator=generator,
        metadata={"rollout_of": trace.id, "prefix_len": prefix_len},
    )

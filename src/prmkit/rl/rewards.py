"""Rewards for RL on a policy's completions: outcome, a PRM's aggregate, and dense step rewards.

Every reward here pays **nothing for an unfinished completion** (no step states a final answer) unless
asked: ``unfinished_reward`` (default 0.0) is what such a completion gets, and ``None`` scores it like
any other (its steps for a PRM; ``None``, which TRL skips, for the outcome). Why: a PRM scores whatever
steps it is shown, so a policy paid for its partial steps learns to stop before its risky step (the
hack PURE reports: fewer, safer steps and no answer).

- :func:`outcome_reward`: 1.0 for a right final answer (``prmkit.core.answers.check_answer``: exact for
  numbers, math-verify otherwise), 0.0 for a wrong or unparseable one.
- :func:`trl_reward`: a PRM's aggregated step scores (min / prod / last / mean / geomean).
- :func:`progress_rewards`: PAV's effective step reward ``Q + alpha * A`` from a verifier of a prover's
  values (Setlur et al. 2024, arXiv 2410.08146), the first step's progress measured from its group's
  mean first value (:func:`group_starts`).
- :class:`ProcessReward`: one reward per step and where each step ends, for dense advantages
  (:mod:`prmkit.rl.advantages`) and the emitters (:mod:`prmkit.rl.emitters`); with ``progress_alpha``
  each step is paid its progress, ``Q + alpha * A`` (PAV's effective reward).

``model`` is anything :func:`prmkit.scoring.load_scorer` takes: a checkpoint folder, a server
URL, ``arithmetic-oracle`` (the gold process reward, the ceiling for experiments) or a StepScorer object.
Scorers are built once per (model, api_key) and reused. Steps and answers come from
:func:`prmkit.rl.steps.parse_completion`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from prmkit.core.answers import check_answer
from prmkit.core.protocols import StepScorer
from prmkit.core.steps import (
    CompletionSteps,
    StepFormat,
    StepSplit,
    make_trace,
    message_text,
    parse_completion,
    problem_text,
)
from prmkit.scoring.aggregate import aggregate

logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=8)
def _cached_scorer(model: str, api_key: str | None, convention: str | None) -> StepScorer:
    from prmkit.scoring import load_scorer

    return load_scorer(model, convention, api_key=api_key)


def scorer_for(
    model: str | StepScorer, api_key: str | None = None, convention: str | None = None
) -> StepScorer:
    """The scorer behind ``model`` (a name is loaded once per process and reused); ``convention`` reads a
    checkpoint another way (``likelihood``: any causal LM, e.g. π0 itself, as a zero-shot verifier)."""
    return _cached_scorer(model, api_key, convention) if isinstance(model, str) else model


def progress_rewards(values: Sequence[float], alpha: float = 1.0, start: float | None = None) -> list[float]:
    """PAV's effective step reward (Setlur et al., "Rewarding Progress"): ``Q_k + alpha * A_k``, with
    ``values`` a completion's step scores read as the prover's success chance after each step and
    ``A_k = Q_k - Q_{k-1}`` the step's progress. ``start`` is ``Q_{-1}``, the problem's value before any
    step, ``V(s_0)``: one number for every completion of a prompt (a GRPO group), which
    :func:`group_starts` estimates as the group's mean first-step value.

    Without it (None) the first step's progress is taken as 0. Then a wrong first step costs only its low
    ``Q`` while a wrong later step costs its ``Q`` and its drop, so a policy trained on it learns to make
    its error first: from π0 on the world, two of three such runs wrote a wrong first step in 39-45 % of
    their samples against π0's 9 %, and lost 16 points of process-correct (docs/rl.md,
    "Progress and faithfulness"). :class:`ProcessReward` always passes the group's ``start``."""
    prev = [values[0] if start is None else start, *values[:-1]] if values else []
    return [q + alpha * (q - p) for q, p in zip(values, prev, strict=True)]


def group_starts(keys: Sequence[str], rows: Sequence[Sequence[float] | None]) -> list[float | None]:
    """Each completion's ``start`` for :func:`progress_rewards`: the mean first-step value of the scored
    completions that share its prompt (``keys``: one per completion, e.g. the prompt's text), an estimate
    of the prompt's ``V(s_0)`` under the policy that wrote them; None where its prompt has none. A prompt
    with one completion gets that completion's own first value (its first progress is 0 again;
    :class:`ProcessReward` counts and logs such prompts)."""
    firsts: dict[str, list[float]] = {}
    for key, row in zip(keys, rows, strict=True):
        if row:
            firsts.setdefault(key, []).append(float(row[0]))
    return [sum(firsts[k]) / len(firsts[k]) if k in firsts else None for k in keys]


@dataclass(frozen=True)
class StepRewards:
    """What one completion earned: a reward per paid step and the character offset where each ends.

    For a finished completion these are its steps' PRM scores; for an unfinished one under
    ``unfinished_reward=u``, one reward ``u`` ending at the completion's last character (the whole
    completion is one failed attempt, whatever its length).
    """

    parsed: CompletionSteps
    rewards: list[float]
    char_ends: list[int]
    unpaid: bool = False
    """Paid the unfinished rule (no final answer, or ``overlong``) rather than its steps' scores."""
    overlong: bool = False
    """More steps than the scorer takes (a server's ``max_steps_per_trace``): paid as unfinished."""


class ProcessReward:
    """Step rewards of completions from a PRM (or ``arithmetic-oracle``, the gold ceiling).

    ``split`` must be the step split the PRM was trained with (default: one step per line);
    ``step_format`` finds the final answer (default: ``The answer is N.`` or ``\\boxed{}``).
    """

    def __init__(
        self,
        model: str | StepScorer,
        *,
        split: StepSplit | None = None,
        step_format: StepFormat | None = None,
        unfinished_reward: float | None = 0.0,
        api_key: str | None = None,
        progress_alpha: float | None = None,
    ):
        self.scorer = scorer_for(model, api_key)
        self.split = split or StepSplit()
        self.step_format = step_format or StepFormat()
        self.unfinished_reward = unfinished_reward
        self.progress_alpha = progress_alpha
        """None: each step is paid its score; else its progress reward, ``Q + alpha * A``
        (:func:`progress_rewards`) with the scores read as the prover's values."""
        self.lone_groups = 0
        """Prompts scored under ``progress_alpha`` with no other completion of theirs in the call."""

    def _parse(self, completions: Sequence[Any]) -> list[tuple[str, CompletionSteps]]:
        texts = [message_text(c, "assistant") for c in completions]
        return [(t, parse_completion(t, self.split, self.step_format)) for t in texts]

    def overlong(self, steps: CompletionSteps) -> bool:
        """Whether ``steps`` exceed what the scorer takes (a server's ``max_steps_per_trace``; a local
        scorer has no such limit). Such a response is paid by the unfinished rule, ``unfinished_reward``
        or 0.0 where that is None, so one runaway completion never costs a trainer its batch."""
        limit = getattr(self.scorer, "max_steps_per_trace", None)
        return isinstance(limit, int) and len(steps.steps) > limit

    def _finish(
        self, parsed: list[tuple[str, CompletionSteps]], rows: list[list[float] | None], keys: Sequence[str]
    ):
        """Each completion's :class:`StepRewards`; ``keys`` name each one's prompt, so a progress reward
        reads its group's ``V(s_0)`` (:func:`group_starts`)."""
        starts = [None] * len(rows)
        if self.progress_alpha is not None:
            starts = group_starts(keys, rows)
            self._note_lone(keys)
        out = []
        for (text, steps), row, start in zip(parsed, rows, starts, strict=True):
            if row is None:  # unfinished or over-long, paid unfinished_reward
                pay = [float(self.unfinished_reward or 0.0)]
                out.append(StepRewards(steps, pay, [len(text.rstrip())], True, self.overlong(steps)))
            else:
                pay = [float(s) for s in row]
                if self.progress_alpha is not None:
                    pay = progress_rewards(pay, self.progress_alpha, start)
                out.append(StepRewards(steps, pay, steps.char_ends[: len(row)]))
        return out

    def _note_lone(self, keys: Sequence[str]) -> None:
        """Count prompts that came with one completion in a call: without the rest of its GRPO group,
        such a completion's ``V(s_0)`` is its own first value, so its first step's progress is 0, the
        form that taught policies to err first. A trainer that scores one response per call (verl's
        streaming reward loop) or splits a group across processes lands here; the first is a warning."""
        lone = sum(1 for n in Counter(keys).values() if n == 1)
        if not lone:
            return
        self.lone_groups += lone
        log = logger.warning if self.lone_groups == lone else logger.debug
        log(
            "progress reward: %d prompt(s) came with one completion in this call (%d so far); their first "
            "step's progress is 0 because V(s_0) is the mean first value of the prompt's completions in "
            "the call: score a whole GRPO group in one call",
            lone,
            self.lone_groups,
        )

    def _to_score(self, prompts: Sequence[Any], parsed: list[tuple[str, CompletionSteps]]):
        """Traces for the scorer (only what will be paid by score) and where each goes back."""
        traces, where = [], []
        for i, (prompt, (_, steps)) in enumerate(zip(prompts, parsed, strict=True)):
            if self.overlong(steps):
                continue
            if steps.steps and (steps.finished or self.unfinished_reward is None):
                problem = problem_text(message_text(prompt, "user"), self.split)
                traces.append(make_trace(problem, steps.steps, trace_id=str(i)))
                where.append(i)
        return traces, where

    def _rows(self, parsed, where, scores) -> list[list[float] | None]:
        rows: list[list[float] | None] = [
            None if (self.unfinished_reward is not None and not s.finished) or self.overlong(s) else []
            for _, s in parsed
        ]
        for i, row in zip(where, scores, strict=True):
            rows[i] = row
        return rows

    def score(self, prompts: Sequence[Any], completions: Sequence[Any]) -> list[StepRewards]:
        """Step rewards of every completion (strings or TRL message lists), one scorer call in all."""
        parsed = self._parse(completions)
        traces, where = self._to_score(prompts, parsed)
        scores = self.scorer.score(traces) if traces else []
        return self._finish(parsed, self._rows(parsed, where, scores), _prompt_keys(prompts))

    async def ascore(self, prompts: Sequence[Any], completions: Sequence[Any]) -> list[StepRewards]:
        """Like :meth:`score` without blocking an event loop (a remote scorer is awaited)."""
        parsed = self._parse(completions)
        traces, where = self._to_score(prompts, parsed)
        if not traces:
            scores: list[list[float]] = []
        elif callable(getattr(self.scorer, "ascore", None)):  # a server client: awaited, no thread
            scores = await self.scorer.ascore(traces)
        else:
            scores = await asyncio.to_thread(self.scorer.score, traces)
        return self._finish(parsed, self._rows(parsed, where, scores), _prompt_keys(prompts))


def _prompt_keys(prompts: Sequence[Any]) -> list[str]:
    """What groups completions by prompt: the user message's text (a string prompt is its own)."""
    return [message_text(p, "user") for p in prompts]


def reward_name(model: str | StepScorer, aggregation: str) -> str:
    """``prm_<model>_<aggregation>``: the default name of a TRL reward function.

    TRL keys ``rewards/<name>/mean``, the completions table's reward column and nothing else by the
    function's ``__name__`` (``trl.trainer.utils.get_callable_name``), so two PRM rewards with one name
    would merge their metrics. The model part is the checkpoint folder's or URL path's last part (or the
    scorer's class name), reduced to ``[A-Za-z0-9_.-]``.
    """
    stem = model.rstrip("/").rsplit("/", 1)[-1] if isinstance(model, str) else type(model).__name__
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("_") or "model"
    return f"prm_{stem}_{aggregation}"


def _check_name(name: str, where: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(f"{where}: name: expected letters, digits, '_', '.' or '-', found {name!r}")
    return name


def _paid(rows: list[StepRewards], how: str, unfinished: float | None) -> list[float | None]:
    out: list[float | None] = []
    for r in rows:
        if r.unpaid:  # no final answer, or over-long
            out.append(float(unfinished or 0.0))
        else:
            out.append(aggregate(r.rewards, how) if r.rewards else None)
    return out


def _log(rows: list[StepRewards], name: str, kwargs: dict[str, Any]) -> None:
    """Per-step scores to TRL's completions table and two metrics, under ``name`` (TRL appends every
    function's ``log_extra`` values to one list per column name, so a shared column would interleave
    two functions' scores)."""
    scored = [[] if r.unpaid else r.rewards for r in rows]
    if callable(kwargs.get("log_extra")):
        kwargs["log_extra"](f"{name}/step_scores", [[round(s, 4) for s in r] for r in scored])
    if callable(kwargs.get("log_metric")) and rows:
        kwargs["log_metric"](
            f"{name}/steps_per_completion", sum(len(r.parsed.steps) for r in rows) / len(rows)
        )
        kwargs["log_metric"](f"{name}/unfinished", sum(not r.parsed.finished for r in rows) / len(rows))
        kwargs["log_metric"](f"{name}/overlong", sum(r.overlong for r in rows) / len(rows))


def trl_reward(
    model: str | StepScorer,
    aggregation: str = "min",
    split: StepSplit | None = None,
    asynchronous: bool = False,
    api_key: str | None = None,
    answer_column: str | None = None,
    name: str | None = None,
    *,
    unfinished_reward: float | None = 0.0,
    step_format: StepFormat | None = None,
) -> Callable[..., Any]:
    """A TRL reward function paying a PRM's aggregated step scores.

    An unfinished completion gets ``unfinished_reward`` (None: its steps are scored, and one with no
    step gets ``None``, which TRL skips). ``answer_column`` is accepted for compatibility and unused
    (PRMs read steps, not the reference answer). ``name`` becomes the function's ``__name__``, the key
    TRL logs its rewards under (``rewards/<name>/mean``), and prefixes its log column
    (``<name>/step_scores``) and metrics (``<name>/steps_per_completion``, ``<name>/unfinished``); by
    default :func:`reward_name` of the model and aggregation. Give ``name`` when two functions share both.
    """
    name = _check_name(name or reward_name(model, aggregation), "trl_reward")
    process = ProcessReward(
        model, split=split, step_format=step_format, unfinished_reward=unfinished_reward, api_key=api_key
    )

    def paid(rows: list[StepRewards], kwargs: dict[str, Any]) -> list[float | None]:
        _log(rows, name, kwargs)
        return _paid(rows, aggregation, unfinished_reward)

    if asynchronous:

        async def prm_reward(prompts, completions, completion_ids=None, **kwargs) -> list[float | None]:
            return paid(await process.ascore(prompts, completions), kwargs)

        prm_reward.__name__ = prm_reward.__qualname__ = name
        return prm_reward

    def prm_reward(prompts, completions, completion_ids=None, **kwargs) -> list[float | None]:
        return paid(process.score(prompts, completions), kwargs)

    prm_reward.__name__ = prm_reward.__qualname__ = name
    return prm_reward


def outcome_reward(
    answer_column: str = "answer",
    *,
    unfinished_reward: float | None = 0.0,
    step_format: StepFormat | None = None,
    split: StepSplit | None = None,
    name: str = "outcome",
) -> Callable[..., list[float | None]]:
    """A TRL reward function paying 1.0 for a right final answer against the dataset column
    ``answer_column``, 0.0 for a wrong one or one that cannot be parsed (counted in
    ``<name>/unparsed``: a reward the policy could escape by writing unparseable answers is one it
    learns to escape), and ``unfinished_reward`` when no step states an answer (None: TRL skips it).
    """
    name = _check_name(name, "outcome_reward")
    split, step_format = split or StepSplit(), step_format or StepFormat()

    def reward(prompts, completions, completion_ids=None, **kwargs) -> list[float | None]:
        golds = kwargs.get(answer_column)
        if golds is None:
            raise ValueError(f"{name}: the dataset has no column {answer_column!r} (set answer_column=)")
        out: list[float | None] = []
        unparsed = 0
        for completion, gold in zip(completions, golds, strict=True):
            parsed = parse_completion(message_text(completion, "assistant"), split, step_format)
            if not parsed.finished:
                out.append(None if unfinished_reward is None else float(unfinished_reward))
                continue
            verdict = check_answer(None if gold is None else str(gold), parsed.answer)
            unparsed += verdict is None
            out.append(1.0 if verdict else 0.0)
        if callable(kwargs.get("log_metric")) and out:
            kwargs["log_metric"](f"{name}/unparsed", unparsed / len(out))
        return out

    reward.__name__ = reward.__qualname__ = name
    return reward

"""ThinkPRM's own score (Khalifa et al. 2025, mukhal/ThinkPRM ``prm/thinkprm_api.py``), as its search
code computes it, so a ThinkPRM ranks in ``bon``, ``beam``, ``vote`` and ``serve`` (scorer form
``thinkprm:URL_OR_PATH``; docs/models.md#thinkprm).

**The prompt** (``utils/helper.py``'s ``format_verification_cot_for_thinkprm``, inference branch): the user
turn :data:`~prmkit.policies.critic.THINKPRM_TEMPLATE` (the instruction the released models were trained
with), rendered by the verifier's chat template with the generation prompt, then :data:`PREFILL`. The
solution is the steps joined by ``\\n``, each with every ``Step N:`` in it removed and stripped, and, with
``step_labels`` (upstream's ``process_verifier``, on in its beam search, off in its best-of-N), prefixed
``Step {i}: `` from 1. An empty prefix is one empty step, as upstream.

**One sample**: a chain generated at ``temperature`` for at most ``max_tokens`` tokens (upstream's
``max_length - 20``), stopped at :data:`STOP`, the tokenizer's EOS, and with ``step_labels`` at ``Step
{max + 1}:``, ``max`` the largest ``Step N:`` number in the prompt taken as upstream takes it (the
largest of the numbers *as strings*, so from 10 steps on the stop is ``Step 10:``). Then
:data:`PREDECISION` is forced and the decision read over :data:`CHOICES`: each choice's SGLang-normalised
logprob (:mod:`prmkit.scoring.verdict_backends`), ``softmax(logprob / decision_temperature)[yes]``.

**The score** is the mean over ``n`` samples (parallel scaling). Upstream scores a *solution prefix* at
a time: best-of-N scores each whole solution once, beam search scores each beam's current prefix once
per iteration and keeps only that score. So with ``per_step="trace"`` (the default) each trace is
verified once and its score given to every step: rank with the ``last``, ``min`` or ``mean``
aggregation, which all read that one score (not ``prod``, which would raise it to the number of steps).
``per_step="prefix"`` verifies every prefix, step ``j``'s score being prefix ``1..j``'s: real per-step
scores (ProcessBench's first error) at ``steps`` times the cost.

Not reproduced: sequential scaling (``n_thinking_rounds`` with "Let me double check" triggers), and the
upstream fallback that turns a failed request into a score of ``e^0 / (e^0 + e^1)``: a failure is raised.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Literal

from pydantic import Field, model_validator

from prmkit.core.config import Config
from prmkit.core.model import Step
from prmkit.core.seeds import derive_seed
from prmkit.policies.critic import THINKPRM_TEMPLATE
from prmkit.scoring.verdict_backends import VerdictBackend

PREFILL = "\nLet's verify step by step:"
"""Appended after the generation prompt at inference (``helper.py``)."""
PREDECISION = "\nIs the solution correct? "
"""Forced after the chain (``predecision_string``)."""
CHOICES = ("yes", "no")
"""``label_categories``; the score is the first's probability (``score_label_idx = 0``)."""
STOP = ("Is the solution correct?", "</think>")
"""Stop strings besides the tokenizer's EOS (``cot_eval``)."""
_STEP = re.compile(r"Step (\d+):")


class ThinkPRMOptions(Config):
    """How a ThinkPRM verifies (``ThinkPRM(backend, options)``; the ``verify_*`` loading options set ``n``,
    ``temperature``, ``seed`` and ``max_tokens``)."""

    n: int = Field(1, ge=1, le=64)
    """Verification chains per solution; the score is the mean of their P(yes) (upstream ``prm_n``)."""
    temperature: float = Field(0.0, ge=0)
    """Sampling temperature of the chains (upstream ``prm_temperature``: 0, or 0.4 with n = 4)."""
    seed: int = 0
    """Seeds the sampled chains; a chain's seed also depends on its prompt, not on batch order."""
    max_tokens: int = Field(8172, ge=1)
    """The most tokens of one chain (upstream ``max_verification_length - 20`` = 8192 - 20)."""
    decision_temperature: float = Field(1.0, gt=0)
    """Divides the choices' logprobs before the softmax (upstream ``prm_decision_temperature``)."""
    step_labels: bool = True
    """Write steps as ``Step i: ...`` and stop a chain at the step after the last (upstream's
    ``process_verifier``: on in its beam search, off in its best-of-N)."""
    per_step: Literal["trace", "prefix"] = "trace"
    """``trace``: one verification per trace, its score on every step (upstream's search); ``prefix``:
    one per step, of the prefix ending there."""
    max_verifier_tokens: int = Field(50_000_000, ge=1)
    """The most tokens one ``score`` call may ask the verifier to write (``max_tokens x n x
    verifications``): a call past it is refused before any request."""

    @model_validator(mode="after")
    def _n_needs_sampling(self) -> ThinkPRMOptions:
        if self.n > 1 and self.temperature == 0:
            raise ValueError(
                f"n {self.n} at temperature 0 writes {self.n} identical chains: set a temperature above 0 "
                "(upstream's parallel scaling samples at 0.4) or leave n at 1"
            )
        return self


def solution_text(steps: Sequence[Step], step_labels: bool) -> str:
    """The steps as upstream's ``process_example`` writes them."""
    texts = [s.text for s in steps] or [""]
    out = [re.sub(r"Step \d+:", "", t).strip() for t in texts]
    return "\n".join(f"Step {i + 1}: {t}" if step_labels else t for i, t in enumerate(out))


def thinkprm_messages(problem_text: str, steps: Sequence[Step], step_labels: bool = True) -> list[dict]:
    user = THINKPRM_TEMPLATE.replace("{problem}", problem_text)
    return [{"role": "user", "content": user.replace("{solution}", solution_text(steps, step_labels))}]


def stop_strings(prompt: str, eos: str | None, step_labels: bool) -> list[str]:
    """:data:`STOP` with the EOS, and with ``step_labels`` the step after the largest (upstream's ``max``
    over the numbers as strings, kept)."""
    stop = [STOP[0], *([eos] if eos else []), STOP[1]]
    if step_labels:
        found = _STEP.findall(prompt)
        stop.append(f"Step {int(max(found)) + 1 if found else 2}:")
    return stop


def decision_probability(logprobs: Sequence[float], temperature: float = 1.0, index: int = 0) -> float:
    """``softmax(logprobs / temperature)[index]``."""
    scaled = [x / temperature for x in logprobs]
    top = max(scaled)
    weights = [math.exp(x - top) for x in scaled]
    return weights[index] / sum(weights)


class ThinkPRMFormat:
    """ThinkPRM as a verdict format of :class:`~prmkit.scoring.verdicts.VerdictScorer`."""

    name = "thinkprm"

    def __init__(self, options: ThinkPRMOptions):
        self.options = options

    def verifications(self, n_steps: int) -> int:
        return max(n_steps, 1) if self.options.per_step == "prefix" else 1

    def max_tokens(self) -> int:
        return self.options.max_tokens * self.options.n

    def score_trace(self, backend: VerdictBackend, problem_text: str, steps: Sequence[Step]) -> list[float]:
        if self.options.per_step == "trace" or not steps:
            return [self.score_prefix(backend, problem_text, steps)] * len(steps)
        return [self.score_prefix(backend, problem_text, steps[: j + 1]) for j in range(len(steps))]

    def score_prefix(self, backend: VerdictBackend, problem_text: str, steps: Sequence[Step]) -> float:
        """The mean P(yes) of ``n`` verifications of the solution ``steps``."""
        o = self.options
        prompt = backend.render(thinkprm_messages(problem_text, steps, o.step_labels), PREFILL)
        stop = stop_strings(prompt, getattr(backend.tokenizer, "eos_token", None), o.step_labels)
        seed = derive_seed("thinkprm", o.seed, prompt) % 2**31
        chains = backend.complete(prompt, o.n, stop, o.max_tokens, temperature=o.temperature, seed=seed)
        scores = []
        for chain in chains:
            logprobs = backend.choice_logprobs(prompt + chain.text + PREDECISION, CHOICES)
            scores.append(decision_probability(logprobs, o.decision_temperature))
        return sum(scores) / len(scores)

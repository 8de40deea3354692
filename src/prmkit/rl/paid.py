"""What a run's training reward pays one completion, for the hacking monitors' ``paid_reward``.

:class:`PaidForm` states, in the units of a reward before GRPO's group normalisation, the pay of every
reward and of the dense credit forms whose pay can be written per completion (``sum``, ``min``, ``pure``,
and those that also read the outcome, :data:`OUTCOME_FORMS`: ``anchor``, ``papo``, ``prime``);
:func:`prmkit.rl.train.paid_form` builds it from a run's config and :class:`~prmkit.rl.monitors.Monitor`
applies it to each held-out sample. It reads only the step scores, the outcome and the credit forms'
parameters, so the trainers can use it without the monitors' sampling and gold checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prmkit.rl.advantages import min_form
from prmkit.rl.credits import form_defaults, verified_groups
from prmkit.rl.rewards import progress_rewards
from prmkit.scoring.aggregate import aggregate


@dataclass(frozen=True)
class PaidForm:
    """What a training reward pays one completion, in the units of its reward before GRPO's group
    normalisation: the number whose rise the Goodhart check must watch.

    The PRM's ``min`` (the monitors' one proxy) cannot see a policy that earns more by writing more
    safe-looking steps, which a sum of step rewards pays; so the monitors also measure this.

    Under dense rewards, per credit form (``credit``, its keywords in ``credit_params``, a form's own
    defaults for those left out):

    - ``sum``: the sum of the step scores; ``min``: PURE's min-form sum ``sum softmax(-s/T) s``.
    - ``pure``: PURE pays ``p = sum softmax(-r/T) r`` over ``r = 2s - 1`` (which is ``2 m - 1``, ``m`` the
      min-form sum of the scores ``s`` at ``T / 2``): ``(p + 1) / 2`` is watched, the pay on the PRM's 0-1
      scale (0.5 for a completion without steps, which PURE pays 0).
    - ``anchor``: ``pure``'s pay plus, on the prompts of its share (:func:`~prmkit.rl.credits.
      verified_groups` over the prompt's text, the key the TRL trainer hashes), PURE's verifiable reward
      ``verifiable_coef * (o - 1)``, both on the 0-1 scale: ``(p + 1) / 2 + verifiable_coef * (o - 1) / 2``.
    - ``papo``: the outcome ``o`` plus ``process_weight`` times the mean step score for a correct answer
      (PAPO normalises the process part among the group's correct answers only: a wrong one is paid its
      outcome alone); like ``mixed``, the two parts are normalised apart in training, so this is their
      sum before normalisation.
    - ``prime``: ``process_coef`` times the sum of the step scores (the implicit process rewards
      ``prmkit rl`` feeds it) plus ``outcome_coef * o``: what PRIME's returns sum before its leave-one-out
      baselines, which depend on the group (and, for the process part, on each completion's length).

    ``pav``, ``prof`` and ``first_error`` are stated by :func:`prmkit.rl.train.paid_form` as the rewards
    they pay (``progress`` under ``sum``, the outcome).
    """

    reward: str
    """``outcome``, ``prm_aggregate``, ``dense``, ``mixed``, ``progress`` or ``gold_process``
    (``RlConfig.reward``)."""
    aggregation: str = "min"
    credit: str = "min"
    temperature: float = 0.1
    process_weight: float = 0.5
    progress_alpha: float = 1.0
    credit_params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """``anchor``, ``papo``, ``prime``: the form's keywords (``RlConfig.credit_params``)."""

    def pays_aggregate(self, aggregation: str) -> bool:
        """Whether the paid quantity is the PRM's ``aggregation`` itself (then it is ``prm_reward``)."""
        return self.reward == "prm_aggregate" and self.aggregation == aggregation

    def _param(self, keyword: str) -> Any:
        return {**form_defaults(self.credit), **self.credit_params}[keyword]

    def process(self, scores: Sequence[float]) -> float:
        """A finished completion's dense pay from its step scores alone (the class docstring): the sum
        (``sum``, ``prime`` unweighted), the mean (``papo``), or PURE's min-form sum (``min``; ``pure`` and
        ``anchor``: PURE's signed pay on the 0-1 scale)."""
        if self.credit in ("sum", "prime"):
            return float(sum(scores))
        if self.credit == "papo":
            return float(sum(scores) / len(scores)) if scores else 0.0
        if self.credit in ("pure", "anchor"):  # PURE's signed pay, put back on the PRM's 0-1 scale
            return (sum(min_form([2 * s - 1 for s in scores], self.temperature)) + 1) / 2
        return float(sum(min_form(list(scores), self.temperature)))

    def with_outcome(self, outcome: float, scores: Sequence[float], key: str | None) -> float:
        """The pay of a completion under a form that also reads its outcome (``anchor``, ``papo``,
        ``prime``; the class docstring)."""
        process = self.process(scores)
        if self.credit == "papo":
            return outcome + self._param("process_weight") * process * (outcome >= 0.5)
        if self.credit == "prime":
            return self._param("process_coef") * process + self._param("outcome_coef") * outcome
        if key is None:
            raise ValueError(
                "credit 'anchor' pays the outcome on a share of prompts chosen by the prompt: pass key"
            )
        (verified,) = verified_groups([key], self._param("share"))
        return process + verified * self._param("verifiable_coef") * (outcome - 1.0) / 2

    def of(
        self,
        outcome: float,
        scores: Sequence[float] | None,
        unfinished: float | None,
        start: float | None = None,
        key: str | None = None,
    ) -> float:
        """The pay of one completion: ``outcome`` 1/0, ``scores`` its step scores (None: it was paid
        ``unfinished``, as one step under the forms that read the outcome too, its outcome 0);
        ``start``: ``progress`` only, its problem's ``V(s_0)`` (:func:`~prmkit.rl.rewards.group_starts`);
        ``key``: ``anchor`` only, its prompt's text."""
        reads_outcome = self.credit in OUTCOME_FORMS and self.reward not in ("outcome", "prm_aggregate")
        if scores is None and not reads_outcome:
            return float(unfinished or 0.0)
        if scores is None:  # paid the unfinished rule as one step, and wrong
            outcome, scores = 0.0, [float(unfinished or 0.0)]
        if self.reward == "outcome":
            return outcome
        if self.reward == "prm_aggregate":
            return aggregate(scores, self.aggregation) if scores else 0.0
        steps = progress_rewards(scores, self.progress_alpha, start) if self.reward == "progress" else scores
        if reads_outcome:
            return self.with_outcome(outcome, steps, key)
        dense = self.process(steps)
        if self.reward == "mixed":
            return (1 - self.process_weight) * outcome + self.process_weight * dense
        return dense


OUTCOME_FORMS = ("anchor", "papo", "prime")
"""The credit forms whose pay :class:`PaidForm` states from the outcome and the step scores together."""

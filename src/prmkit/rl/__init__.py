"""RL against a PRM: step rewards -> token advantages, rewards that pay nothing for unfinished work,
and the shapes RL trainers take.

Contract: a completion's steps come from one split (:func:`steps.parse_completion`, the scorer's
``StepSplit``); :class:`rewards.ProcessReward` pays each step (a PRM, a server or ``arithmetic-oracle``);
:mod:`advantages` turns step rewards into token advantages with plain functions; the adapters hand them
to a trainer.

- ``steps.py``       the token each step of a completion ends at (the steps: ``prmkit.core.steps``)
- ``advantages.py``  outcome GRPO, process GRPO (PURE min-form by default, DeepSeekMath sum-form), the
                     unfinished cap, mixing on one scale
- ``credits.py``     ``CREDITS``: every credit form by name (sum, min, PURE's code, anchor, first-error,
                     PAPO, PROF, PAV, PRIME), step rewards (+ outcomes) of a batch -> token advantages
- ``prime.py``       PRIME's implicit PRM from outcome labels on the policy's samples: token rewards, loss,
                     one update step, its step rewards for the ``prime`` credit
- ``rewards.py``     ``outcome_reward``, ``trl_reward`` (PRM aggregate), ``ProcessReward`` (dense)
- ``emitters.py``    verl's ``(batch, response_length)`` reward tensor, per-turn step reward lists
- ``trl.py``         ``DenseGRPOTrainer``: TRL's GRPOTrainer with ``(batch, tokens)`` advantages;
                     ``PrimeGRPOTrainer``: the same, paid by an implicit PRM it updates online (PRIME)
- ``verl.py``        ``compute_score`` and ``PrmkitRewardManager`` for verl
- ``verl_rows.py``   what a verl dataset row tells the manager: the problem, the reference answer
- ``verl_client.py`` the same for a verl environment, scoring through ``prmkit serve`` with prmkit's own
                     step split; verl 0.9.1's reward loop loads it by name (``prmkit``) or path
- ``verl_advantages.py`` verl advantage estimators ``prmkit_<credit form>``: step rewards at step-end
                     tokens (and the outcome channel) -> ``credit_advantages``; where a run may place
                     step rewards
- ``verl_check.py``  ``python -m prmkit.rl.verl_check OVERRIDES``: a verl run's config composed and
                     checked as ``main_ppo`` would, without a GPU
- ``openrlhf.py``    ``openrlhf_rewards`` and ``reward_func`` for OpenRLHF
- ``config.py``      ``RlConfig``: one typed config for ``prmkit rl`` (prompts, reward, PRM, budget)
- ``rollout.py``     prompts of a run, the world's checker for prompt-text traces, TRL's rollouts through
                     prmkit's KV-cached sampler
- ``monitors.py``    hacking monitors on held-out samples (the proxy and the paid reward), the Goodhart,
                     length and collapse warnings, ``monitors.jsonl`` (and its per-problem counts,
                     ``monitors_per_problem.jsonl``, for the bootstrap over problems)
- ``paid.py``        ``PaidForm``: what a run's reward and credit form pay one completion (the monitors'
                     ``paid_reward``)
- ``plot.py``        the monitors' curves and the Goodhart plot
- ``series.py``      which series of the monitors' points is gold (read by the warnings and the plot)
- ``card.py``        the policy card (reward, PRM, budget, seeds, monitors, gold use)
- ``train.py``       ``train_policy(config, output_dir)``: GRPO with monitors, resumable, with its card
- ``study.py``       the RL study's statistics over its cells' monitor records: nested bootstrap over
                     draws x seeds x problems, paired differences, each draw alone, steps to a gain
- ``study_report.py`` its results file (``measure``), ``report.md`` and ``curves.png`` (``write_study``)
- ``study_block.py`` the docs view ``rl-measure`` (``render_measure_block``): the study's block
- ``views.py``       the RL page's other docs views: ``rl-faithfulness``, ``rl-causal-monitor``,
                     ``rl-gpu-check``

``trl.py`` and ``train.py`` import TRL (the ``rl`` extra) when used; importing ``prmkit.rl`` does not.
"""

from __future__ import annotations

from prmkit.core.steps import CompletionSteps, parse_completion
from prmkit.rl.advantages import (
    mixed_advantages,
    outcome_advantages,
    process_advantages,
    step_advantages,
)
from prmkit.rl.emitters import turn_step_rewards, verl_reward_tensor
from prmkit.rl.rewards import ProcessReward, StepRewards, outcome_reward, reward_name, trl_reward

__all__ = [
    "CompletionSteps",
    "ProcessReward",
    "StepRewards",
    "mixed_advantages",
    "outcome_advantages",
    "outcome_reward",
    "parse_completion",
    "process_advantages",
    "reward_name",
    "step_advantages",
    "trl_reward",
    "turn_step_rewards",
    "verl_reward_tensor",
]

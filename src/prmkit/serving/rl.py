"""The RL adapters moved to :mod:`prmkit.rl`; this module keeps the old import path (and a file path
verl configs point at) working.

- TRL: :func:`prmkit.rl.rewards.trl_reward` (and :func:`~prmkit.rl.rewards.reward_name`)
- verl: :func:`prmkit.rl.verl.compute_score`, :class:`prmkit.rl.verl.PrmkitRewardManager`
- OpenRLHF: :func:`prmkit.rl.openrlhf.openrlhf_rewards`, :func:`prmkit.rl.openrlhf.reward_func`

(The one import from the layer above: an alias, so nothing below ``prmkit.rl`` depends on it.)
"""

from __future__ import annotations

from prmkit.rl.openrlhf import openrlhf_rewards, reward_func
from prmkit.rl.rewards import outcome_reward, reward_name, trl_reward
from prmkit.rl.verl import PrmkitRewardManager, compute_score, step_end_tokens

__all__ = [
    "PrmkitRewardManager",
    "compute_score",
    "openrlhf_rewards",
    "outcome_reward",
    "reward_func",
    "reward_name",
    "step_end_tokens",
    "trl_reward",
]

"""OpenRLHF adapters: the reward body for ``queries`` and a local ``reward_func``.

OpenRLHF places one reward at the EOS token. A response with no final answer gets ``unfinished_reward``
(default 0.0; see :mod:`prmkit.rl.rewards`), and so does one with more steps than a server scores
(``max_steps_per_trace`` of its ``GET /health``; 0.0 where ``unfinished_reward`` is None): the same
answers as the server's ``/get_reward``.

One number per response is all OpenRLHF 0.11.2 takes: its ``Experience.rewards`` is (B,), its rollout asks
for each response's reward alone, and its advantage estimators are a fixed if-chain. So none of
:mod:`prmkit.rl.credits`' forms can be expressed through it, token-level or group-relative (docs/rl.md,
"Credit forms", says which line of OpenRLHF rules out which; tests/rl/test_openrlhf_credits.py runs
OpenRLHF's own code for it): use TRL or verl for step-level credit.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from prmkit.core.protocols import StepScorer
from prmkit.core.steps import StepSplit, split_query
from prmkit.rl.rewards import ProcessReward
from prmkit.scoring.aggregate import aggregate
from prmkit.scoring.remote import API_KEY_ENV


def openrlhf_rewards(
    queries: Sequence[str],
    prompts: Sequence[str],
    model: str | StepScorer,
    aggregation: str = "min",
    split: StepSplit | None = None,
    api_key: str | None = None,
    unfinished_reward: float | None = 0.0,
) -> dict[str, Any]:
    """The body of OpenRLHF's reward answer for ``queries`` (prompt + response with template tokens)."""
    process = ProcessReward(model, split=split, unfinished_reward=unfinished_reward, api_key=api_key)
    heads, responses = [], []
    for query, prompt in zip(queries, prompts, strict=True):
        head, response = split_query(query, prompt)
        heads.append(head)
        responses.append(response)
    paid = process.score(heads, responses) if queries else []
    rule = float(unfinished_reward or 0.0)
    rewards = [rule if p.unpaid else aggregate(p.rewards, aggregation) if p.rewards else 0.0 for p in paid]
    return {
        "rewards": rewards,
        "scores": [min(1.0, max(0.0, r)) for r in rewards],
        "extra_logs": {
            "prm_num_steps": [float(len(p.parsed.steps)) for p in paid],
            "prm_finished": [float(p.parsed.finished) for p in paid],
            "prm_overlong": [float(p.overlong) for p in paid],
        },
    }


def _unfinished_from_env() -> float | None:
    raw = os.environ.get("PRMKIT_UNFINISHED_REWARD", "0")
    if raw.strip().lower() == "none":
        return None
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"PRMKIT_UNFINISHED_REWARD: expected a number or 'none', found {raw!r}") from None


def reward_func(
    queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], **kwargs: Any
) -> dict[str, Any]:
    """OpenRLHF local reward (``--reward.remote_url reward.py`` whose file re-exports this function).

    Configured by environment, since OpenRLHF passes no options: ``PRMKIT_REWARD_MODEL`` (checkpoint or
    server URL), ``PRMKIT_API_KEY`` (the key of a server started with ``--api-key``, the variable the
    server reads), ``PRMKIT_AGGREGATION`` (default min), ``PRMKIT_STEP_SEPARATOR`` (default newline),
    ``PRMKIT_UNFINISHED_REWARD`` (default 0; ``none`` scores unfinished responses' steps).
    Returns torch tensors, as OpenRLHF's own examples do.
    """
    import torch

    model = os.environ.get("PRMKIT_REWARD_MODEL")
    if not model:
        raise ValueError("reward_func: set PRMKIT_REWARD_MODEL to a prmkit checkpoint folder or server URL")
    split = StepSplit(step_separator=os.environ.get("PRMKIT_STEP_SEPARATOR", "\n"))
    body = openrlhf_rewards(
        queries, prompts, model, os.environ.get("PRMKIT_AGGREGATION", "min"), split,
        api_key=os.environ.get(API_KEY_ENV) or None, unfinished_reward=_unfinished_from_env(),
    )  # fmt: skip
    return {
        "rewards": torch.tensor(body["rewards"], dtype=torch.float32),
        "scores": torch.tensor(body["scores"], dtype=torch.float32),
        "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in body["extra_logs"].items()},
    }

"""PRIME's online implicit PRM (Cui et al. 2025, arXiv 2502.01456): the PRM is a causal LM read against a
reference (:class:`prmkit.modeling.released.ImplicitPair`, the ``implicit`` convention), and during RL it
is updated from outcome labels on the policy's own samples, so its process rewards follow the policy.

- :func:`implicit_token_rewards`: ``log pi_phi(y_t) - log pi_ref(y_t)`` per response token, (B, L).
- :func:`implicit_prm_loss`: PRIME-RL's ``compute_ce_dpo_loss_rm``: the cross-entropy of
  ``sigmoid(beta * sum_t r_t)`` against each sample's outcome (1 correct, 0 wrong).
- :func:`update_implicit_prm`: one optimiser step of that loss on a batch of policy samples.
- :func:`step_rewards`: ``beta`` times the token rewards, one per token, for the ``prime`` credit form
  (:func:`prmkit.rl.credits.prime`, every token a step).

A trainer calls, per RL step: score the batch (:func:`implicit_token_rewards` under ``no_grad``), compute
advantages (``credit="prime"``), then :func:`update_implicit_prm` on the same samples and labels (PRIME
updates the PRM before or after computing advantages; its default scores first).
"""

from __future__ import annotations

from typing import Any

from prmkit.scoring.conventions import causal_reads


def implicit_token_rewards(pair: Any, input_ids: Any, attention_mask: Any, response_mask: Any) -> Any:
    """``log pi_phi(x_t) - log pi_ref(x_t)`` at every token of ``response_mask`` (0 elsewhere), (B, L); the
    gradient flows through the PRM, not the reference."""
    import torch

    batch = {"input_ids": input_ids, "attention_mask": attention_mask}
    with torch.no_grad():
        reference = causal_reads(pair.reference, batch)
    return (causal_reads(pair.policy, batch) - reference) * response_mask


def implicit_prm_loss(token_rewards: Any, labels: Any, beta: float) -> Any:
    """PRIME's cross-entropy loss: ``BCE(sigmoid(beta * sum_t r_t), label)`` over the batch."""
    import torch

    scores = (token_rewards.sum(dim=1) * beta).sigmoid()
    return torch.nn.functional.binary_cross_entropy(scores, labels.to(scores.dtype))


def update_implicit_prm(
    pair: Any, optimizer: Any, input_ids: Any, attention_mask: Any, response_mask: Any, labels: Any
) -> float:
    """One step of :func:`implicit_prm_loss` on policy samples and their outcome labels; the loss before it."""
    pair.policy.train()
    optimizer.zero_grad()
    loss = implicit_prm_loss(
        implicit_token_rewards(pair, input_ids, attention_mask, response_mask), labels, pair.beta
    )
    loss.backward()
    optimizer.step()
    return float(loss.detach())


def step_rewards(
    token_rewards: Any, response_mask: Any, beta: float
) -> tuple[list[list[float]], list[list[int]]]:
    """Per sample, ``beta * r_t`` at each response token and the token positions (counted from the
    response's first token): the ``prime`` credit form's step rewards and step ends."""
    rewards, ends = [], []
    for row, mask in zip(token_rewards.detach().tolist(), response_mask.tolist(), strict=True):
        at = [t for t, m in enumerate(mask) if m]
        first = at[0] if at else 0
        rewards.append([beta * row[t] for t in at]), ends.append([t - first for t in at])
    return rewards, ends

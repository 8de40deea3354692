"""PRIME's online implicit PRM (Cui et al. 2025, arXiv 2502.01456): the PRM is a causal LM read against a
reference (:class:`prmkit.modeling.released.ImplicitPair`, the ``implicit`` convention), and during RL it
is updated from outcome labels on the policy's own samples, so its process rewards follow the policy.

- :func:`implicit_token_rewards`: ``log pi_phi(y_t) - log pi_ref(y_t)`` per response token, (B, L).
- :func:`implicit_prm_loss`: PRIME-RL's ``compute_ce_dpo_loss_rm``: the cross-entropy of
  ``sigmoid(beta * sum_t r_t)`` against each sample's outcome (1 correct, 0 wrong).
- :func:`update_implicit_prm`: one optimiser step of that loss on a batch of policy samples.
- :func:`label_accuracy`: the share of samples whose ``sigmoid(beta * sum_t r_t)`` lies on their label's
  side of 0.5 (what a run logs, before each update, to show the PRM learning).
- :func:`step_rewards`: ``beta`` times the token rewards, one per token, for the ``prime`` credit form
  (:func:`prmkit.rl.credits.prime`, every token a step).

:class:`prmkit.rl.trl.PrimeGRPOTrainer` (``prmkit rl`` with ``credit: prime``) calls, per RL step: score
the batch (:func:`implicit_token_rewards` under ``no_grad``), compute advantages (``credit="prime"``),
then :func:`update_implicit_prm` on the same samples and labels (PRIME updates the PRM before or after
computing advantages; its default scores first).
"""

from __future__ import annotations

from typing import Any

from prmkit.scoring.conventions import causal_reads

PRIME_DIR = "implicit_prm"
"""Where a run's folder (and each of its checkpoints) keeps the implicit PRM: an ordinary HF folder."""


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
    pair: Any,
    optimizer: Any,
    input_ids: Any,
    attention_mask: Any,
    response_mask: Any,
    labels: Any,
    max_grad_norm: float | None = None,
) -> float:
    """One step of :func:`implicit_prm_loss` on policy samples and their outcome labels, the gradient's norm
    clipped at ``max_grad_norm`` (PRIME's recipe: 10); the loss before it."""
    import torch

    pair.policy.train()
    optimizer.zero_grad()
    loss = implicit_prm_loss(
        implicit_token_rewards(pair, input_ids, attention_mask, response_mask), labels, pair.beta
    )
    loss.backward()
    if max_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_(pair.policy.parameters(), max_grad_norm)
    optimizer.step()
    return float(loss.detach())


def label_accuracy(token_rewards: Any, labels: Any, beta: float) -> float:
    """The share of samples the PRM classifies as their outcome labels do: ``sigmoid(beta * sum_t r_t)``
    above 0.5 for a correct one, below for a wrong one; a score of exactly 0.5 (the PRM still its
    reference, or indifferent) counts half, a coin's guess."""
    scores = token_rewards.detach().sum(dim=1) * beta
    right = [
        0.5 if s == 0 else float((s > 0) == (y >= 0.5))
        for s, y in zip(scores.tolist(), labels.tolist(), strict=True)
    ]
    return sum(right) / len(right) if right else 0.0


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

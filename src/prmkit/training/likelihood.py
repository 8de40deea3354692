"""The likelihood head's objective: a causal LM trained so that its lowest token probability in a step
says whether the step is right.

Why a PRM can be a language model read this way: a pretrained LM that knows the task already gives a wrong
step one improbable token (a wrong digit, a quantity the problem does not have, an answer before the last
operation), so "the step's least likely token" is a verifier before any label is seen (the ``likelihood``
convention). Fine-tuning on step labels trains exactly that read-out: with ``s = min_t p(x_t | x_<t)``
over the step's tokens, binary cross-entropy pushes the least likely token of a correct step up and the
least likely token of a wrong one down, and the ordinary LM loss on correct steps keeps the model a
language model. On the embedded world this reaches first-error F1 0.95 in minutes where a classifier head
on the same two-layer LM stays near 0.35 (docs/models.md): a small LM spends its layers predicting and has
none left to compare a written token with its prediction and carry the verdict to a tag; read-out by
likelihood does the comparison outside the network.
"""

from __future__ import annotations

from typing import Any

from prmkit.modeling.spec import token_reads
from prmkit.training.data import IGNORE


def step_min_logp(logits: Any, batch: dict[str, Any], surprisal: str = "raw") -> tuple[Any, Any, Any]:
    """Per step, the lowest token log-probability, the sum and the count of its tokens' log-probabilities.

    Step ``j`` of a row is its tokens after the tag of step ``j - 1`` (after the prompt for ``j = 0``) up to
    and including its own tag, the closing newline, less the tool results it reads where the batch has a
    ``context_mask`` (an agent's results are as surprising after a right step as after a wrong one, so
    they would set the right steps' minimum). The minimum is of the read-out ``surprisal`` names
    (:func:`prmkit.modeling.spec.token_logp`); the sum is of plain log-probabilities (the LM loss).
    Returns three ``(B, S)`` tensors, ``S`` = most steps in the batch; steps a row does not have hold 0.
    """
    import torch

    ids, tags = batch["input_ids"], batch["tag_mask"]
    B, L = ids.shape
    token_logp, read = token_reads(logits, ids, surprisal)
    before = tags.long().cumsum(1) - tags.long()  # tags strictly before each token: its step number
    S = int(tags.sum(1).max().item()) if tags.any() else 0
    positions = torch.arange(L, device=ids.device)[None, :]
    inside = (positions >= batch["prompt_length"][:, None].clamp(min=1)) & (
        before < tags.sum(1, keepdim=True)
    )
    if "context_mask" in batch:
        inside &= ~batch["context_mask"]
    step = torch.where(inside, before, torch.full_like(before, S))  # S: a column for tokens of no step
    mins = torch.zeros((B, S + 1), device=ids.device).scatter_reduce(
        1, step, read, "amin", include_self=False
    )
    sums = torch.zeros((B, S + 1), device=ids.device).scatter_add(1, step, token_logp)
    counts = torch.zeros((B, S + 1), device=ids.device).scatter_add(1, step, inside.float())
    return mins[:, :S], sums[:, :S], counts[:, :S]


def step_targets_by_step(batch: dict[str, Any], steps: int) -> Any:
    """The ``(B, S)`` targets of each row's steps, in order (``IGNORE`` where masked or missing)."""
    import torch

    tags, targets = batch["tag_mask"], batch["step_targets"]
    before = tags.long().cumsum(1) - tags.long()
    index = torch.where(tags, before, torch.full_like(before, steps))
    out = torch.full((tags.shape[0], steps + 1), IGNORE, device=targets.device)
    out.scatter_(1, index, torch.where(tags, targets, torch.full_like(targets, IGNORE)))
    return out[:, :steps]


def likelihood_loss(
    logits: Any,
    batch: dict[str, Any],
    lm_weight: float,
    noise: tuple[float, float] = (0.0, 0.0),
    surprisal: str = "raw",
) -> Any:
    """Min-pooled binary cross-entropy on the step targets (hard or soft; :func:`binary_loss` with
    ``noise``), plus ``lm_weight`` times the mean per-token negative log-likelihood of the correct steps,
    each weighted by its posterior of really being correct (1 without noise), so a wrong step labelled
    correct does not teach the LM to write its error. ``surprisal``: the read-out trained (``PrmSpec``);
    an ``excess`` minimum above 0 reads as probability 1."""
    import torch

    from prmkit.training.loop import binary_loss

    mins, sums, counts = step_min_logp(logits, batch, surprisal)
    targets = step_targets_by_step(batch, mins.shape[1])
    labelled = targets != IGNORE
    if not labelled.any():
        return logits.sum() * 0.0
    logp = mins[labelled].clamp(max=-1e-6)  # log s, s = the least likely token's probability
    y = targets[labelled]
    losses, trust = binary_loss(logp, torch.log1p(-logp.exp()), y, noise)
    loss = losses.mean()
    correct = (y >= 0.5) & (counts[labelled] > 0)
    if lm_weight > 0 and correct.any():
        nll = -(sums[labelled][correct] / counts[labelled][correct])
        loss = loss + lm_weight * (trust[correct] * nll).mean()
    return loss

"""Step rewards -> token advantages, as plain functions of lists (any trainer can call them).

Completions come in *groups*: ``group_size`` consecutive completions sample the same prompt (TRL's and
verl's GRPO layout). Each completion has one reward per step and the token index where each step ends
(:mod:`prmkit.rl.steps`); a token belongs to the first step ending at or after it (tokens past the last
step's end belong to the last step).

- :func:`outcome_advantages`: outcome-supervised GRPO (DeepSeekMath, arXiv 2402.03300 §4.1.2): one
  reward per completion, normalised by its group's mean and standard deviation; every token of a
  completion gets its completion's value.
- :func:`process_advantages`: process-supervised GRPO (§4.1.3): every step reward is normalised by the
  mean and standard deviation of *all* step rewards of the group, and a token's advantage is the sum
  of the normalised rewards of its step and every later step (``credit="sum"``).
  ``credit="min"`` is PURE's min-form credit assignment (Cheng et al. 2025, arXiv 2504.15275): a
  completion's normalised step rewards ``r`` are reweighted to ``softmax(-r / temperature) * r`` (PURE's
  code, ``temperature`` 0.1) before the same suffix sums, so the first token's advantage is close to the
  completion's *worst* normalised step and cannot grow with the number of good steps (the sum-form hack
  PURE reports). This is *not* PURE's code, which reweights raw rewards and then subtracts a
  leave-one-out baseline: reweighting after normalisation leans each completion to its lowest step,
  below the group mean, so whole groups get negative advantages (issue 60). PURE's form as its code
  computes it is the credit form ``pure`` (:func:`prmkit.rl.credits.pure`); ``min`` is kept to compare
  with earlier runs. Every credit form (``sum``, ``min``, ``pure``, ``anchor``, ``first_error``,
  ``papo``, ``prof``, ``pav``, ``prime``) is registered in :mod:`prmkit.rl.credits`.
- :func:`mixed_advantages`: ``(1 - w) * outcome + w * process``, token by token, the process part put on
  outcome's scale first (:func:`standardized`, one factor per batch) with ``scale=True``.
- :func:`cap_unpaid`: a completion paid the unfinished rule gets no more than the worst finished one
  of its group.

Standard deviations are the sample's (Bessel-corrected, as ``torch.std``) with ``eps`` added to the
divisor, as TRL's GRPOTrainer does (1e-4), so a group whose rewards are all equal gets advantage 0
everywhere and a group of one completion (or one step) gets 0 too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from prmkit.rl.steps import step_of_tokens

Credit = Literal["sum", "min"]
EPS = 1e-4
"""Added to a group's standard deviation before dividing (TRL's GRPOTrainer adds the same)."""


def _groups(n: int, group_size: int, what: str) -> range:
    if group_size < 1 or n % group_size:
        raise ValueError(f"{what}: expected a multiple of group_size={group_size} completions, found {n}")
    return range(0, n, group_size)


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    if n == 0:
        return 0.0, 0.0
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return mean, math.sqrt(var)


def _scaled(values: Sequence[float], mean: float, std: float, eps: float) -> list[float]:
    # a constant group deviates by 0 everywhere: 0, even with eps=0
    return [(v - mean) / (std + eps) if std + eps > 0 else 0.0 for v in values]


def outcome_advantages(rewards: Sequence[float], group_size: int, eps: float = EPS) -> list[float]:
    """One advantage per completion: ``(r - mean) / (std + eps)`` over its group (0 for a constant group)."""
    out: list[float] = []
    for g in _groups(len(rewards), group_size, "outcome_advantages"):
        group = [float(r) for r in rewards[g : g + group_size]]
        mean, std = _mean_std(group)
        out.extend(_scaled(group, mean, std, eps))
    return out


def min_form(rewards: Sequence[float], temperature: float = 0.1) -> list[float]:
    """PURE's reweighting of one completion's step rewards: ``softmax(-r / T) * r``; their sum tends
    to ``min(r)`` as ``T`` goes to 0 (tied minima share it)."""
    if temperature <= 0:
        raise ValueError(f"min_form: temperature: expected > 0, found {temperature}")
    if not rewards:
        return []
    low = min(rewards)
    weights = [math.exp(-(r - low) / temperature) for r in rewards]  # shifted: no overflow
    total = sum(weights)
    return [w / total * r for w, r in zip(weights, rewards, strict=True)]


def normalize_steps(
    step_rewards: Sequence[Sequence[float]], group_size: int, eps: float = EPS
) -> list[list[float]]:
    """DeepSeekMath's normalisation: each step reward minus the mean of every step reward of its group,
    divided by their standard deviation (+ ``eps``)."""
    out: list[list[float]] = []
    for g in _groups(len(step_rewards), group_size, "normalize_steps"):
        group = [[float(r) for r in row] for row in step_rewards[g : g + group_size]]
        mean, std = _mean_std([r for row in group for r in row])
        out.extend(_scaled(row, mean, std, eps) for row in group)
    return out


def suffix_sums(values: Sequence[float]) -> list[float]:
    """``out[k] = values[k] + values[k + 1] + ...``: a step's return under sum-form credit."""
    out, total = [0.0] * len(values), 0.0
    for k in range(len(values) - 1, -1, -1):
        total += values[k]
        out[k] = total
    return out


def cap_unpaid(
    per_step: Sequence[Sequence[float]], unpaid: Sequence[bool], group_size: int
) -> list[list[float]]:
    """An unpaid completion's advantage, at most the lowest first-step advantage of a paid completion
    of its group.

    An unpaid completion (no final answer, paid ``unfinished_reward``) is one step. Under sum credit a
    finished completion's first token sums every later step's normalised reward, so a finished poor
    completion of many low steps can stand far below the one-step unfinished one (-5.06 against -1.79 in
    the worked example of issue 36): stopping before the answer would be the cheaper failure. Capping at
    the worst paid completion of the group makes not finishing at least as costly as the worst finish,
    whatever the credit; a group with no paid completion keeps its values.
    """
    if len(unpaid) != len(per_step):
        raise ValueError(f"unpaid: expected {len(per_step)} flags, found {len(unpaid)}")
    out = [list(row) for row in per_step]
    for g in _groups(len(per_step), group_size, "cap_unpaid"):
        firsts = [out[i][0] for i in range(g, g + group_size) if not unpaid[i] and out[i]]
        if not firsts:
            continue
        floor = min(firsts)
        for i in range(g, g + group_size):
            if unpaid[i]:
                out[i] = [min(v, floor) for v in out[i]]
    return out


def step_advantages(
    step_rewards: Sequence[Sequence[float]],
    group_size: int,
    credit: Credit = "min",
    temperature: float = 0.1,
    eps: float = EPS,
    unpaid: Sequence[bool] | None = None,
) -> list[list[float]]:
    """Per step, the advantage every token of that step gets (before spreading over tokens).

    ``unpaid`` flags the completions paid the unfinished rule (one step of ``unfinished_reward``);
    their advantage is capped by :func:`cap_unpaid`. The default credit is ``min``: a completion's
    advantage cannot be raised by adding correct-looking steps, which ``sum`` pays for.
    """
    if credit not in ("sum", "min"):
        raise ValueError(f"credit: expected 'sum' or 'min', found {credit!r}")
    rows = normalize_steps(step_rewards, group_size, eps)
    if credit == "min":
        rows = [min_form(r, temperature) for r in rows]
    per_step = [suffix_sums(row) for row in rows]
    return per_step if unpaid is None else cap_unpaid(per_step, unpaid, group_size)


def spread(step_values: Sequence[float], ends: Sequence[int], length: int) -> list[float]:
    """Token values of one completion from its per-step values: each token gets its step's value
    (0 everywhere for a completion with no step)."""
    if len(step_values) != len(ends):
        raise ValueError(f"spread: {len(step_values)} step values but {len(ends)} step ends")
    if not step_values:
        return [0.0] * length
    return [step_values[k] for k in step_of_tokens(ends, length)]


def process_advantages(
    step_rewards: Sequence[Sequence[float]],
    ends: Sequence[Sequence[int]],
    lengths: Sequence[int],
    group_size: int,
    credit: Credit = "min",
    temperature: float = 0.1,
    eps: float = EPS,
    unpaid: Sequence[bool] | None = None,
) -> list[list[float]]:
    """Process-supervised GRPO token advantages, one list of ``lengths[i]`` values per completion
    (``unpaid``: see :func:`step_advantages`)."""
    per_step = step_advantages(step_rewards, group_size, credit, temperature, eps, unpaid)
    return [spread(v, e, n) for v, e, n in zip(per_step, ends, lengths, strict=True)]


def standardized(process: Sequence[Sequence[float]], eps: float = EPS) -> list[list[float]]:
    """Process token advantages divided by the root mean square of the batch's first-token values
    (+ ``eps``): on the scale of outcome GRPO's advantages, one factor for the whole batch.

    Outcome advantages have unit spread within a group; process ones under sum credit grow with the
    number of steps (several times outcome's in the world), so an unscaled ``0.5`` mix was mostly
    process and the KL term's relative weight shifted from one setting to the next. One factor per batch,
    not per group: a group whose completions start at nearly one value has nothing to say, and dividing
    it by its own tiny spread made noise into large advantages (the world's mixed cells collapsed so,
    process-correct 33.6 -> 5.2 % in 100 steps, seeds 0 and 1). A batch of zeros is left as it is.
    """
    firsts = [row[0] for row in process if row]
    rms = math.sqrt(sum(v * v for v in firsts) / len(firsts)) if firsts else 0.0
    if rms == 0.0:
        return [list(row) for row in process]
    return [[v / (rms + eps) for v in row] for row in process]


def mixed_advantages(
    outcome: Sequence[float],
    process: Sequence[Sequence[float]],
    process_weight: float,
    scale: bool = False,
) -> list[list[float]]:
    """``(1 - w) * outcome + w * process`` per token (``w`` = ``process_weight`` in [0, 1]; 0 is
    outcome-only GRPO, 1 process-only). With ``scale`` the process part (the whole batch) is first put on
    outcome's scale (:func:`standardized`), so ``w`` is the share each part has of the signal; without it
    the two are mixed as given."""
    if not 0.0 <= process_weight <= 1.0:
        raise ValueError(f"process_weight: expected a number in [0, 1], found {process_weight}")
    w = process_weight
    if scale and 0.0 < w < 1.0:
        process = standardized(process)
    return [[(1 - w) * o + w * p for p in row] for o, row in zip(outcome, process, strict=True)]


def to_tensor(rows: Sequence[Sequence[float]], width: int) -> object:
    """A ``(len(rows), width)`` float32 tensor, each row right-padded with 0 (what a padded
    completion batch lines up with)."""
    import torch

    out = torch.zeros((len(rows), width), dtype=torch.float32)
    for i, row in enumerate(rows):
        if len(row) > width:
            raise ValueError(f"to_tensor: row {i} has {len(row)} values, more than width {width}")
        out[i, : len(row)] = torch.tensor(row, dtype=torch.float32)
    return out

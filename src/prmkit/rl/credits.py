"""Credit forms: one registry of named functions from a batch's step rewards to token advantages.

Each form reads a :class:`Rollouts` (step rewards, the token where each step ends, response lengths, the
groups of completions sharing a prompt and, for the forms that need it, each completion's outcome: 1.0
correct, 0.0 wrong) and returns one list of ``lengths[i]`` token advantages per completion.
:class:`~prmkit.rl.trl.DenseGRPOTrainer` (``credit=``) and the verl estimators
(:mod:`prmkit.rl.verl_advantages`, ``prmkit_<name>``) look forms up here by name, as ``RlConfig.credit``
does (:func:`check_params` refuses a keyword a form does not take).

- ``sum``: DeepSeekMath's process supervision (arXiv 2402.03300 §4.1.3), :func:`process_advantages`.
- ``min``: prmkit's earlier min credit (normalise, then PURE's weights); kept to compare with past runs.
- ``pure``: PURE's min-form as its code computes it (Cheng et al. 2025, arXiv 2504.15275; CJReinforce/PURE
  ``experience_maker.py`` + ``replay_buffer.normalize``): :func:`pure`.
- ``anchor``: ``pure`` plus PURE's verifiable reward on a share (10 %) of the prompts (PURE §5, "PRM + 10 %
  VR").
- ``first_error``: VPPO (Liu et al. 2026, arXiv 2601.18984): a wrong answer's verified prefix is spared,
  the tokens from the first doubted step on carry its outcome penalty: :func:`first_error`.
- ``papo``: PAPO (Tan et al. 2026, arXiv 2603.26535): outcome advantage plus a process advantage normalised
  among the group's correct answers only: :func:`papo`.
- ``prof``: PROF (Ye et al. 2025, arXiv 2509.03403): the PRM filters outcome-paid samples, keeping correct
  answers it supports and wrong ones it doubts, balanced; it pays nothing itself: :func:`prof`.
- ``pav``: PAV (Setlur et al. 2024, arXiv 2410.08146): the step scores read as a (different) prover's values,
  each step paid ``Q + alpha * A``, sum credit: :func:`pav`.
- ``prime``: PRIME (Cui et al. 2025, arXiv 2502.01456; PRIME-RL ``recipe/prime/prime_core_algos.py``
  ``compute_rloo_advantage_return``): implicit process rewards and the outcome, each leave-one-out, summed,
  returned and whitened: :func:`prime`. The online update of the implicit PRM is :mod:`prmkit.rl.prime`.
"""

from __future__ import annotations

import difflib
import inspect
import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from prmkit.core.registry import Registry
from prmkit.rl.advantages import EPS, min_form, outcome_advantages, process_advantages
from prmkit.rl.rewards import progress_rewards
from prmkit.rl.steps import step_of_tokens

__all__ = [
    "CREDITS",
    "CreditForm",
    "Rollouts",
    "check_params",
    "credit_advantages",
    "credit_names",
    "form_defaults",
]


@dataclass(frozen=True)
class Rollouts:
    """What a credit form reads of a batch: per completion its step rewards, the token where each step
    ends (:mod:`prmkit.rl.steps`), its length in tokens; ``groups`` the row numbers of each prompt's
    completions; ``outcome`` 1.0/0.0 per completion (None where unknown); ``unpaid`` the completions paid
    the unfinished rule; ``keys`` one name per group (a prompt, verl's uid) for ``anchor``'s share."""

    step_rewards: Sequence[Sequence[float]]
    ends: Sequence[Sequence[int]]
    lengths: Sequence[int]
    groups: Sequence[Sequence[int]]
    outcome: Sequence[float | None] | None = None
    unpaid: Sequence[bool] | None = None
    keys: Sequence[str] | None = None

    @classmethod
    def consecutive(cls, step_rewards, ends, lengths, group_size: int, **kwargs: Any) -> Rollouts:
        """``group_size`` consecutive completions per prompt (TRL's and verl's GRPO layout)."""
        n = len(step_rewards)
        if group_size < 1 or n % group_size:
            raise ValueError(f"expected a multiple of group_size={group_size} completions, found {n}")
        groups = [list(range(g, g + group_size)) for g in range(0, n, group_size)]
        return cls(step_rewards, ends, lengths, groups, **kwargs)

    def sub(self, rows: Sequence[int]) -> Rollouts:
        """The completions ``rows`` as one group."""
        pick = lambda xs: None if xs is None else [xs[i] for i in rows]  # noqa: E731
        return Rollouts(
            [self.step_rewards[i] for i in rows], [self.ends[i] for i in rows], [self.lengths[i] for i in rows],
            [list(range(len(rows)))], pick(self.outcome), pick(self.unpaid),
        )  # fmt: skip

    def correct(self, i: int) -> bool:
        return (self.outcome[i] or 0.0) >= 0.5 if self.outcome is not None else False


Form = Callable[..., list[list[float]]]


@dataclass(frozen=True)
class CreditForm:
    """A registered credit form: the function, whether it reads outcomes, and the paper in one line."""

    name: str
    fn: Form
    needs_outcome: bool
    source: str


CREDITS: Registry[CreditForm] = Registry("credit form", entry_points="prmkit.credits")


def credit_names(outcome: bool | None = None) -> list[str]:
    """Registered forms (``outcome=False``: only those that read step rewards alone)."""
    return [n for n in CREDITS.names() if outcome is None or CREDITS.get(n).needs_outcome == outcome]


def _keywords(fn: Form) -> list[str] | None:
    """The keywords ``fn`` takes after the rollouts; None where it takes any (``**params``)."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params]


def _signature(fn: Form) -> dict[str, inspect.Parameter]:
    """The keywords ``fn`` takes after the rollouts (``anchor``: its ``share`` and every keyword of
    :func:`pure`, which it passes on)."""
    params = dict(list(inspect.signature(fn).parameters.items())[1:])
    if fn is anchor:
        params = {"share": params["share"], **dict(list(inspect.signature(pure).parameters.items())[1:])}
    return params


def form_defaults(name: str) -> dict[str, Any]:
    """The keywords of the form ``name`` and their defaults: what a run that sets none of them computes
    (:class:`~prmkit.rl.paid.PaidForm` reads a form's parameters here where a run leaves them out)."""
    return {
        k: p.default
        for k, p in _signature(CREDITS.get(name).fn).items()
        if p.kind is not p.VAR_KEYWORD and p.default is not p.empty
    }


def check_params(name: str, params: Mapping[str, Any]) -> None:
    """Refuse a keyword the form ``name`` does not take, before any batch is computed: a misspelt
    parameter would otherwise stop a run at its first step (``TypeError``)."""
    fn = CREDITS.get(name).fn
    taken = list(_signature(fn)) if fn is anchor else _keywords(fn)
    if taken is None:
        return
    for key in params:
        if key not in taken:
            close = difflib.get_close_matches(key, taken, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"credit {name!r} takes {', '.join(taken) or 'no parameters'}, not {key!r}{hint}"
            )


def credit_advantages(name: str, rollouts: Rollouts, **params: Any) -> list[list[float]]:
    """Token advantages of ``rollouts`` under the registered form ``name`` (``params``: its keywords)."""
    form = CREDITS.get(name)
    if form.needs_outcome and (rollouts.outcome is None or all(o is None for o in rollouts.outcome)):
        raise ValueError(f"credit {name!r} reads each completion's outcome (1 correct, 0 wrong): none given")
    return form.fn(rollouts, **params)


def _per_group(r: Rollouts, one: Callable[[Rollouts], list[list[float]]]) -> list[list[float]]:
    out: list[list[float]] = [[] for _ in r.lengths]
    for rows in r.groups:
        for i, row in zip(rows, one(r.sub(rows)), strict=True):
            out[i] = row
    return out


def _flat(value: float, length: int) -> list[float]:
    return [value] * length


def _loo(values: Sequence[float], i: int) -> float:
    """The mean of ``values`` without its ``i``-th (0 for a group of one)."""
    n = len(values)
    return (sum(values) - values[i]) / (n - 1) if n > 1 else 0.0


# ---- sum, min (prmkit's earlier min), pav ---------------------------------------------------------


def summed(r: Rollouts, eps: float = EPS) -> list[list[float]]:
    """DeepSeekMath §4.1.3: step rewards normalised over the group, a token paid its step's suffix sum."""
    return _per_group(r, lambda g: process_advantages(g.step_rewards, g.ends, g.lengths, len(g.lengths), "sum",
                                                      eps=eps, unpaid=g.unpaid))  # fmt: skip


def reweighted(r: Rollouts, temperature: float = 0.1, eps: float = EPS) -> list[list[float]]:
    """prmkit's earlier ``min``: normalised step rewards reweighted by PURE's softmax (not centred, issue 60)."""
    return _per_group(r, lambda g: process_advantages(g.step_rewards, g.ends, g.lengths, len(g.lengths), "min",
                                                      temperature, eps, g.unpaid))  # fmt: skip


def pav(r: Rollouts, alpha: float = 1.0, eps: float = EPS) -> list[list[float]]:
    """PAV §3.3: step scores read as the prover's ``Q``; each step paid ``Q_k + alpha (Q_k - Q_{k-1})``,
    ``Q_{-1}`` the group's mean first value (:func:`~prmkit.rl.rewards.progress_rewards`), sum credit."""

    def one(g: Rollouts) -> list[list[float]]:
        firsts = [row[0] for row in g.step_rewards if row]
        start = sum(firsts) / len(firsts) if firsts else None
        paid = [progress_rewards(list(row), alpha, start) for row in g.step_rewards]
        return process_advantages(paid, g.ends, g.lengths, len(g.lengths), "sum", eps=eps, unpaid=g.unpaid)

    return _per_group(r, one)


# ---- PURE and the anchor ----------------------------------------------------------------------------


def pure(
    r: Rollouts,
    temperature: float = 0.1,
    baseline: Literal["token", "step"] = "token",
    verifiable_coef: float = 1.0,
    signed: bool = True,
    mask_ends: bool = True,
    whiten: bool = True,
) -> list[list[float]]:
    """PURE's min-form as its code computes it (CJReinforce/PURE ``openrlhf``, commit 41f9363).

    1. ``signed``: a PRM probability ``s`` becomes PURE's reward ``p(correct) - p(wrong) = 2s - 1``;
       each step reweighted ``softmax(-r / T) * r`` (``turn_process_reward_logits_to_reward``).
    2. A leave-one-out baseline (``process_experiences``): ``token`` (PURE's train script) subtracts from
       each step ``n_k * sum_{j!=i} paid_j / sum_{j!=i} len_j``, ``n_k`` its tokens less its end token;
       ``step`` (PURE's CLI default) subtracts the others' mean ``paid_j / steps_j``.
    3. With an outcome, ``verifiable_coef * ((o - 1) - mean_{j!=i}(o_j - 1))`` at the last token (a
       completion with outcome None gets 0, PURE's problems without an answer).
    4. Returns: suffix sums over tokens (``make_experience_list``), 0 at step-end tokens (``mask_ends``).
    5. ``whiten``: the whole batch shifted and scaled as ``replay_buffer.normalize`` does (the mean over
       non-zero tokens, the spread over all tokens; zeros stay 0).

    PURE's per-token KL penalty belongs to the trainer and is left out; a group of one has baseline 0.
    """
    rows: list[list[float]] = [[] for _ in r.lengths]
    for group in r.groups:
        paid, weighted = [], []
        for i in group:
            raw = [2 * s - 1 if signed else s for s in r.step_rewards[i]]
            w = min_form(raw, temperature) if raw else []
            weighted.append(w), paid.append(sum(w))
        steps = [max(len(r.step_rewards[i]), 1) for i in group]
        lens = [r.lengths[i] for i in group]
        verified = [None if r.outcome is None or r.outcome[i] is None else r.outcome[i] - 1.0 for i in group]
        vr = [0.0 if v is None else v for v in verified]
        for n, i in enumerate(group):
            ends, length = r.ends[i], r.lengths[i]
            token = [0.0] * length
            if baseline == "token":
                others = sum(lens) - lens[n]
                per_token = (sum(paid) - paid[n]) / others if others else 0.0
                sizes = [e - p - 1 for e, p in zip(ends, [-1, *ends[:-1]], strict=True)]
                cut = [per_token * k for k in sizes]
            else:
                cut = [_loo([p / s for p, s in zip(paid, steps, strict=True)], n)] * len(ends)
            for e, w, c in zip(ends, weighted[n], cut, strict=True):
                token[e] += w - c
            if r.outcome is not None and length:
                token[-1] += verifiable_coef * (vr[n] - _loo(vr, n))
            rows[i] = _returns(token, set(ends) | ({length - 1} if length else set()) if mask_ends else set())
    return _pure_whiten(rows) if whiten else rows


def _returns(token: Sequence[float], masked: set[int]) -> list[float]:
    out, total = [0.0] * len(token), 0.0
    for t in range(len(token) - 1, -1, -1):
        total += token[t]
        out[t] = 0.0 if t in masked else total
    return out


def _pure_whiten(rows: list[list[float]]) -> list[list[float]]:
    values = [v for row in rows for v in row]
    count = sum(v != 0.0 for v in values)
    if not count:
        return rows
    mean = sum(values) / count
    rstd = 1 / math.sqrt(max(sum((v - mean) ** 2 for v in values) / count, 1e-8))
    return [[0.0 if v == 0.0 else (v - mean) * rstd for v in row] for row in rows]


def verified_groups(keys: Sequence[str], share: float) -> list[bool]:
    """Which groups carry a verifiable reward: a fixed ``share`` of prompts, chosen by a hash of the key."""
    return [zlib.crc32(k.encode()) % 10_000 < share * 10_000 for k in keys]


def anchor(r: Rollouts, share: float = 0.1, **params: Any) -> list[list[float]]:
    """PURE's PRM + verifiable reward on ``share`` of the prompts (PURE §5; their data: answers for 10 %)."""
    keys = list(r.keys) if r.keys is not None else [str(g) for g in range(len(r.groups))]
    outcome: list[float | None] = [None] * len(r.lengths)
    for rows, keep in zip(r.groups, verified_groups(keys, share), strict=True):
        for i in rows:
            outcome[i] = r.outcome[i] if keep and r.outcome is not None else None
    return pure(replace(r, outcome=outcome), **params)


# ---- outcome-anchored forms -------------------------------------------------------------------------


def first_error(
    r: Rollouts, threshold: float = 0.5, prefix_advantage: float = 0.0, eps: float = EPS
) -> list[list[float]]:
    """VPPO: outcome GRPO advantages, except that a wrong answer's tokens before its first step scored
    below ``threshold`` (its verified prefix) get ``prefix_advantage`` instead of the penalty; a wrong
    answer with no doubted step is doubted from its last step."""

    def one(g: Rollouts) -> list[list[float]]:
        adv = outcome_advantages([o or 0.0 for o in g.outcome], len(g.lengths), eps)  # type: ignore[union-attr]
        out = []
        for i, (a, rewards, ends, length) in enumerate(
            zip(adv, g.step_rewards, g.ends, g.lengths, strict=True)
        ):
            if g.correct(i) or not ends:
                out.append(_flat(a, length))
                continue
            first = next((k for k, s in enumerate(rewards) if s < threshold), len(rewards) - 1)
            out.append([prefix_advantage if k < first else a for k in step_of_tokens(ends, length)])
        return out

    return _per_group(r, one)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def papo(r: Rollouts, process_weight: float = 1.0, eps: float = EPS) -> list[list[float]]:
    """PAPO: ``A_out + w * A_proc``; ``A_out`` outcome GRPO over the group, ``A_proc`` a completion's mean
    step score normalised among the group's correct answers only (0 for wrong ones, or fewer than two)."""

    def one(g: Rollouts) -> list[list[float]]:
        out_adv = outcome_advantages([o or 0.0 for o in g.outcome], len(g.lengths), eps)  # type: ignore[union-attr]
        right = [i for i in range(len(g.lengths)) if g.correct(i)]
        scores = [_mean(g.step_rewards[i]) for i in right]
        proc = [0.0] * len(g.lengths)
        if len(right) > 1:
            for i, z in zip(right, outcome_advantages(scores, len(scores), eps), strict=True):
                proc[i] = z
        return [_flat(a + process_weight * p, n) for a, p, n in zip(out_adv, proc, g.lengths, strict=True)]

    return _per_group(r, one)


def prof(
    r: Rollouts, keep: int | None = None, penalty: float = 0.0, max_steps: int | None = None, eps: float = EPS
) -> list[list[float]]:
    """PROF (Algorithm 1): score ``(mean step score - penalty * [H = 1 or H >= max_steps]) * (+1 | -1)``
    (correct | wrong); remove ``n - keep`` completions (``keep``: half the group), each time from the side
    (correct or wrong) with more left, its lowest score first; outcome GRPO over the kept ones; the removed
    get advantage 0 (no gradient)."""

    def one(g: Rollouts) -> list[list[float]]:
        n = len(g.lengths)
        k = n // 2 if keep is None else keep
        sides: dict[bool, list[int]] = {True: [], False: []}
        for i in range(n):
            sides[g.correct(i)].append(i)

        def score(i: int) -> float:
            h = len(g.step_rewards[i])
            flag = h == 1 or (max_steps is not None and h >= max_steps)
            return (_mean(g.step_rewards[i]) - penalty * flag) * (1 if g.correct(i) else -1)

        for side in sides.values():
            side.sort(key=score)  # lowest first
        for _ in range(max(n - k, 0)):
            larger = sides[True] if len(sides[True]) >= len(sides[False]) else sides[False]
            larger.pop(0)
        kept = sorted(sides[True] + sides[False])
        adv = outcome_advantages([g.outcome[i] or 0.0 for i in kept], len(kept), eps) if kept else []  # type: ignore[index]
        value = dict(zip(kept, adv, strict=True))
        return [_flat(value.get(i, 0.0), g.lengths[i]) for i in range(n)]

    return _per_group(r, one)


def prime(r: Rollouts, process_coef: float = 5.0, outcome_coef: float = 5.0) -> list[list[float]]:
    """PRIME's ``compute_rloo_advantage_return``: process rewards (each step's at its end token, the
    implicit PRM's; every token a step for token-level rewards) and the outcome at the last token, each
    ``masked_rloo`` within the group (``r * n/(n-1) - sum_j mean_j / (n-1)`` over the reward's tokens, the
    means over each response's tokens), weighted by their coefficients, summed, returned (suffix sums) and
    whitened over the batch (``masked_whiten``: unbiased variance, + 1e-8)."""
    rows: list[list[float]] = [[] for _ in r.lengths]
    for group in r.groups:
        n = len(group)
        token = {i: [0.0] * r.lengths[i] for i in group}
        for i in group:
            for e, s in zip(r.ends[i], r.step_rewards[i], strict=True):
                token[i][e] += s
        if n > 1:
            base = sum(_mean(token[i]) for i in group) / (n - 1)
            acc = [r.outcome[i] or 0.0 if r.outcome is not None else 0.0 for i in group]
            for m, i in enumerate(group):
                proc = [process_coef * (v * n / (n - 1) - base) for v in token[i]]
                if proc:
                    proc[-1] += outcome_coef * (acc[m] * n / (n - 1) - sum(acc) / (n - 1))
                token[i] = proc
        for i in group:
            rows[i] = _returns(token[i], set())
    values = [v for row in rows for v in row]
    if len(values) < 2:
        return rows
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / len(values) * len(values) / (len(values) - 1)
    return [[(v - mean) / math.sqrt(var + 1e-8) for v in row] for row in rows]


for _name, _fn, _outcome, _source in (
    ("sum", summed, False, "DeepSeekMath (arXiv 2402.03300) §4.1.3"),
    ("min", reweighted, False, "prmkit's earlier min credit (PURE's weights after normalising)"),
    ("pure", pure, False, "PURE (arXiv 2504.15275), CJReinforce/PURE code"),
    ("anchor", anchor, True, "PURE §5: PRM + 10 % verifiable reward"),
    ("first_error", first_error, True, "VPPO (arXiv 2601.18984)"),
    ("papo", papo, True, "PAPO (arXiv 2603.26535)"),
    ("prof", prof, True, "PROF (arXiv 2509.03403)"),
    ("pav", pav, False, "PAV (arXiv 2410.08146)"),
    ("prime", prime, True, "PRIME (arXiv 2502.01456), PRIME-RL code"),
):
    CREDITS.register(_name, CreditForm(_name, _fn, _outcome, _source))

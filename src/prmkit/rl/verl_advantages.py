"""verl advantage estimators for process-supervised GRPO and PURE, reading step rewards from verl's tensors.

verl 0.9.1 hands a registered estimator only ``token_level_rewards`` (B, T), ``response_mask``, ``index``
(the group ids, ``uid``) and ``config`` (``algorithm``) (``ray_trainer.compute_advantage``, lines 250-279;
``reward_baselines`` too where a batch has them, which only ``remax`` writes). The step
structure must therefore be read back from ``token_level_rewards`` alone: prmkit's reward manager
(:mod:`prmkit.rl.verl_client`) writes each step's reward at the token where the step ends and writes a
reward of exactly 0.0 as **negative zero**, so a step end is a token whose value is non-zero or has its
sign bit set, and every other token is +0.0. Sums (what ``grpo`` and verl's logs read) are unchanged.

- ``prmkit_<name>``: the credit form ``<name>`` of :mod:`prmkit.rl.credits`, one estimator per form and
  the same name: ``prmkit_sum`` (DeepSeekMath §4.1.3; pays a response for adding correct-looking steps),
  ``prmkit_min`` (prmkit's earlier min credit: not raised by adding steps, but not centred; issue 60),
  ``prmkit_pure`` (PURE's code) and ``prmkit_pav`` read step rewards alone; ``prmkit_anchor``,
  ``prmkit_first_error``, ``prmkit_papo``, ``prmkit_prof`` and ``prmkit_prime`` also each response's
  outcome, read from the **outcome channel** below. Each runs its form with the keywords of verl's
  ``algorithm.prmkit`` section (:func:`credit_params`; e.g. ``+algorithm.prmkit.temperature=0.5`` for
  ``prmkit_pure``), the form's defaults for those left out.
- :data:`OLD_NAMES`: earlier names (``prmkit_process_grpo``, ``prmkit_credit_<name>``), registered too.
  ``prmkit_pure`` named prmkit's earlier min credit until issue 60; that form is ``prmkit_min`` now.
- :func:`dense_placement`: whether the reward manager writes step rewards at all, from verl's config
  (only for an estimator that reads them as steps, unless asked; refused where they would be summed).

The outcome channel. verl 0.9.1 gives a custom estimator no per-response field but
``token_level_rewards``: ``compute_advantage`` passes ``non_tensor_batch`` (where ``reward_extra_info``
lands) only to ``gdpo``, and the v1 trainer's ``_compute_advantage`` fetches only ``uid``,
``response_mask`` and ``rm_scores`` (plus log-probs and values) from its TransferQueue, the rewards cut to
each response's length. So the outcome travels inside ``rm_scores``: the value at a response's last
token (where verl's own managers put a response's score) is cut to a float32 whose 4 lowest mantissa
bits are replaced by a pattern (:data:`OUTCOME_BITS`: correct, wrong, unknown), a change of at most 15
float32 ulps (2e-6 relative) that no sum in verl's logs notices. The estimator reads the pattern at the
row's last token with any bit set, clears it, and then reads step ends as above (:func:`read_outcomes`).
A row without a pattern (another reward manager) is refused, not read as "wrong". verl copies
``rm_scores`` to ``token_level_rewards`` untouched unless ``use_kl_in_reward``, which is refused anyway.

Groups are read from ``index`` (verl's ``uid``), not from positions: verl drops samples and reorders a
batch (``_balance_batch``), so a group is every row with its uid, of whatever size. Each group is passed
to the credit form whole (:func:`prmkit.rl.credits.credit_advantages`, one call for the batch: PURE's
whitening spans it), so the numbers are exactly prmkit's. No torch, verl or scorer at import: the verl
client imports this file in environments that have none of them (:mod:`prmkit.rl.credits` is imported
when an estimator runs); :func:`register` needs verl.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Mapping, Sequence
from typing import Any

logger = logging.getLogger("prmkit.verl")

STEP_CREDITS = ("min", "pav", "pure", "sum")
"""The credit forms that read step rewards alone (``prmkit.rl.credits.credit_names(outcome=False)``, kept
here so this file imports nothing heavy; a test checks the two agree)."""
OUTCOME_CREDITS = ("anchor", "first_error", "papo", "prime", "prof")
"""The credit forms that also read each response's outcome (``credit_names(outcome=True)``)."""
ESTIMATORS: dict[str, str] = {f"prmkit_{name}": name for name in sorted((*STEP_CREDITS, *OUTCOME_CREDITS))}
"""verl's ``algorithm.adv_estimator`` names of prmkit's estimators, ``prmkit_<credit form>``, and the
credit form each assigns."""
OLD_NAMES: dict[str, str] = {
    "prmkit_process_grpo": "prmkit_sum",
    **{f"prmkit_credit_{name}": f"prmkit_{name}" for name in sorted((*STEP_CREDITS, *OUTCOME_CREDITS))},
}
"""Earlier estimator names and the name each is now, registered in verl as the same function so a run's
script keeps working (``prmkit_pure`` is not among them: it is PURE's code now, see the module docstring)."""
OUTCOME_BITS: dict[float | None, int] = {1.0: 0b1001, 0.0: 0b0110, None: 0b1111}
"""The outcome channel's patterns in the 4 lowest mantissa bits of a response's last token reward:
correct, wrong, unknown (no reference answer, or one that could not be parsed)."""
_LOW = 0b1111
PER_TOKEN_ESTIMATORS = ("gae", "reinforce_plus_plus")
"""verl's own estimators that read every token's reward (the others sum a response's rewards first)."""


def _get(config: Any, key: str, default: Any = None) -> Any:
    """``config.key`` of a DictConfig, a dataclass (verl's ``AlgoConfig``), a mapping or None."""
    if config is None:
        return default
    if isinstance(config, Mapping) or hasattr(config, "get"):
        try:
            return config.get(key, default)
        except (AttributeError, TypeError):
            pass
    return getattr(config, key, default)


def estimator_name(algorithm: Any) -> str:
    """``algorithm.adv_estimator`` as a plain string (verl accepts its ``AdvantageEstimator`` enum too)."""
    value = _get(algorithm, "adv_estimator", "gae")
    return str(getattr(value, "value", value))


def credit_of(name: str) -> str | None:
    """The credit form the estimator ``name`` assigns (an old name read as its new one); None for an
    estimator that is not prmkit's."""
    return ESTIMATORS.get(OLD_NAMES.get(name, name))


PARAMS_KEY = "prmkit"
"""The section of verl's ``algorithm`` config that holds the credit form's keywords (``algorithm.prmkit``)."""


def credit_params(algorithm: Any) -> dict[str, Any]:
    """The keywords of the credit form for the estimator, from verl's ``algorithm.prmkit`` section.

    verl 0.9.1 hands a registered estimator ``config=config.algorithm`` (``ray_trainer.compute_advantage``
    and the v1 trainer's ``_compute_advantage``), the ``algorithm`` section as composed (a DictConfig; its
    ``_target_`` ``AlgoConfig`` is never instantiated by the trainers), so a key added there reaches the
    estimator: ``+algorithm.prmkit.temperature=0.5`` on ``main_ppo``'s command line (``+``: a key
    ``ppo_trainer.yaml`` does not define). The keywords are the form's function's
    (:mod:`prmkit.rl.credits`; ``DenseGRPOTrainer``'s ``credit_params``), e.g. ``temperature`` and
    ``baseline`` (``prmkit_pure``), ``share`` and ``verifiable_coef`` (``prmkit_anchor``),
    ``process_weight`` (``prmkit_papo``); :func:`check_algorithm` refuses any other."""
    section = _get(algorithm, PARAMS_KEY)
    if section is None:
        return {}
    if not hasattr(section, "items"):
        raise ValueError(
            f"algorithm.{PARAMS_KEY} holds the credit form's keywords (e.g. "
            f"+algorithm.{PARAMS_KEY}.temperature=0.5), found {section!r}"
        )
    return {str(key): value for key, value in section.items()}


def check_algorithm(algorithm: Any) -> None:
    """Refuse verl settings under which a prmkit estimator would not see the step rewards as written,
    or would be given a keyword its credit form does not take.

    ``use_kl_in_reward`` subtracts a per-token KL penalty from every token's reward before the estimator
    runs, so every token becomes a "step end" and the step rewards are no longer recoverable;
    ``norm_adv_by_std_in_grpo=false`` (Dr. GRPO) asks for a scaling ``process_advantages`` does not do;
    a keyword of ``algorithm.prmkit`` the form does not take (:func:`prmkit.rl.credits.check_params`,
    "did you mean") would otherwise stop the run at its first advantage, or be ignored by another
    estimator: refused with any estimator that is not prmkit's too.
    """
    name = estimator_name(algorithm)
    credit = credit_of(name)
    params = credit_params(algorithm)
    if credit is None:
        if params:
            raise ValueError(
                f"algorithm.{PARAMS_KEY} holds a prmkit credit form's keywords; algorithm.adv_estimator="
                f"{name} is not prmkit's and would ignore them: set a prmkit_<credit form> estimator, or "
                f"remove algorithm.{PARAMS_KEY}"
            )
        return
    if params:
        from prmkit.rl.credits import check_params

        try:
            check_params(credit, params)
        except ValueError as err:
            raise ValueError(f"algorithm.{PARAMS_KEY} of algorithm.adv_estimator={name}: {err}") from None
    if _get(algorithm, "use_kl_in_reward", False):
        raise ValueError(
            f"algorithm.adv_estimator={name} reads each step's reward at its end token; "
            "algorithm.use_kl_in_reward=True adds a KL penalty to every token first, so the steps cannot be "
            "read back. Set algorithm.use_kl_in_reward=False and put the KL in the loss instead "
            "(actor_rollout_ref.actor.use_kl_loss=True)"
        )
    if not _get(algorithm, "norm_adv_by_std_in_grpo", True):
        raise ValueError(
            f"algorithm.adv_estimator={name} divides by the group's standard deviation of step rewards "
            "(process_advantages); algorithm.norm_adv_by_std_in_grpo=False is not supported: remove it"
        )


def step_ends(values: Sequence[float], signs: Sequence[bool]) -> list[int]:
    """Token positions holding a step's end: a non-zero value, or a zero with its sign bit set (-0.0)."""
    return [t for t, (v, neg) in enumerate(zip(values, signs, strict=True)) if v != 0.0 or neg]


def reads_outcome(algorithm: Any) -> bool:
    """Whether ``algorithm.adv_estimator`` is a prmkit estimator that reads the outcome channel."""
    return credit_of(estimator_name(algorithm)) in OUTCOME_CREDITS


def _bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


def _float(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def with_outcome(value: float, outcome: float | None) -> float:
    """``value`` as a float32 carrying ``outcome`` (1.0, 0.0 or None) in its 4 lowest mantissa bits: the
    value cut to a multiple of 16 ulps, its sign (a -0.0 step end) kept. Idempotent, and exact as a
    Python float, so verl's ``torch.tensor(scores)`` (float32) keeps it bit for bit."""
    if outcome not in OUTCOME_BITS:
        raise ValueError(
            f"outcome channel: an outcome is 1.0 (correct), 0.0 (wrong) or None, got {outcome!r}"
        )
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"outcome channel: the reward {value!r} is not finite")
    return _float((_bits(value) & ~_LOW) | OUTCOME_BITS[outcome])


def read_outcome(value: float) -> tuple[float, float | None]:
    """``(value, outcome)`` of a value :func:`with_outcome` wrote; ValueError for any other value."""
    bits = _bits(value)
    for outcome, pattern in OUTCOME_BITS.items():
        if bits & _LOW == pattern:
            return _float(bits & ~_LOW), outcome
    raise ValueError(f"{value!r} carries no outcome")


def read_outcomes(values: list[list[float]], signs: list[list[bool]]) -> list[float | None]:
    """Per row, the outcome at its last token with a bit set (a non-zero value or a -0.0), that token's
    value and sign restored in place."""
    outcomes: list[float | None] = []
    for i, (row, neg) in enumerate(zip(values, signs, strict=True)):
        at = max(step_ends(row, neg), default=None)
        try:
            if at is None:
                raise ValueError("an empty row")
            row[at], outcome = read_outcome(row[at])
        except ValueError as err:
            raise ValueError(
                f"token_level_rewards row {i} carries no outcome at its last token ({err}): the outcome "
                "estimators read the channel prmkit's reward manager writes (prmkit.rl.verl_client, "
                "reward.reward_manager.name=prmkit); another manager's rewards cannot be read as outcomes"
            ) from None
        neg[at] = _bits(row[at]) >> 31 == 1
        outcomes.append(outcome)
    return outcomes


def read_steps(
    token_level_rewards: Any, response_mask: Any, outcome: bool = False
) -> tuple[list[list[float]], list[list[int]], list[int], list[float | None] | None]:
    """Per row: the step rewards, the tokens where the steps end, the response length (one past the
    last token of ``response_mask``) and, with ``outcome``, the outcome channel, from verl's tensors."""
    rewards, ends, lengths = [], [], []
    values, signs = token_level_rewards.tolist(), token_level_rewards.signbit().tolist()
    outcomes = read_outcomes(values, signs) if outcome else None
    for row, neg, mask in zip(values, signs, response_mask.tolist(), strict=True):
        length = max((t + 1 for t, m in enumerate(mask) if m), default=0)
        at = step_ends(row[:length], neg[:length])
        rewards.append([row[t] for t in at]), ends.append(at), lengths.append(length)
    return rewards, ends, lengths, outcomes


def groups_of(index: Sequence[Any]) -> list[list[int]]:
    """Row numbers of each group, by group id, in order of first appearance."""
    groups: dict[Any, list[int]] = {}
    for row, uid in enumerate(index):
        groups.setdefault(uid, []).append(row)
    return list(groups.values())


def token_advantages(
    token_level_rewards: Any,
    response_mask: Any,
    index: Sequence[Any],
    credit: str,
    params: Mapping[str, Any] | None = None,
) -> Any:
    """``(B, T)`` advantages: the batch through the credit form (``params``: its keywords), groups by uid,
    masked as verl masks."""
    from prmkit.rl.credits import Rollouts, credit_advantages

    rewards, ends, lengths, outcomes = read_steps(
        token_level_rewards, response_mask, credit in OUTCOME_CREDITS
    )
    groups = groups_of(index)
    keys = [str(index[rows[0]]) for rows in groups]
    rollouts = Rollouts(rewards, ends, lengths, groups, outcomes, keys=keys)
    values = credit_advantages(credit, rollouts, **(params or {}))
    out = token_level_rewards.new_zeros(token_level_rewards.shape)
    for i, row in enumerate(values):
        if row:
            out[i, : len(row)] = out.new_tensor(row)
    return out * response_mask


def _estimator(name: str):
    credit = ESTIMATORS[name]

    def estimate(
        token_level_rewards: Any,
        response_mask: Any,
        index: Sequence[Any] | None = None,
        config: Any = None,
        **kwargs: Any,
    ) -> tuple[Any, Any]:
        if index is None:
            raise ValueError(f"{name}: verl passed no index (the batch has no 'uid'): groups are unknown")
        params = credit_params(config)
        check_algorithm({"adv_estimator": name, **_algorithm_flags(config), PARAMS_KEY: params})
        advantages = token_advantages(token_level_rewards, response_mask, index, credit, params)
        return advantages, advantages

    estimate.__name__ = estimate.__qualname__ = f"compute_{name}_advantage"
    estimate.__doc__ = (
        f"verl's ``algorithm.adv_estimator={name}``: the credit form {credit!r} with the keywords of "
        f"``algorithm.{PARAMS_KEY}``, groups by uid."
    )
    return estimate


def _algorithm_flags(config: Any) -> dict[str, Any]:
    return {
        "use_kl_in_reward": _get(config, "use_kl_in_reward", False),
        "norm_adv_by_std_in_grpo": _get(config, "norm_adv_by_std_in_grpo", True),
    }


def streaming(reward_model: Any) -> bool:
    """Whether verl 0.9.1 pays through its streaming path (one number per response, at its last token):
    the default, and a reward model on its own resource pool. Only a colocated reward model
    (``enable=True``, ``enable_resource_pool=False``) sends the batch through
    ``RewardLoopManager.compute_rm_score`` and so ``assemble_rm_scores``."""
    return not _get(reward_model, "enable", False) or bool(_get(reward_model, "enable_resource_pool", False))


def check_reward_path(reward: Any) -> None:
    """Refuse a colocated reward model with no ``custom_reward_function.path``: verl 0.9.1's reward worker
    then posts each response to its reward model's ``/classify`` and never calls a reward manager's
    ``run_single``, so the PRM would not be asked at all."""
    model = _get(reward, "reward_model", {})
    function = _get(reward, "custom_reward_function", {})
    if _get(model, "enable", False) and not _get(function, "path"):
        raise ValueError(
            "reward.reward_model.enable=True with no reward.custom_reward_function.path: verl 0.9.1 then "
            "scores with its reward model's /classify and never calls prmkit's manager. Set "
            "reward.custom_reward_function.path to prmkit/rl/verl_client.py and "
            "reward.custom_reward_function.name=compute_score (the manager is then called; the function "
            "is not)"
        )


def dense_placement(dense: bool | None, algorithm: Any, reward_model: Any = None) -> bool:
    """Whether ``assemble_rm_scores`` writes each step's reward at its end token (else the aggregate at
    the last token), from ``dense`` and verl's ``algorithm`` and ``reward.reward_model`` sections.

    ``auto`` (None) places step rewards only for prmkit's estimators, the ones that read them as steps
    (:mod:`prmkit.rl.verl_advantages`); every other estimator gets the aggregate, so the default never
    pays a sum of step scores. ``true`` with an estimator that sums a response's token rewards first
    (``grpo``, ``rloo``, ``remax``, ...) is refused rather than quietly changed to the aggregate: the
    user asked for step rewards, and that estimator would turn them into their sum, the reward a policy
    raises by writing more correct-looking steps. ``gae`` and ``reinforce_plus_plus`` read every token
    and are allowed with ``true`` (their returns add the later steps' rewards: the sum form again, so
    not the default). With a prmkit estimator on verl's streaming path the estimator sees one step per
    response, the aggregate: allowed (it is outcome GRPO on the aggregate) and said in a warning.
    """
    check_algorithm(algorithm)
    name = estimator_name(algorithm)
    reads_steps = credit_of(name) is not None
    if dense is None:
        dense = reads_steps
    elif dense and not reads_steps and name not in PER_TOKEN_ESTIMATORS:
        raise ValueError(
            f"prmkit verl settings: dense: true puts each step's reward at its end token, and "
            f"algorithm.adv_estimator={name} sums a response's token rewards: it would pay the sum of the "
            f"step scores, which grows with every correct-looking step a policy adds. Set "
            f"algorithm.adv_estimator=prmkit_min (or another prmkit_<credit form>: {', '.join(ESTIMATORS)}; "
            f"or gae, reinforce_plus_plus), or reward.reward_kwargs.prmkit.dense=auto to pay the aggregate"
        )
    if reads_steps and streaming(reward_model):
        logger.warning(
            "prmkit verl: algorithm.adv_estimator=%s reads step rewards, but verl 0.9.1's streaming reward "
            "path (reward.reward_model.enable=False, or enable_resource_pool=True) keeps one number per "
            "response: the estimator sees the aggregate as one step (outcome GRPO on it). Step rewards "
            "reach it only on the colocated path (reward.reward_model.enable=True, "
            "enable_resource_pool=False), which calls assemble_rm_scores",
            name,
        )
    return dense


_FNS = {name: _estimator(name) for name in ESTIMATORS}
ESTIMATOR_FNS = {**_FNS, **{old: _FNS[new] for old, new in OLD_NAMES.items()}}
"""The estimator functions by name (an old name: its new name's function), one object each for the
process: verl's ``register_adv_est`` refuses a second function under a name already registered."""


def register() -> None:
    """Register prmkit's estimators in verl's ``ADV_ESTIMATOR_REGISTRY`` (idempotent)."""
    from verl.trainer.ppo.core_algos import register_adv_est

    for name, fn in ESTIMATOR_FNS.items():
        register_adv_est(name)(fn)

"""Every credit form of prmkit.rl.credits on inputs computed by hand, and PURE's form against numbers
produced by PURE's own code."""

from __future__ import annotations

import math

import pytest

from prmkit.core.registry import UnknownNameError
from prmkit.rl.advantages import process_advantages
from prmkit.rl.credits import CREDITS, Rollouts, check_params, credit_advantages, credit_names, pure
from prmkit.rl.rewards import progress_rewards
from prmkit.rl.verl_advantages import STEP_CREDITS

R2 = 1 / math.sqrt(2)


def batch(rewards, ends, lengths, group_size, **kwargs) -> Rollouts:
    return Rollouts.consecutive(rewards, ends, lengths, group_size, **kwargs)


def approx(rows):
    return [pytest.approx(row, abs=1e-6) for row in rows]


# PURE's own functions (CJReinforce/PURE, commit 41f9363b8cc4af044b7fc5f7f9bbbf62139e9553) run outside this
# repository on these inputs: openrlhf/utils/utils.py turn_process_reward_logits_to_reward (logits (0,
# logit(s)), temperature 0.1), openrlhf/trainer/ppo_utils/experience_maker.py
# NaiveExperienceMaker.process_experiences (advantage_estimator rloo, n_samples_per_prompt 4,
# verifiable_reward_coef 1.0), the returns of NaiveExperienceMaker.make_experience_list (kl 0, separator
# tokens masked) and, for the whitened case, ppo_utils/replay_buffer.py NaiveReplayBuffer.normalize.
PURE_PROBS = [[0.9, 0.2], [0.7], [0.8, 0.6, 0.95], [0.3, 0.5, 0.1]]
PURE_SOLVED = [1.0, 0.0, 1.0, 0.0]
PURE_ENDS, PURE_LENGTHS = [[2, 5], [3], [1, 4, 6], [0, 2, 4]], [6, 4, 7, 5]
PURE_OUT = {
    ("token", "PRM"): [
        [-0.553816, -0.553816, 0.0, -0.576908, -0.576908, 0.0], [0.597455, 0.597455, 0.597455, 0.0],
        [0.472493, 0.0, 0.395541, 0.395541, 0.0, 0.066975, 0.0], [0.0, -0.786272, 0.0, -0.785812, 0.0],
    ],
    ("token", "PRMVR"): [
        [0.11285, 0.11285, 0.0, 0.089758, 0.089758, 0.0], [-0.069212, -0.069212, -0.069212, 0.0],
        [1.139159, 0.0, 1.062208, 1.062208, 0.0, 0.733641, 0.0], [0.0, -1.452938, 0.0, -1.452479, 0.0],
    ],
    ("step", "PRM"): [
        [-0.736726, -0.736726, 0.0, -0.668363, -0.668363, 0.0], [0.56497, 0.56497, 0.56497, 0.0],
        [0.371995, 0.0, 0.306486, 0.306486, 0.0, 0.055532, 0.0], [0.0, -0.8982, 0.0, -0.841776, 0.0],
    ],
    ("step", "PRMVR"): [
        [-0.070059, -0.070059, 0.0, -0.001696, -0.001696, 0.0], [-0.101697, -0.101697, -0.101697, 0.0],
        [1.038662, 0.0, 0.973153, 0.973153, 0.0, 0.722199, 0.0], [0.0, -1.564867, 0.0, -1.508443, 0.0],
    ],
}  # fmt: skip
PURE_WHITENED = [  # every response 7 tokens (PURE's count of zeros includes padding: equal lengths avoid it)
    [0.210172, 0.210172, 0.0, 0.188179, 0.188179, 0.188179, 0.0], [0.161642] * 6 + [0.0],
    [1.401287, 0.0, 1.328729, 1.328729, 0.0, 0.965283, 0.0], [0.0, -1.745039, 0.0, -1.744573, -1.744573, -1.744573, 0.0],
]  # fmt: skip


@pytest.mark.parametrize(("baseline", "mode"), list(PURE_OUT))
def test_pure_equals_pures_own_code(baseline: str, mode: str) -> None:
    outcome = PURE_SOLVED if mode == "PRMVR" else None
    r = batch(PURE_PROBS, PURE_ENDS, PURE_LENGTHS, 4, outcome=outcome)
    got = pure(r, baseline=baseline, whiten=False)  # type: ignore[arg-type]
    assert got == [pytest.approx(row, abs=1e-5) for row in PURE_OUT[(baseline, mode)]]


def test_pure_whitened_equals_pures_replay_buffer() -> None:
    r = batch(PURE_PROBS, [[2, 6], [6], [1, 4, 6], [0, 2, 6]], [7] * 4, 4, outcome=PURE_SOLVED)
    assert pure(r) == [pytest.approx(row, abs=1e-5) for row in PURE_WHITENED]


def test_pure_by_hand_is_centred() -> None:
    # one step each, s = 1 and 0 -> PURE's rewards 1 and -1; 3 tokens, the step ends at token 2 (2 tokens
    # before it). Token baseline of the first: the other's -1 over its 3 tokens, times 2 -> 1 + 2/3.
    r = batch([[1.0], [0.0]], [[2], [2]], [3, 3], 2)
    assert pure(r, whiten=False) == approx([[5 / 3, 5 / 3, 0.0], [-5 / 3, -5 / 3, 0.0]])
    assert pure(r) == approx([[1.0, 1.0, 0.0], [-1.0, -1.0, 0.0]])  # mean 0, spread 5/3 over 4 tokens
    # the outcome (1, 0): (o - 1) leave-one-out -> +1 and -1 at the last token, reaching every earlier one
    anchored = batch([[1.0], [0.0]], [[2], [2]], [3, 3], 2, outcome=[1.0, 0.0])
    assert pure(anchored, whiten=False) == approx([[8 / 3, 8 / 3, 0.0], [-8 / 3, -8 / 3, 0.0]])
    # whitening centres the batch (PURE's replay buffer): equal completions get equal values, mean 0
    equal = pure(batch([[0.7, 0.7], [0.7, 0.7]], [[1, 3], [1, 3]], [4, 4], 2))
    assert equal[0] == equal[1] and sum(v for row in equal for v in row) == pytest.approx(0.0, abs=1e-12)


def test_anchor_pays_the_outcome_on_its_share_of_prompts() -> None:
    r = batch([[1.0], [0.0]], [[2], [2]], [3, 3], 2, outcome=[1.0, 0.0], keys=["p"])
    assert credit_advantages("anchor", r, share=1.0, whiten=False) == pure(r, whiten=False)
    no_vr = batch([[1.0], [0.0]], [[2], [2]], [3, 3], 2)
    assert credit_advantages("anchor", r, share=0.0, whiten=False) == pure(no_vr, whiten=False)


def test_sum_and_min_are_process_advantages() -> None:
    rewards, ends, lengths = [[1.0, 0.0], [1.0]], [[1, 3], [2]], [5, 3]
    for name in ("sum", "min"):
        got = credit_advantages(name, batch(rewards, ends, lengths, 2))
        assert got == process_advantages(rewards, ends, lengths, 2, name)  # type: ignore[arg-type]
    r3 = 1 / math.sqrt(3)  # DeepSeekMath by hand (tests/rl/test_advantages.py)
    assert credit_advantages("sum", batch(rewards, ends, lengths, 2), eps=0.0)[1] == pytest.approx([r3] * 3)


def test_first_error_spares_the_verified_prefix() -> None:
    # outcomes 1, 0: GRPO +-1/sqrt2; the wrong one's steps 0.9, 0.2, 0.1: first doubted step is 1
    r = batch([[0.9, 0.9], [0.9, 0.2, 0.1]], [[0, 1], [0, 1, 2]], [2, 4], 2, outcome=[1.0, 0.0])
    got = credit_advantages("first_error", r, eps=0.0)
    assert got == approx([[R2, R2], [0.0, -R2, -R2, -R2]])
    # no doubted step: doubted from the last one
    r = batch([[0.9], [0.9, 0.8]], [[0], [0, 1]], [1, 2], 2, outcome=[1.0, 0.0])
    assert credit_advantages("first_error", r, eps=0.0)[1] == approx([[0.0, -R2]])[0]


def test_papo_normalises_the_process_among_correct_answers() -> None:
    # outcomes 1, 1, 0: A_out (1/3) / sqrt(1/3) = 1/sqrt3 twice, -2/sqrt3; step means 0.8, 0.4 among the
    # correct ones: +-1/sqrt2; the wrong one gets no process part
    r = batch([[0.8], [0.6, 0.2], [0.9]], [[0], [0, 1], [0]], [1, 2, 1], 3, outcome=[1.0, 1.0, 0.0])
    a = 1 / math.sqrt(3)
    got = credit_advantages("papo", r, eps=0.0)
    assert got == approx([[a + R2], [a - R2, a - R2], [-2 * a]])
    assert credit_advantages("papo", r, eps=0.0, process_weight=0.0) == approx([[a], [a, a], [-2 * a]])


def test_prof_filters_and_pays_only_the_outcome() -> None:
    # 3 correct (means 0.9, 0.2, 0.6), 1 wrong; keep 2: remove the correct 0.2, then the correct 0.6
    r = batch(
        [[0.9], [0.2], [0.6], [0.1]], [[0], [0], [0], [0]], [1, 1, 1, 2], 4, outcome=[1.0, 1.0, 1.0, 0.0]
    )
    assert credit_advantages("prof", r, eps=0.0) == approx([[R2], [0.0], [0.0], [-R2, -R2]])
    # among the wrong ones the PRM's most doubted are kept: (0.9 wrong removed, 0.1 wrong kept)
    r = batch([[0.9], [0.5], [0.9], [0.1]], [[0]] * 4, [1] * 4, 4, outcome=[1.0, 1.0, 0.0, 0.0])
    assert credit_advantages("prof", r, eps=0.0) == approx([[R2], [0.0], [0.0], [-R2]])


def test_pav_pays_progress_under_sum_credit() -> None:
    # Q = (0.5, 1.0) and (0.5, 0.0), V(s0) = 0.5: paid (0.5, 1.5) and (0.5, -0.5); normalised over the
    # group (mean 0.5, sample std sqrt(2/3)): (0, 1.22), (0, -1.22); suffix sums
    z = 1 / math.sqrt(2 / 3)
    r = batch([[0.5, 1.0], [0.5, 0.0]], [[0, 1], [0, 1]], [2, 2], 2)
    assert credit_advantages("pav", r, eps=0.0) == approx([[z, z], [-z, -z]])
    paid = [progress_rewards(q, 1.0, 0.5) for q in ([0.5, 1.0], [0.5, 0.0])]
    assert credit_advantages("pav", r) == process_advantages(paid, [[0, 1], [0, 1]], [2, 2], 2, "sum")


def test_prime_leave_one_out_then_whiten() -> None:
    # token rewards (0.2, 0.4) and (0, -0.2), outcomes 1, 0, coefficients 1: per response means 0.3, -0.1,
    # baseline 0.2 / 1; tokens 2r - 0.2 -> (0.2, 0.6), (-0.2, -0.6); outcome 2*1 - 1 = +1, -1 at the last
    # token; returns (1.8, 1.6), (-1.8, -1.6); whitened: mean 0, unbiased variance 5.8 * 2/3
    r = batch([[0.2, 0.4], [0.0, -0.2]], [[0, 1], [0, 1]], [2, 2], 2, outcome=[1.0, 0.0])
    sd = math.sqrt(5.8 * 2 / 3 + 1e-8)
    got = credit_advantages("prime", r, process_coef=1.0, outcome_coef=1.0)
    assert got == approx([[1.8 / sd, 1.6 / sd], [-1.8 / sd, -1.6 / sd]])


def test_registry_names_and_refusals() -> None:
    assert set(CREDITS.names()) == {
        "sum",
        "min",
        "pure",
        "anchor",
        "first_error",
        "papo",
        "prof",
        "pav",
        "prime",
    }
    assert (
        tuple(sorted(credit_names(outcome=False))) == STEP_CREDITS
    )  # verl's estimators: the step-only forms
    with pytest.raises(UnknownNameError, match="Did you mean 'papo'"):
        CREDITS.get("papa")
    with pytest.raises(ValueError, match="'prof' reads each completion's outcome"):
        credit_advantages("prof", batch([[1.0], [0.0]], [[0], [0]], [1, 1], 2))
    check_params("anchor", {"share": 0.5, "baseline": "step", "verifiable_coef": 2.0})  # pure's, passed on
    with pytest.raises(
        ValueError,
        match=r"credit 'anchor' takes share, temperature, baseline, .*not 'shares'; did you mean 'share'",
    ):
        check_params("anchor", {"shares": 0.5})
    with pytest.raises(ValueError, match="credit 'sum' takes eps, not 'temperature'"):
        check_params("sum", {"temperature": 0.1})  # a keyword of min only: refused, not ignored


def test_pures_code_is_centred_where_the_earlier_min_leans_negative() -> None:
    # issue 60: normalise-then-reweight puts each completion near its lowest normalised step, below the
    # group's mean; PURE's leave-one-out baseline on raw rewards does not
    r = batch(
        [[0.9, 0.2], [0.6, 0.7], [0.8, 0.6, 0.95, 0.5], [0.3, 0.5, 0.4]],
        [[2, 5], [1, 3], [1, 4, 6, 7], [0, 2, 4]],
        [6, 4, 8, 5],
        4,
    )
    first = lambda rows: sum(row[0] for row in rows) / len(rows)  # noqa: E731
    assert first(credit_advantages("min", r)) < -0.5
    assert abs(first(credit_advantages("pure", r, whiten=False))) < 0.05

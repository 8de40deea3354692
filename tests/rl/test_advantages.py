"""Step rewards -> token advantages against values computed by hand (eps=0 where it keeps them exact)."""

from __future__ import annotations

import math

import pytest

from prmkit.rl.advantages import (
    min_form,
    mixed_advantages,
    outcome_advantages,
    process_advantages,
    spread,
    standardized,
    step_advantages,
    to_tensor,
)
from prmkit.rl.config import RlConfig
from prmkit.rl.credits import Rollouts, credit_advantages

R3 = math.sqrt(3)


def test_ragged_steps_deepseekmath_sum_form() -> None:
    # group of 2: steps [1, 0] (ends at tokens 1 and 3, 5 tokens) and [1] (ends at 2, 3 tokens).
    # All step rewards 1, 0, 1: mean 2/3, sample std sqrt(1/3); normalised 1/sqrt3, -2/sqrt3, 1/sqrt3.
    # First completion: step 0 returns 1/sqrt3 - 2/sqrt3 = -1/sqrt3, step 1 returns -2/sqrt3; token 4
    # lies past the last step's end, so it belongs to the last step.
    out = process_advantages([[1.0, 0.0], [1.0]], [[1, 3], [2]], [5, 3], group_size=2, credit="sum", eps=0.0)
    assert out[0] == pytest.approx([-1 / R3, -1 / R3, -2 / R3, -2 / R3, -2 / R3])
    assert out[1] == pytest.approx([1 / R3] * 3)


def test_one_step_traces_and_two_groups() -> None:
    # two groups of two one-step completions: (0.8, 0.2) -> +-1/sqrt2, (0.3, 0.3) -> 0 (std 0)
    out = process_advantages([[0.8], [0.2], [0.3], [0.3]], [[0], [1], [0], [0]], [1, 2, 1, 1], 2, eps=0.0)
    r2 = 1 / math.sqrt(2)
    assert out[0] == pytest.approx([r2]) and out[1] == pytest.approx([-r2, -r2])
    assert out[2] == [0.0] and out[3] == [0.0]


def test_all_equal_group_gives_zero_everywhere() -> None:
    for credit in ("sum", "min"):
        out = process_advantages([[0.5, 0.5], [0.5]], [[0, 2], [1]], [4, 2], 2, credit=credit)
        assert out == [[0.0] * 4, [0.0] * 2]
    assert outcome_advantages([1.0, 1.0, 0.0, 0.0], 2) == [0.0] * 4


def test_empty_completion_has_no_tokens_and_no_step_in_the_statistics() -> None:
    # [1], [0], []: the statistics are over the two step rewards only (mean 0.5, std 1/sqrt2)
    out = process_advantages([[1.0], [0.0], []], [[0], [0], []], [1, 2, 0], 3, eps=0.0)
    r2 = 1 / math.sqrt(2)
    assert out[0] == pytest.approx([r2]) and out[1] == pytest.approx([-r2, -r2]) and out[2] == []
    assert spread([], [], 3) == [0.0, 0.0, 0.0]  # tokens but no step: no signal


def test_outcome_grpo_matches_trl_normalisation() -> None:
    # (r - mean) / (sample std + 1e-4), TRL's formula; by hand for rewards 1, 0: mean 0.5, std 1/sqrt2
    out = outcome_advantages([1.0, 0.0], 2)
    assert out == pytest.approx([0.5 / (1 / math.sqrt(2) + 1e-4), -0.5 / (1 / math.sqrt(2) + 1e-4)])
    import torch
    from trl.trainer.utils import nanstd

    rewards = torch.tensor([0.2, 0.9, 0.4, 1.0, 0.0, 0.3])
    grouped = rewards.view(-1, 3)
    trl = (grouped - grouped.mean(1, keepdim=True)) / (nanstd(grouped, dim=1).unsqueeze(1) + 1e-4)
    assert outcome_advantages(rewards.tolist(), 3) == pytest.approx(trl.flatten().tolist(), abs=1e-6)


def test_pure_min_form_weights() -> None:
    # softmax(-r / 0.1) over (0.9, 0.1): weights 1/(1+e^8) and 1/(1+e^-8)
    out = min_form([0.9, 0.1], temperature=0.1)
    assert out == pytest.approx([0.9 / (1 + math.e**8), 0.1 / (1 + math.e**-8)])
    assert sum(min_form([0.9, 0.1, 0.8], temperature=0.01)) == pytest.approx(0.1, abs=1e-12)
    assert min_form([0.7], 0.1) == [0.7] and min_form([], 0.1) == []
    with pytest.raises(ValueError, match="temperature"):
        min_form([0.5], 0.0)


def test_min_credit_reweights_the_normalised_rewards() -> None:
    # group [0.9, 0.1], [0.5]: mean 0.5, sample std 0.4 -> normalised (1, -1), (0); then PURE's weights
    # softmax(-z / 0.1) over (1, -1): 1/(1+e^20) and 1/(1+e^-20)
    a, b = 1 / (1 + math.e**20), -1 / (1 + math.e**-20)
    out = step_advantages([[0.9, 0.1], [0.5]], 2, credit="min", eps=0.0)
    assert out[0] == pytest.approx([a + b, b]) and out[1] == [0.0]
    # sum-form pays a long run of good steps; min-form pays the worst step (PURE's point)
    many = [[0.9] * 6 + [0.1], [0.5]]
    assert step_advantages(many, 2, "sum")[0][0] > step_advantages(many, 2, "sum")[1][0]
    assert step_advantages(many, 2, "min")[0][0] < step_advantages(many, 2, "min")[1][0]


def test_mixed_and_tensor() -> None:
    out = mixed_advantages([1.0, -1.0], [[0.5, 0.5], [0.0]], process_weight=0.25)
    assert out == [[0.875, 0.875], [-0.75]]
    assert mixed_advantages([2.0], [[3.0]], 0.0) == [[2.0]] and mixed_advantages([2.0], [[3.0]], 1.0) == [
        [3.0]
    ]
    t = to_tensor(out, 3)
    assert t.shape == (2, 3) and t.tolist() == [[0.875, 0.875, 0.0], [-0.75, 0.0, 0.0]]


def test_bad_inputs_are_one_line_errors() -> None:
    with pytest.raises(ValueError, match="multiple of group_size=2 completions, found 3"):
        outcome_advantages([1.0, 0.0, 1.0], 2)
    with pytest.raises(ValueError, match="process_weight"):
        mixed_advantages([1.0], [[1.0]], 1.5)
    with pytest.raises(ValueError, match="credit"):
        step_advantages([[1.0]], 1, credit="max")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="2 step values but 1 step ends"):
        spread([1.0, 2.0], [0], 3)


def test_default_credit_cannot_be_raised_by_padding_with_correct_steps() -> None:
    # issue 36's case with a perfect PRM: a correct 3-step answer, the same padded to 7 correct steps,
    # and a wrong answer after 4 repeated correct steps, in one group of 3
    short, padded, wrong = [1.0] * 3, [1.0] * 7, [1.0] * 4 + [0.0]
    summed = step_advantages([short, padded, wrong], 3, credit="sum")
    assert summed[1][0] > summed[0][0]  # the sum pays the padding
    # paid as one number per completion (verl's streaming path), the sum also ranks the wrong answer
    # above the short right one; the min aggregate does not
    by_sum = outcome_advantages([sum(short), sum(padded), sum(wrong)], 3)
    assert by_sum[2] > by_sum[0] and by_sum[1] > by_sum[0]
    by_min = outcome_advantages([min(short), min(padded), min(wrong)], 3)
    assert by_min[1] == by_min[0] > by_min[2]
    first = [row[0] for row in step_advantages([short, padded, wrong], 3)]  # the legacy min (issue 36)
    assert first[1] == pytest.approx(first[0]) and first[2] < first[0]
    # the default credit since issue 60, PURE's: every step 3 tokens (the third its end), one final token
    default = RlConfig.model_fields["credit"].default
    assert default == "pure"
    first = [row[0] for row in credit_advantages(default, _padded_group([short, padded, wrong]))]
    assert first[1] == pytest.approx(first[0]) and first[2] < first[0]


def _padded_group(rows: list[list[float]]) -> Rollouts:
    """One group, each step 3 tokens long (its end the third), one token after the last step."""
    ends = [[3 * k + 2 for k in range(len(r))] for r in rows]
    return Rollouts(rows, ends, [3 * len(r) + 1 for r in rows], [list(range(len(rows)))])


@pytest.mark.parametrize("baseline", ["token", "step"])
def test_pure_credit_pays_padding_as_the_rest_of_its_group_is_paid(baseline: str) -> None:
    """PURE's leave-one-out baseline is per token (``token``) or per step (``step``), so padding with
    correct steps moves a completion's first-token advantage by the extra tokens (steps) times the rest
    of the group's pay per token (step): lowered where the others are paid above 0 on PURE's signed scale
    (their worst step above 0.5), raised where they are paid below 0. Issue 36's group sits at 0 under
    ``token`` (the others' pay 1 and -1 cancel), which is why the default passes the test above."""
    short, padded = [1.0] * 3, [1.0] * 7

    def gain(others: list[list[float]]) -> float:
        rows = credit_advantages("pure", _padded_group([short, padded, *others]), baseline=baseline)
        return rows[1][0] - rows[0][0]

    assert gain([[1.0, 1.0]]) < 0  # the others paid above 0: padding costs
    assert gain([[0.9, 0.1], [0.2]]) > 0  # the others paid below 0: padding pays


def test_an_unpaid_completion_is_capped_at_the_worst_finished_one() -> None:
    # sum credit: a finished poor completion of six low steps sinks far below a one-step unfinished one
    poor, good, unfinished = [0.2] * 6, [0.9, 0.9], [0.0]
    free = step_advantages([poor, good, unfinished], 3, credit="sum")
    assert free[2][0] > free[0][0]  # stopping early is the cheaper failure
    capped = step_advantages([poor, good, unfinished], 3, credit="sum", unpaid=[False, False, True])
    assert capped[2] == [pytest.approx(free[0][0])] and capped[:2] == free[:2]
    # a group with no finished completion keeps its values; a flag per completion is required
    alone = step_advantages([[0.0], [0.5]], 2, unpaid=[True, True])
    assert alone == step_advantages([[0.0], [0.5]], 2)
    with pytest.raises(ValueError, match="expected 2 flags, found 1"):
        step_advantages([[0.0], [0.5]], 2, unpaid=[True])


def test_mixing_puts_the_process_part_on_the_outcome_scale() -> None:
    # first-token values 4 and -2 over the batch: root mean square sqrt(10) -> one factor for all
    process = [[4.0, 2.0], [-2.0]]
    out = mixed_advantages([1.0, -1.0], process, 0.5, scale=True)
    s = math.sqrt(10) + 1e-4
    assert out == [pytest.approx([0.5 + 2 / s, 0.5 + 1 / s]), pytest.approx([-0.5 - 1 / s])]
    assert mixed_advantages([1.0, -1.0], process, 1.0, scale=True)[0] == [4.0, 2.0]  # unmixed: as is
    assert mixed_advantages([1.0, -1.0], process, 0.5)[0] == [2.5, 1.5]  # unscaled: as given
    # a nearly flat group is not blown up by its own spread: the batch's scale divides it
    flat_and_loud = [[0.01], [0.0], [3.0], [-3.0]]
    scaled = standardized(flat_and_loud)
    assert scaled[0][0] == pytest.approx(0.01 / (math.sqrt(4.5000250) + 1e-4))
    assert standardized([[0.0], [], [0.0]]) == [[0.0], [], [0.0]]


def test_progress_rewards_are_value_plus_alpha_times_progress() -> None:
    from prmkit.rl.rewards import progress_rewards

    assert progress_rewards([0.8, 0.8, 0.2], alpha=1.0) == pytest.approx([0.8, 0.8, -0.4])
    assert progress_rewards([0.8, 0.8, 0.2], 1.0, start=0.5) == pytest.approx([1.1, 0.8, -0.4])
    assert progress_rewards([0.5, 0.9], alpha=2.0) == pytest.approx([0.5, 0.9 + 2 * 0.4])
    assert progress_rewards([0.3, 0.6], alpha=0.0) == [0.3, 0.6]  # alpha 0: the dense reward itself
    assert progress_rewards([], alpha=1.0) == []


def test_the_first_steps_progress_is_measured_from_the_groups_value() -> None:
    """``A_0 = Q_0 - V(s_0)``, ``V(s_0)`` one number for the group (its mean first value): a wrong first
    step is charged its drop, as a wrong later step is. Without ``start`` it was charged nothing, so a
    policy learnt to err first (docs/rl.md, "Progress and faithfulness")."""
    from prmkit.rl.rewards import group_starts, progress_rewards

    early, late = [0.1, 0.1, 0.1], [0.9, 0.1, 0.1]  # the error at step 1, or at step 2
    (v0, _) = group_starts(["p", "p"], [early, late])
    assert v0 == pytest.approx(0.5)
    assert progress_rewards(early, 1.0, v0) == pytest.approx([0.1 - 0.4, 0.1, 0.1])
    assert progress_rewards(late, 1.0, v0) == pytest.approx([0.9 + 0.4, 0.1 - 0.8, 0.1])
    assert progress_rewards(early, 1.0)[0] == 0.1  # the old first step: no drop charged
    # summed, the progress terms telescope to Q_last - V(s_0): the later error is worth its right step
    assert sum(progress_rewards(late, 1.0, v0)) - sum(progress_rewards(early, 1.0, v0)) == pytest.approx(0.8)
    # groups are per prompt; completions with no scored step neither count nor get a start
    assert group_starts(["a", "b", "a", "c"], [[0.2], [0.7, 0.1], [0.6], None]) == pytest.approx(
        [0.4, 0.7, 0.4, None]
    )

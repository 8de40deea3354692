"""verl's token-level reward tensor and per-turn step reward lists."""

from __future__ import annotations

import pytest
import torch

from prmkit.core.steps import make_trace
from prmkit.rl.emitters import split_by_turn, turn_step_rewards, verl_reward_tensor
from prmkit.rl.rewards import ProcessReward
from tests.serving.conftest import HashScorer


def test_verl_tensor_has_the_responses_shape_with_rewards_at_step_ends() -> None:
    # verl: reward_tensor = zeros_like(data.batch["responses"], dtype=float32), one row per response;
    # the naive manager writes its scalar at valid_response_length - 1
    responses = torch.zeros((3, 6), dtype=torch.long)
    out = verl_reward_tensor([[0.5, 1.0], [0.25], []], [[1, 4], [2], []], responses.shape[-1])
    assert out.shape == responses.shape and out.dtype == torch.float32
    assert out.tolist() == [[0, 0.5, 0, 0, 1.0, 0], [0, 0, 0.25, 0, 0, 0], [0] * 6]
    assert verl_reward_tensor([[0.5, 0.25]], [[3, 3]], 4).tolist() == [[0, 0, 0, 0.75]]  # same token: summed
    with pytest.raises(ValueError, match="step end 6 outside the response"):
        verl_reward_tensor([[1.0]], [[6]], 6)


def test_per_turn_lists() -> None:
    assert split_by_turn([0.1, 0.2, 0.3], [2, 0, 1]) == [[0.1, 0.2], [], [0.3]]
    messages = [
        {"role": "user", "content": "Tom has 3 apples. He gets 4 more."},
        {"role": "assistant", "content": "3 + 4 = 7\nso 7 apples"},
        {"role": "tool", "content": "ok"},
        {"role": "assistant", "content": "The answer is 7.\nbye"},
    ]
    process = ProcessReward(HashScorer())
    (whole,) = HashScorer().score(
        [make_trace("Tom has 3 apples. He gets 4 more.", ["3 + 4 = 7", "so 7 apples", "The answer is 7."])]
    )
    assert turn_step_rewards(messages, process) == [whole[:2], whole[2:]]
    unfinished = messages[:2]
    assert turn_step_rewards(unfinished, process) == [[0.0]]
    asked = ProcessReward(HashScorer(), unfinished_reward=None)
    assert turn_step_rewards(unfinished, asked) == [whole[:2]]


def test_a_tool_using_trajectory_gets_one_reward_per_assistant_message() -> None:
    from prmkit.formats.chat import write_messages
    from prmkit.worlds.agent import generate_problems, sample_traces

    trace = next(t for t in sample_traces(generate_problems(4, seed=3), 2, seed=0) if len(t.steps) > 3)
    messages, _ = write_messages(trace)
    process = ProcessReward(HashScorer())
    rewards = turn_step_rewards(messages, process)
    plain = trace.model_copy(update={"problem": trace.problem.model_copy(update={"metadata": {}})})
    (expected,) = HashScorer().score([plain])  # the scorer reads the steps with their calls and results
    assert rewards == [[x] for x in expected]
    (without_calls,) = HashScorer().score(
        [plain.model_copy(update={"steps": [s.model_copy(update={"tool_calls": []}) for s in plain.steps]})]
    )
    assert [r[0] for r in rewards] != without_calls
    cut = messages[: messages.index(next(m for m in messages if m.get("tool_calls"))) + 1]
    assert turn_step_rewards(cut, process) == [[0.0]]  # ended on a call: never answered, paid 0


def test_a_progress_reward_pays_each_step_its_value_and_its_progress() -> None:
    from prmkit.rl.rewards import progress_rewards

    completion = "3 + 4 = 7\nso 7 apples\nThe answer is 7."
    prompt = "Tom has 3 apples. He gets 4 more."
    (plain,) = ProcessReward(HashScorer()).score([prompt], [completion])
    (paid,) = ProcessReward(HashScorer(), progress_alpha=2.0).score([prompt], [completion])
    assert (
        paid.rewards == pytest.approx(progress_rewards(plain.rewards, 2.0))
        and paid.char_ends == plain.char_ends
    )
    (unfinished,) = ProcessReward(HashScorer(), progress_alpha=2.0).score([prompt], ["3 + 4 = 7"])
    assert unfinished.unpaid and unfinished.rewards == [0.0]  # the unfinished rule, not shaped


def test_a_progress_reward_measures_each_first_step_from_its_prompts_group() -> None:
    from prmkit.rl.rewards import progress_rewards

    prompts = ["Tom has 3 apples. He gets 4 more.", "Ann has 2 pears.", "Tom has 3 apples. He gets 4 more."]
    completions = ["3 + 4 = 7\nThe answer is 7.", "2 pears\nThe answer is 2.", "3 + 3 = 6\nThe answer is 6."]
    plain = ProcessReward(HashScorer()).score(prompts, completions)
    paid = ProcessReward(HashScorer(), progress_alpha=1.0).score(prompts, completions)
    tom = (plain[0].rewards[0] + plain[2].rewards[0]) / 2  # V(s_0) of the first prompt's group
    for i, start in ((0, tom), (1, plain[1].rewards[0]), (2, tom)):
        assert paid[i].rewards == pytest.approx(progress_rewards(plain[i].rewards, 1.0, start))


def test_a_progress_reward_counts_and_warns_of_prompts_scored_without_their_group(caplog) -> None:
    """One completion per call (verl's streaming reward loop, a group split across processes) leaves
    ``V(s_0)`` to the completion itself: its first step's progress is 0. That is counted and logged, the
    first time as a warning; whole groups are not."""
    import logging

    prompts = ["Tom has 3 apples. He gets 4 more.", "Tom has 3 apples. He gets 4 more.", "Ann has 2 pears."]
    completions = ["3 + 4 = 7\nThe answer is 7.", "3 + 3 = 6\nThe answer is 6.", "2 pears\nThe answer is 2."]
    reward = ProcessReward(HashScorer(), progress_alpha=1.0)
    with caplog.at_level(logging.DEBUG, logger="prmkit.rl.rewards"):
        reward.score(prompts[:2], completions[:2])
        assert reward.lone_groups == 0 and not caplog.records
        reward.score(prompts, completions)  # Ann's prompt came alone
        reward.score(prompts[:1], completions[:1])
    assert reward.lone_groups == 2
    assert [r.levelno for r in caplog.records] == [logging.WARNING, logging.DEBUG]
    assert "score a whole GRPO group in one call" in caplog.records[0].getMessage()
    plain = ProcessReward(HashScorer())  # no progress: nothing to count
    plain.score(prompts[2:], completions[2:])
    assert plain.lone_groups == 0

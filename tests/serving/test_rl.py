"""RL adapters: TRL reward functions (sync, async, remote), verl compute_score and dense manager, OpenRLHF."""

from __future__ import annotations

import asyncio
import inspect
from types import SimpleNamespace

import httpx
import pytest
import torch

from prmkit.core.steps import make_trace
from prmkit.rl import trl_reward
from prmkit.rl.openrlhf import openrlhf_rewards, reward_func
from prmkit.rl.rewards import reward_name
from prmkit.rl.verl import PrmkitRewardManager, compute_score
from prmkit.scoring.aggregate import aggregate
from prmkit.serving.reward_server import ServerConfig, create_app
from tests.serving.conftest import HashScorer, run_server

PROMPTS = ["Tom has 3 apples. He gets 4 more. How many?", "Ann has 2 pens."]
COMPLETIONS = ["3 + 4 = 7 apples.\nThe answer is 7.", ""]


def _offline(problem: str, completion: str) -> list[float]:
    steps = [s.strip() for s in completion.split("\n") if s.strip()]
    return HashScorer().score([make_trace(problem, steps)])[0]


def test_trl_reward_sync_logs_steps_and_pays_nothing_for_unfinished() -> None:
    logged: dict = {}
    metrics: dict = {}
    scorer = HashScorer()
    f = trl_reward(scorer, aggregation="last")
    out = f(
        prompts=PROMPTS, completions=COMPLETIONS, completion_ids=[[1], []],
        log_extra=lambda col, vals: logged.setdefault(col, vals), log_metric=metrics.__setitem__, trainer_state=None,
    )  # fmt: skip
    expected = _offline(PROMPTS[0], COMPLETIONS[0])
    assert out == [expected[-1], 0.0]  # the empty completion states no answer: paid nothing
    column = logged["prm_HashScorer_last/step_scores"]
    assert column[0] == [round(s, 4) for s in expected] and column[1] == []
    assert metrics["prm_HashScorer_last/steps_per_completion"] == 1.0
    assert metrics["prm_HashScorer_last/unfinished"] == 0.5
    assert f.__name__ == "prm_HashScorer_last"
    assert scorer.calls == [1]  # the unfinished completion is not even scored


def test_trl_reward_unfinished_steps_are_scored_only_when_asked() -> None:
    stopped = ["3 + 4 = 7 apples.\n", "3 + 4 = 7 apples.\nThe answer is 7.\nmore text"]
    prompts = [PROMPTS[0]] * 2
    default = trl_reward(HashScorer(), aggregation="min")(prompts=prompts, completions=stopped)
    full = min(_offline(PROMPTS[0], COMPLETIONS[0]))  # text past the answer is not scored
    assert default == [0.0, full]
    asked = trl_reward(HashScorer(), "min", unfinished_reward=None)(prompts=prompts, completions=stopped)
    assert asked == [_offline(PROMPTS[0], stopped[0])[0], full]
    penalty = trl_reward(HashScorer(), "min", unfinished_reward=-1.0)(prompts=prompts, completions=stopped)
    assert penalty == [-1.0, full]
    none_for_empty = trl_reward(HashScorer(), "min", unfinished_reward=None)(
        prompts=PROMPTS, completions=COMPLETIONS
    )
    assert none_for_empty[1] is None  # no step at all: TRL skips it


def test_two_trl_rewards_are_logged_apart_by_trl() -> None:
    """TRL 1.16 names each reward by ``get_callable_name(func)`` (``func.__name__``) for
    ``rewards/<name>/mean`` and appends every ``log_extra(column, values)`` to one list per column:
    two prmkit rewards used to share ``prm_reward`` and ``prm_step_scores`` and so merged."""
    from collections import defaultdict

    from trl.trainer.grpo_trainer import GRPOTrainer
    from trl.trainer.utils import get_callable_name

    assert get_callable_name(trl_reward(HashScorer(), aggregation="min")) == "prm_HashScorer_min"
    assert reward_name("runs/prm-b/", "last") == "prm_prm-b_last"
    assert reward_name("http://127.0.0.1:8000", "mean") == "prm_127.0.0.1_8000_mean"
    trainer = SimpleNamespace(_pending_extra_logs=defaultdict(list), _pending_metrics=defaultdict(list))
    kwargs = {
        "log_extra": GRPOTrainer._log_completion_extra.__get__(trainer),
        "log_metric": GRPOTrainer._log_metric.__get__(trainer),
    }
    same = [trl_reward(HashScorer(), "min", name=n) for n in ("prm_a", "prm_b")]
    for f in same:
        f(prompts=PROMPTS, completions=COMPLETIONS, **kwargs)
    assert [get_callable_name(f) for f in same] == ["prm_a", "prm_b"]
    steps = [round(s, 4) for s in _offline(PROMPTS[0], COMPLETIONS[0])]
    assert dict(trainer._pending_extra_logs) == {
        "prm_a/step_scores": [steps, []],  # one value per completion, as TRL's table needs
        "prm_b/step_scores": [steps, []],
    }
    assert set(trainer._pending_metrics) == {
        f"{n}/{m}" for n in ("prm_a", "prm_b") for m in ("steps_per_completion", "unfinished", "overlong")
    }
    with pytest.raises(ValueError, match="name: expected letters"):
        trl_reward(HashScorer(), name="a b")


def test_trl_reward_conversational_and_async_over_http() -> None:
    conv_prompts = [
        [{"role": "system", "content": "be brief"}, {"role": "user", "content": p}] for p in PROMPTS
    ]
    conv_completions = [[{"role": "assistant", "content": c}] for c in COMPLETIONS]
    with run_server(create_app(HashScorer())) as url:
        f = trl_reward(url, aggregation="min", asynchronous=True)
        assert inspect.iscoroutinefunction(f)  # how TRL decides to await it
        out = asyncio.run(f(prompts=conv_prompts, completions=conv_completions, completion_ids=None))
        sync = trl_reward(url)(prompts=conv_prompts, completions=conv_completions)
    assert out == [min(_offline(PROMPTS[0], COMPLETIONS[0])), 0.0] == sync


def test_verl_compute_score() -> None:
    solution = COMPLETIONS[0]
    result = compute_score(
        "world", solution, "7", {"question": PROMPTS[0]}, model=HashScorer(), aggregation="mean"
    )  # fmt: skip
    expected = _offline(PROMPTS[0], solution)
    assert result == {
        "score": aggregate(expected, "mean"),
        "prm_num_steps": 2.0,
        "prm_min_step": min(expected),
        "prm_finished": 1.0,
    }
    empty = compute_score("world", "", "7", None, model=HashScorer())
    assert set(empty) == set(result) and empty["score"] == 0.0  # same keys for every sample, as verl needs
    stopped = compute_score("world", "3 + 4 = 7 apples.", "7", {"question": PROMPTS[0]}, model=HashScorer())
    assert stopped["score"] == 0.0 and stopped["prm_finished"] == 0.0 and stopped["prm_num_steps"] == 1.0
    asked = compute_score(
        "world",
        "3 + 4 = 7 apples.",
        "7",
        {"question": PROMPTS[0]},
        model=HashScorer(),
        unfinished_reward=None,
    )
    assert asked["score"] == _offline(PROMPTS[0], "3 + 4 = 7 apples.")[0]


class _CharTokenizer:
    """One token per character (ids = code points), enough to check step-end positions exactly."""

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        return "".join(chr(i) for i in ids if i > 0)


def test_verl_dense_manager_puts_scores_at_step_ends() -> None:
    prompt, response = "Q?", "ab\ncd\nThe answer is 7."
    p_ids = [0, 0] + [ord(c) for c in prompt]  # left-padded prompt, as verl stores it
    r_ids = [ord(c) for c in response] + [0, 0, 0]  # right-padded response
    batch = {
        "prompts": torch.tensor([p_ids]),
        "responses": torch.tensor([r_ids]),
        "attention_mask": torch.tensor([[0, 0, 1, 1] + [1] * len(response) + [0, 0, 0]]),
    }
    data = SimpleNamespace(batch=batch, non_tensor_batch={})
    manager = PrmkitRewardManager(_CharTokenizer(), 0, model=HashScorer())
    out = manager(data, return_dict=True)
    reward = out["reward_tensor"]
    assert reward.shape == (1, len(r_ids)) and reward.dtype == torch.float32
    expected = HashScorer().score([make_trace("Q?", ["ab", "cd", "The answer is 7."])])[0]
    ends = [1, 4, len(response) - 1]  # index of each step's last character
    assert torch.nonzero(reward[0]).flatten().tolist() == ends
    assert reward[0, ends].tolist() == pytest.approx(expected)
    assert out["reward_extra_info"]["prm_num_steps"] == [3.0]
    sparse = PrmkitRewardManager(_CharTokenizer(), 0, model=HashScorer(), dense=False)(data)
    assert torch.nonzero(sparse[0]).flatten().tolist() == [len(response) - 1]
    assert sparse[0, -4].item() == pytest.approx(min(expected))


def test_openrlhf_local_and_remote_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    prompt = "<|im_start|>user\nTom has 3 apples.<|im_end|>\n<|im_start|>assistant\n"
    queries = [prompt + "3 + 4 = 7\nThe answer is 7.<|im_end|>"]
    local = openrlhf_rewards(queries, [prompt], HashScorer())
    with run_server(create_app(HashScorer(), ServerConfig())) as url:
        monkeypatch.setenv("PRMKIT_REWARD_MODEL", url)
        via_env = reward_func(queries, [prompt], ["7"])
        remote = httpx.post(
            f"{url}/get_reward", json={"query": queries, "prompts": [prompt], "labels": ["7"]}
        ).json()
    assert local["rewards"] == remote["rewards"]
    assert via_env["rewards"].tolist() == pytest.approx(local["rewards"])  # float32 tensor
    assert local["rewards"][0] == min(_offline("Tom has 3 apples.", "3 + 4 = 7\nThe answer is 7."))
    assert isinstance(via_env["rewards"], torch.Tensor)


@pytest.mark.parametrize("unfinished_reward", [-0.5, None])
def test_openrlhf_local_and_remote_pay_an_overlong_response_alike(unfinished_reward) -> None:
    """More steps than the server scores: ``/get_reward`` and the local ``openrlhf_rewards`` over the same
    server (its ``max_steps_per_trace`` read from ``/health``) both pay the unfinished rule and mark it."""
    prompt = "Tom has 3 apples.\n"
    queries = [prompt + "a\nb\nc\nThe answer is 7.", prompt + "a\nThe answer is 7."]
    config = ServerConfig(max_steps_per_trace=3, unfinished_reward=unfinished_reward)
    with run_server(create_app(HashScorer(), config)) as url:
        local = openrlhf_rewards(queries, [prompt] * 2, url, unfinished_reward=unfinished_reward)
        remote = httpx.post(f"{url}/get_reward", json={"query": queries, "prompts": [prompt] * 2}).json()
    rule = 0.0 if unfinished_reward is None else unfinished_reward
    assert (
        local["rewards"]
        == remote["rewards"]
        == [rule, min(_offline("Tom has 3 apples.", "a\nThe answer is 7."))]
    )
    assert local["extra_logs"]["prm_overlong"] == remote["extra_logs"]["prm_overlong"] == [1.0, 0.0]

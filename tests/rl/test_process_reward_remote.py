"""ProcessReward against a real prmkit server on loopback: a response of more steps than the server
scores is paid by the unfinished rule and counted, instead of a 422 that would stop the trainer."""

from __future__ import annotations

from prmkit.rl.rewards import ProcessReward, trl_reward
from prmkit.serving.reward_server import ServerConfig, create_app
from tests.serving.conftest import HashScorer, run_server

PROBLEM = "Tom has 3 apples and gets 2 more. How many?"


def _steps(n: int) -> str:
    return "\n".join([f"Step {i}: 3 + 2 = 5." for i in range(n - 1)] + ["The answer is 5."])


def test_a_300_step_response_gets_the_unfinished_reward_and_the_others_their_scores() -> None:
    with run_server(create_app(HashScorer(), ServerConfig())) as url:
        reward = ProcessReward(url, unfinished_reward=-0.5)
        short, runaway = reward.score([PROBLEM, PROBLEM], [_steps(3), _steps(300)])
        assert not short.unpaid and not short.overlong and len(short.rewards) == 3
        assert runaway.unpaid and runaway.overlong and runaway.rewards == [-0.5]
        assert runaway.parsed.finished  # it answered; it is paid as unfinished for its length alone
        # where unfinished completions are scored (None), an over-long one still gets 0.0, not an error
        (none,) = ProcessReward(url, unfinished_reward=None).score([PROBLEM], [_steps(300)])
        assert none.rewards == [0.0] and none.overlong
        # the aggregate reward TRL calls, with its metric
        logged: dict[str, float] = {}
        fn = trl_reward(url, "min", unfinished_reward=-0.5, name="prm")
        paid = fn([PROBLEM, PROBLEM], [_steps(3), _steps(300)], log_metric=logged.__setitem__)
        assert paid[1] == -0.5 and paid[0] == min(short.rewards)
        assert logged["prm/overlong"] == 0.5

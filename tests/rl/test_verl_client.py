"""The verl side of prmkit (``prmkit.rl.verl_client``, ``prmkit.rl.verl_advantages``), checked in this
environment without verl.

The client cuts steps with prmkit's own split, answer rule and token ends; here its settings are checked
to name the split the PRM was trained with. The problem text comes from the fields verl's preprocessing
writes, never from a prompt decoded without its special tokens; ``compute_score`` is paid by a real
server on loopback, which never stops it for one response (over-long: unfinished, counted; refused:
the same). Where step rewards go is decided from verl's config (never a sum under a summing
estimator), and prmkit's estimators read the steps back from the -0.0 encoding to exactly
``process_advantages``. tests/rl/test_verl_loop.py runs the manager and estimators inside verl 0.9.1.
"""

from __future__ import annotations

import asyncio
import logging
import math
import pickle
import subprocess
import sys

import numpy as np
import pytest
import torch

from prmkit.core.steps import StepSplit, make_trace, parse_completion
from prmkit.rl import verl_advantages as va
from prmkit.rl import verl_client as vc
from prmkit.rl.advantages import process_advantages
from prmkit.rl.rewards import ProcessReward
from prmkit.rl.verl import PrmkitRewardManager
from prmkit.serving.reward_server import ServerConfig, create_app
from tests.serving.conftest import HashScorer, run_server

TEXTS = [
    "3 + 4 = 7\nThe answer is 7.",
    "  a\n\n b \nSo \\boxed{x^{2}} it is.\nafter the answer",
    "<|im_start|>assistant\nstep one<|im_end|>\nstep two\n#### 12",
    "no answer\nat all\n",
    "",
    "\n\n",
    "Step 1: x\n\nStep 2: y\n\nThe final answer is: $5$.",
    "héllo wörld\nthe answer is ünïcode",
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(
    "split", [StepSplit(), StepSplit(step_separator="\n\n"), StepSplit(step_pattern=r"\n\n+|(?=Step \d+:)")]
)
def test_settings_cut_prmkits_steps(text: str, split: StepSplit) -> None:
    settings = vc.Settings(
        url="http://x", step_separator=split.step_separator, step_pattern=split.step_pattern
    )
    assert settings.split() == split
    assert vc.parse_steps(text, settings) == parse_completion(text, split)


def test_answer_pattern_and_strip_special_settings() -> None:
    settings = vc.Settings(url="http://x", answer_pattern=r"ANSWER: (\S+)", strip_special=None)
    parsed = vc.parse_steps("2 + 2 = 4\nANSWER: 4\n</s>", settings)
    assert (parsed.steps, parsed.answer) == (["2 + 2 = 4", "ANSWER: 4"], "4")
    assert vc.parse_steps("x\nThe answer is 4.", settings).answer is None
    assert vc.parse_steps("a</s>\nb", settings).steps == ["a</s>", "b"]


def test_defaults_are_prmkits() -> None:
    from prmkit.core.steps import DEFAULT_ANSWER_PATTERN, DEFAULT_SPECIAL

    assert vc.DEFAULT_SPECIAL == DEFAULT_SPECIAL and vc.DEFAULT_ANSWER_PATTERN == DEFAULT_ANSWER_PATTERN


@pytest.fixture(scope="module")
def chatml():
    from prmkit.modeling.tokenizer import build_tokenizer

    texts = ["Tom has 3 apples and gets 4 more.", "3 + 4 = 7\nThe answer is 7.", "héllo wörld ünïcode"]
    tok = build_tokenizer(texts * 4, vocab_size=300, extra_tokens=("<|im_start|>", "<|im_end|>"))
    tok.eos_token = "<|im_end|>"
    return tok


def test_problem_comes_from_verls_row_fields() -> None:
    messages = np.array(
        [{"role": "system", "content": "Be careful."}, {"role": "user", "content": "What is 2+2? Think."}],
        dtype=object,
    )
    assert (
        vc.problem_of({"question": " What is 2+2? ", "split": "train"}, messages) == "What is 2+2?"
    )  # gsm8k
    assert (
        vc.problem_of({"split": "train", "index": 3}, messages) == "What is 2+2? Think."
    )  # MATH: raw_prompt
    parts = [{"role": "user", "content": [{"type": "text", "text": "Q1"}, {"type": "image"}]}]
    assert vc.problem_of(None, parts) == "Q1"
    templated = "<|im_start|>system\nBe careful.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"
    assert vc.problem_of({}, None, templated) == "What is 2+2?"
    llama = "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>assistant<|end_header_id|>"
    assert vc.template_user_turn(llama) == "Hi there"
    assert vc.problem_of({}, [], "") == ""


def test_settings_from_config_then_environment() -> None:
    env = {"PRMKIT_REWARD_URL": "http://env:1/", "PRMKIT_AGGREGATION": "last", "PRMKIT_DENSE": "false"}
    s = vc.settings_from({"aggregation": "mean", "unfinished_reward": "none"}, env)
    assert (s.url, s.aggregation, s.dense, s.unfinished_reward) == ("http://env:1", "mean", False, None)
    assert vc.settings_from({"url": "http://a"}, {}).dense is None  # auto: decided from verl's config
    assert vc.settings_from({"url": "http://a", "dense": "auto"}, {"PRMKIT_DENSE": "true"}).dense is None
    assert vc.settings_from({"url": "http://a"}, {"PRMKIT_DENSE": "true"}).dense is True
    with pytest.raises(ValueError, match=r"aggregation: .*Did you mean 'min'"):
        vc.settings_from({"url": "http://a", "aggregation": "mni"}, {})
    assert vc.settings_from({}, {"PRMKIT_REWARD_MODEL": "https://prm:8000"}).url == "https://prm:8000"
    assert vc.settings_from({"url": "http://a", "unfinished_reward": -1}, {}).unfinished_reward == -1.0
    with pytest.raises(ValueError, match=r"no server: set reward.reward_kwargs.prmkit.url"):
        vc.settings_from({}, {"PRMKIT_REWARD_MODEL": "runs/prm"})
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['modle'\]"):
        vc.settings_from({"url": "http://a", "modle": "x"}, {})
    with pytest.raises(ValueError, match="dense: expected auto, true or false, found 'maybe'"):
        vc.settings_from({"url": "http://a", "dense": "maybe"}, {})


def test_compute_score_against_a_server(caplog) -> None:
    problem, solution = "Tom has 3 apples. He gets 4 more.", "3 + 4 = 7 apples.\nThe answer is 7."
    expected = HashScorer().score([make_trace(problem, ["3 + 4 = 7 apples.", "The answer is 7."])])[0]
    with run_server(create_app(HashScorer(), ServerConfig())) as url:
        out = asyncio.run(vc.compute_score("math", solution, "7", {"question": problem}, url=url))
        assert out == {
            "score": min(expected),
            "prm_score": min(expected),
            "prm_num_steps": 2.0,
            "prm_min_step": min(expected),
            "prm_finished": 1.0,
            "prm_empty_problem": 0.0,
            "prm_overlong": 0.0,
            "prm_refused": 0.0,
        }
        stopped = asyncio.run(vc.compute_score("math", "3 + 4 = 7", "7", {"question": problem}, url=url))
        assert stopped["score"] == 0.0 and stopped["prm_finished"] == 0.0 and set(stopped) == set(out)
        assert math.copysign(1.0, stopped["score"]) == -1.0  # 0.0 written as -0.0: a step end for verl
        before = vc.empty_problems()
        with caplog.at_level(logging.DEBUG, logger="prmkit.verl"):
            empty = asyncio.run(vc.compute_score("math", solution, "7", {"split": "train"}, url=url))
        assert empty["prm_empty_problem"] == 1.0 and vc.empty_problems() == before + 1
        assert "no problem text" in caplog.text
        assert empty["score"] == min(
            HashScorer().score([make_trace("", ["3 + 4 = 7 apples.", "The answer is 7."])])[0]
        )


def test_server_refusal_is_raised_not_scored() -> None:
    with run_server(create_app(HashScorer(), ServerConfig(max_step_chars=10))) as url:
        settings = vc.Settings(url=url, retries=0)
        client_steps = ["a" * 50]

        async def go():
            async with vc.httpx.AsyncClient() as client:
                return await vc.score_steps(client, settings, "p", client_steps)

        with pytest.raises(vc.Refused, match="answered 413"):
            asyncio.run(go())


def test_one_response_never_stops_the_reward_loop(caplog) -> None:
    """300 steps (more than the server's 256): paid unfinished without a request, ``prm_overlong``;
    a step over the server's size limit (413): paid unfinished, ``prm_refused``, the server's message
    logged once as a warning; a wrong API key (401) would refuse every response, so it raises."""
    problem = "Tom has 3 apples. He gets 4 more."
    long = "\n".join(f"step {i}: 1 + 1 = 2" for i in range(300)) + "\nThe answer is 7."
    app = create_app(HashScorer(), ServerConfig(max_step_chars=60, api_key="k"))
    with run_server(app) as url:
        kw = {"url": url, "api_key": "k", "unfinished_reward": "none"}
        vc._LIMITS.pop(url, None)
        over = asyncio.run(vc.compute_score("m", long, "7", {"question": problem}, **kw))
        assert vc._LIMITS[url] == vc.DEFAULT_MAX_STEPS == 256  # /health read once, the server's default
        assert (over["score"], over["prm_overlong"], over["prm_refused"], over["prm_num_steps"]) == (
            0.0,
            1.0,
            0.0,
            301.0,
        )
        before = vc.refused_responses()
        with caplog.at_level(logging.DEBUG, logger="prmkit.verl"):
            big = asyncio.run(
                vc.compute_score("m", "x" * 80 + "\nThe answer is 7.", "7", {"question": problem}, **kw)
            )
            asyncio.run(
                vc.compute_score("m", "y" * 80 + "\nThe answer is 7.", "7", {"question": problem}, **kw)
            )
        assert (big["score"], big["prm_refused"], big["prm_overlong"]) == (0.0, 1.0, 0.0)
        assert vc.refused_responses() == before + 2 and "413" in caplog.text
        fine = asyncio.run(
            vc.compute_score("m", "3 + 4 = 7\nThe answer is 7.", "7", {"question": problem}, **kw)
        )
        assert fine["prm_refused"] == 0.0 and fine["prm_finished"] == 1.0
        with pytest.raises(vc.ServerError, match="answered 401"):
            asyncio.run(vc.compute_score("m", "3 + 4 = 7\nThe answer is 7.", "7", {}, url=url, api_key="no"))


def test_dense_score_is_the_aggregate_and_survives_pickling() -> None:
    """The float is what verl's streaming path keeps (the aggregate, never the step sum); zero as -0.0."""
    score = vc.DenseScore(0.25, [(2, 0.25), (7, 0.5)])
    back = pickle.loads(pickle.dumps(score))
    assert float(back) == 0.25 and back.prmkit_steps == ((2, 0.25), (7, 0.5))
    assert torch.tensor([back, 1.0]).tolist() == [0.25, 1.0]  # what verl's streaming path does with it
    zero = pickle.loads(pickle.dumps(vc.DenseScore(0.0, [(3, 0.0)])))
    assert torch.tensor([zero]).signbit().tolist() == [True]
    assert vc.step_row([(2, 0.0), (5, 0.25), (5, -0.25), (9, 1.0)]) == {2: -0.0, 5: -0.0, 9: 1.0}
    assert [math.copysign(1, v) for v in vc.step_row([(2, 0.0), (5, 0.25), (5, -0.25)]).values()] == [-1, -1]


GRPO = {"adv_estimator": "grpo"}
MIN = {"adv_estimator": "prmkit_min"}
COLOCATED = {"enable": True, "enable_resource_pool": False}


def test_step_rewards_are_placed_only_where_an_estimator_reads_them(caplog) -> None:
    place = va.dense_placement
    assert place(None, GRPO) is False and place(None, {}) is False  # verl's default estimator is gae
    for name in va.ESTIMATOR_FNS:  # every prmkit_<credit form>, and the old names
        assert place(None, {"adv_estimator": name}, COLOCATED) is True, name
    assert place(False, MIN, COLOCATED) is False
    assert place(True, {"adv_estimator": "gae"}) is True and place(
        True, {"adv_estimator": "reinforce_plus_plus"}
    )
    for name in ("grpo", "rloo", "remax", "grpo_vectorized", "opo"):
        with pytest.raises(ValueError, match=rf"adv_estimator={name} sums .*adv_estimator=prmkit_min"):
            place(True, {"adv_estimator": name}, COLOCATED)
    with pytest.raises(ValueError, match="use_kl_in_reward=False"):
        place(None, {**MIN, "use_kl_in_reward": True}, COLOCATED)
    with pytest.raises(ValueError, match="norm_adv_by_std_in_grpo=False is not supported"):
        place(None, {**MIN, "norm_adv_by_std_in_grpo": False}, COLOCATED)
    with caplog.at_level(logging.WARNING, logger="prmkit.verl"):
        assert place(None, MIN, {"enable": False}) is True
    assert "keeps one number per response" in caplog.text


def _encode(rows: list[list[tuple[int, float]]], width: int) -> torch.Tensor:
    out = torch.zeros(len(rows), width)
    for i, row in enumerate(rows):
        for t, r in vc.step_row(row).items():
            out[i, t] = r
    return out


@pytest.mark.parametrize(
    ("name", "credit"), [("prmkit_sum", "sum"), ("prmkit_min", "min"), ("prmkit_process_grpo", "sum")]
)
def test_estimator_reads_steps_back_by_uid(name: str, credit: str) -> None:
    """Zero-reward steps survive as -0.0; groups come from uids, interleaved and uneven (a dropped
    sample), and equal ``process_advantages`` on each group."""
    steps = [
        [(1, 1.0), (4, 0.0), (6, 0.0)],  # uid a
        [(2, 1.0), (5, 1.0)],  # uid b
        [(0, 0.0)],  # uid a: one zero step (an unfinished response)
        [(3, 1.0), (7, 1.0), (8, 0.5)],  # uid b
        [(1, 0.25), (2, 1.0)],  # uid a
    ]
    lengths, index = [8, 7, 3, 10, 5], np.array(["a", "b", "a", "b", "a"], dtype=object)
    width = 12
    mask = torch.tensor([[1] * n + [0] * (width - n) for n in lengths])
    rewards = _encode(steps, width)
    adv, ret = va.ESTIMATOR_FNS[name](rewards, mask, index=index, config={"norm_adv_by_std_in_grpo": True})
    assert adv is ret and adv.shape == (5, width)
    for rows in ([0, 2, 4], [1, 3]):
        want = process_advantages(
            [[r for _, r in steps[i]] for i in rows],
            [[t for t, _ in steps[i]] for i in rows],
            [lengths[i] for i in rows],
            group_size=len(rows),
            credit=credit,
        )
        for i, row in zip(rows, want, strict=True):
            torch.testing.assert_close(adv[i, : lengths[i]], torch.tensor(row, dtype=torch.float32))
            assert not adv[i, lengths[i] :].any()
    with pytest.raises(ValueError, match="no index"):
        va.ESTIMATOR_FNS[name](rewards, mask)
    with pytest.raises(ValueError, match="use_kl_in_reward"):
        va.ESTIMATOR_FNS[name](rewards, mask, index=index, config={"use_kl_in_reward": True})


def test_imports_without_verl() -> None:
    """prmkit has no verl here: the module imports, and only the manager's name needs verl."""
    code = "import prmkit.rl.verl_client as m, prmkit.rl.verl; m.PrmkitRewardManager"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "No module named 'verl'" in proc.stderr


def test_in_process_manager_reads_the_problem_not_role_words(chatml) -> None:
    """verl's legacy call shape: with no row fields the prompt is decoded with its markers and cut to
    the user turn; the polluted decode (``skip_special_tokens=True``) would score other numbers."""
    text = "<|im_start|>system\nBe careful.<|im_end|>\n<|im_start|>user\nTom has 3 apples and gets 4 more.<|im_end|>\n<|im_start|>assistant\n"
    p_ids = chatml.encode(text, add_special_tokens=False)
    r_ids = [*chatml.encode("3 + 4 = 7\nThe answer is 7.", add_special_tokens=False), chatml.eos_token_id]
    pad = chatml.pad_token_id
    batch = {
        "prompts": torch.tensor([[pad] * 3 + p_ids]),
        "responses": torch.tensor([r_ids + [pad] * 4]),
        "attention_mask": torch.tensor([[0] * 3 + [1] * len(p_ids) + [1] * len(r_ids) + [0] * 4]),
    }
    data = type("D", (), {"batch": batch, "non_tensor_batch": {}})()
    reward = PrmkitRewardManager(chatml, 0, model=HashScorer())(data)
    problem = "Tom has 3 apples and gets 4 more."
    (want,) = ProcessReward(HashScorer()).score([problem], ["3 + 4 = 7\nThe answer is 7."])
    assert reward[0][torch.nonzero(reward[0]).flatten()].tolist() == pytest.approx(want.rewards)
    polluted = chatml.decode(p_ids, skip_special_tokens=True)
    assert (
        ProcessReward(HashScorer()).score([polluted], ["3 + 4 = 7\nThe answer is 7."])[0].rewards
        != want.rewards
    )
    rows = {"raw_prompt": np.array([[{"role": "user", "content": problem}]], dtype=object)}
    data.non_tensor_batch = {**rows, "extra_info": np.array([{"split": "train"}], dtype=object)}
    assert torch.equal(PrmkitRewardManager(chatml, 0, model=HashScorer())(data), reward)

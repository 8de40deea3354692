"""verl 0.9.1's own reward loop pays prmkit's dense step rewards (issue 20, item 1).

A prmkit server on loopback serves a tiny random PRM checkpoint from this environment; the verl
environment (``.venv-verl``: verl 0.9.1 with its own ``transformers<5.11``, built by ``make verl-env``)
runs tests/rl/verl_loop_run.py, which composes verl's ``ppo_trainer.yaml`` with the overrides of
docs/rl.md, builds the batch the way verl's agent loop does, and lets verl's ``RewardLoopWorker`` (and,
with Ray, ``RewardLoopManager``) build and run ``PrmkitRewardManager``. The ``rm_scores`` verl returns
must equal what prmkit computes here for the same tokens: each step's score from the same server at
the token where the step ends (``prmkit.rl.emitters``), with the problem read from verl's row fields.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import torch

from prmkit.rl.emitters import step_token_ends, verl_reward_tensor
from prmkit.rl.rewards import ProcessReward
from prmkit.scoring import load_scorer
from prmkit.serving.reward_server import ServerConfig, create_app
from prmkit.testing import make_random_prm
from tests.serving.conftest import run_server

ROOT = Path(__file__).resolve().parents[2]
VERL_PYTHON = Path(os.environ.get("PRMKIT_VERL_PYTHON") or ROOT / ".venv-verl" / "bin" / "python")
"""The verl environment's python (``make verl-env``); ``PRMKIT_VERL_PYTHON`` points at another one."""
CLIENT = ROOT / "src" / "prmkit" / "rl" / "verl_client.py"
SCRIPT = Path(__file__).with_name("verl_loop_run.py")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not VERL_PYTHON.exists(),
        reason="no verl environment: `make verl-env` builds .venv-verl (verl 0.9.1, ~3 minutes)",
    ),
]

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SYSTEM = {"role": "system", "content": "You are a careful math tutor."}
INSTRUCTION = " Let's think step by step and output the final answer within \\boxed{}."
SAMPLES = [
    {  # MATH-style row: extra_info holds only split/index, so the problem comes from raw_prompt
        "messages": [SYSTEM, {"role": "user", "content": "Tom has 3 apples and gets 4 more." + INSTRUCTION}],
        "response": "Tom starts with 3 apples.\n3 + 4 = 7\nSo he has \\boxed{7} apples.\nextra words",
        "extra_info": {"split": "train", "index": 0},
    },
    {  # gsm8k-style row: extra_info.question is the question without the instruction
        "messages": [{"role": "user", "content": "Ann has 2 pens and buys 5. How many? Think step by step."}],
        "response": "2 + 5 = 7 pens.\nThe answer is 7.",
        "extra_info": {"split": "train", "index": 1, "question": "Ann has 2 pens and buys 5. How many?"},
    },
    {  # unfinished: no step states an answer, paid unfinished_reward at its last token
        "messages": [{"role": "user", "content": "Bo has 9 cards and loses 4."}],
        "response": "9 - 4 = 5\nHmm, let me check",
        "extra_info": {"split": "train", "index": 2},
    },
]
UNFINISHED = -0.5
PROMPT_LEN, RESPONSE_LEN = 160, 96


def expected_problem(sample: dict) -> str:
    return sample["extra_info"].get("question") or sample["messages"][-1]["content"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A ChatML tokenizer for the policy, and a prmkit server of a tiny random PRM on loopback."""
    from prmkit.modeling.tokenizer import build_tokenizer

    root = tmp_path_factory.mktemp("verl")
    texts = [m["content"] for s in SAMPLES for m in s["messages"]] + [s["response"] for s in SAMPLES]
    tok = build_tokenizer(texts * 4, vocab_size=320, extra_tokens=("<|im_start|>", "<|im_end|>"))
    tok.eos_token = "<|im_end|>"
    tok.chat_template = CHATML
    tok.save_pretrained(root / "policy")
    scorer = load_scorer(make_random_prm(root / "prm"))
    with run_server(create_app(scorer, ServerConfig())) as url:
        yield {"tokenizer": tok, "tokenizer_dir": str(root / "policy"), "url": url, "root": root}


def run_verl(served, overrides: list[str], *, ray: bool = False, env: dict | None = None) -> dict:
    out = served["root"] / f"out-{len(overrides)}-{ray}.json"
    request = {
        "tokenizer": served["tokenizer_dir"],
        "overrides": [
            f"actor_rollout_ref.model.path={served['tokenizer_dir']}",
            "reward.num_workers=1",
            f"+reward.reward_kwargs.prmkit.url={served['url']}",
            f"+reward.reward_kwargs.prmkit.unfinished_reward={UNFINISHED}",
            *overrides,
        ],
        "samples": SAMPLES,
        "prompt_length": PROMPT_LEN,
        "response_length": RESPONSE_LEN,
        "ray": ray,
        "out": str(out),
    }
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PRMKIT_"))}
    proc = subprocess.run(
        [str(VERL_PYTHON), str(SCRIPT)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=300,
        env={**clean, "TOKENIZERS_PARALLELISM": "false", **(env or {})},
        cwd=served["root"],
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(out.read_text())


def expected_rm_scores(served, result: dict) -> torch.Tensor:
    """prmkit's own dense rewards for the tokens verl built: same server, same token ids."""
    tok = served["tokenizer"]
    process = ProcessReward(served["url"], unfinished_reward=UNFINISHED)
    rewards, ends = [], []
    for sample, row, mask in zip(SAMPLES, result["response_ids"], result["attention_mask"], strict=True):
        ids = row[: sum(mask[PROMPT_LEN:])]
        (paid,) = process.score([expected_problem(sample)], [tok.decode(ids, skip_special_tokens=True)])
        rewards.append(paid.rewards)
        ends.append(step_token_ends(ids, tok, paid.char_ends))
    return verl_reward_tensor(rewards, ends, RESPONSE_LEN)


def check(served, result: dict) -> None:
    assert result["versions"]["verl"] == "0.9.1"
    assert result["versions"]["transformers"].startswith("5.") and result["versions"]["transformers"] < "5.11"
    assert "RewardManagerBase" in result["bases"]
    got = torch.tensor(result["rm_scores"])
    want = expected_rm_scores(served, result)
    assert got.shape == (len(SAMPLES), RESPONSE_LEN)
    assert torch.allclose(got, want, atol=1e-6), (got, want)
    assert [len(torch.nonzero(r)) for r in got] == [3, 2, 1]  # 3 steps (text past \boxed dropped), 2, 1
    assert got[2].sum().item() == pytest.approx(UNFINISHED)
    extra = result["reward_extra_info"]
    assert extra["prm_finished"] == [1.0, 1.0, 0.0] and extra["prm_num_steps"] == [3.0, 2.0, 2.0]
    assert extra["prm_empty_problem"] == [0.0, 0.0, 0.0]


def test_reward_loop_by_registered_name(served, tmp_path) -> None:
    """``reward.reward_manager.name=prmkit``: the module imported at ``import verl`` registers it."""
    (tmp_path / "prmkit_verl_client.py").symlink_to(CLIENT)
    env = {"PYTHONPATH": str(tmp_path), "VERL_USE_EXTERNAL_MODULES": "prmkit_verl_client"}
    result = run_verl(served, ["reward.reward_manager.name=prmkit"], env=env)
    assert "prmkit" in result["registered"] and result["manager"].endswith("PrmkitRewardManager")
    check(served, result)
    # verl's default streaming path keeps one float per response at its last token: the step sum
    streamed, dense = torch.tensor(result["streamed_rm_scores"]), torch.tensor(result["rm_scores"])
    last = [sum(m[PROMPT_LEN:]) - 1 for m in result["attention_mask"]]
    assert [torch.nonzero(r).flatten().tolist() for r in streamed] == [[t] for t in last]
    assert torch.allclose(streamed.sum(-1), dense.sum(-1), atol=1e-6)
    # the pollution the manager avoids: decoding the prompt without its special tokens keeps role words
    tok = served["tokenizer"]
    polluted = tok.decode(result["prompt_ids"][0], skip_special_tokens=True)
    assert polluted.startswith("system\nYou are a careful math tutor.\nuser\n")
    process = ProcessReward(served["url"])
    response = tok.decode(result["response_ids"][0], skip_special_tokens=True)
    clean_scores = process.score([expected_problem(SAMPLES[0])], [response])[0].rewards
    assert process.score([polluted], [response])[0].rewards != clean_scores


def test_reward_loop_by_import_path_on_ray(served) -> None:
    """``source=importlib`` + ``module.path``: ``RewardLoopManager`` runs it in a Ray worker actor."""
    overrides = [
        "reward.reward_manager.source=importlib",
        f"reward.reward_manager.module.path={CLIENT}",
        "reward.reward_manager.name=PrmkitRewardManager",
    ]
    result = run_verl(served, overrides, ray=True)
    check(served, result)


def test_custom_reward_function_scalar(served) -> None:
    """``reward.custom_reward_function`` = the client's async ``compute_score``, run by verl's naive
    manager: the aggregate at the last token; no ``extra_info.question`` means an empty problem, flagged."""
    overrides = [
        f"reward.custom_reward_function.path={CLIENT}",
        "reward.custom_reward_function.name=compute_score",
        f"+reward.custom_reward_function.reward_kwargs.url={served['url']}",
        f"+reward.custom_reward_function.reward_kwargs.unfinished_reward={UNFINISHED}",
    ]
    result = run_verl(served, overrides)
    assert result["manager"].endswith("NaiveRewardManager")
    extra = result["reward_extra_info"]
    assert extra["prm_empty_problem"] == [1.0, 0.0, 0.0]  # MATH row: verl gives the function no prompt
    process = ProcessReward(served["url"])
    tok = served["tokenizer"]
    got = torch.tensor(result["rm_scores"])
    for i, (sample, row, mask) in enumerate(
        zip(SAMPLES, result["response_ids"], result["attention_mask"], strict=True)
    ):
        n = sum(mask[PROMPT_LEN:])
        problem = sample["extra_info"].get("question", "")
        (paid,) = process.score([problem], [tok.decode(row[:n], skip_special_tokens=True)])
        want = min(paid.rewards) if paid.parsed.finished else UNFINISHED
        assert torch.nonzero(got[i]).flatten().tolist() == [n - 1]
        assert got[i, n - 1].item() == pytest.approx(want, abs=1e-6)

"""verl 0.9.1's own reward loop pays prmkit's step rewards, and verl's own advantage computation trains on
them (issue 20, item 1; issue 36).

A prmkit server on loopback serves a tiny random PRM checkpoint (or ``arithmetic-oracle``, a perfect PRM)
from this environment; the verl environment (``.venv-verl``: verl 0.9.1 with its own
``transformers<5.11``, built by ``make verl-env``) runs tests/rl/verl_loop_run.py, which composes verl's
``ppo_trainer.yaml`` with the overrides of docs/rl.md, builds the batch the way verl's agent loop does,
and lets verl's ``RewardLoopWorker`` (and, with Ray, ``RewardLoopManager.compute_rm_score``) build and run
``PrmkitRewardManager``. With a prmkit estimator the ``rm_scores`` verl returns must equal what prmkit
computes here for the same tokens (each step's score at the token where the step ends), and verl's
``compute_advantage`` with the registered estimator must give ``process_advantages``. With verl's own
``grpo`` (the documented default) every path pays the aggregate: padding a response with correct
steps earns nothing. With an outcome estimator (``prmkit_<form>``) the manager grades each answer
against the row's ground truth and verl's ``compute_advantage`` gives ``credit_advantages`` on the same
step rewards and outcomes.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from pathlib import Path

import pytest
import torch

from prmkit.rl import verl_advantages as va
from prmkit.rl.advantages import process_advantages
from prmkit.rl.credits import Rollouts, credit_advantages
from prmkit.rl.emitters import step_token_ends, verl_reward_tensor
from prmkit.rl.rewards import ProcessReward
from prmkit.scoring import load_scorer
from prmkit.serving.reward_server import ServerConfig, create_app
from prmkit.testing import make_random_prm
from prmkit.worlds.arithmetic.oracle import OracleScorer
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
MIN = "algorithm.adv_estimator=prmkit_min"
BY_PATH = [
    "reward.reward_manager.source=importlib",
    f"reward.reward_manager.module.path={CLIENT}",
    "reward.reward_manager.name=PrmkitRewardManager",
]
"""The manager as docs/rl.md loads it: this file by path."""
_RUNS = itertools.count()
STEP_ESTIMATORS = tuple(f"prmkit_{c}" for c in va.STEP_CREDITS)
OUTCOME_ESTIMATORS = tuple(f"prmkit_{c}" for c in va.OUTCOME_CREDITS)


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


def verl_request(
    served,
    overrides: list[str],
    *,
    samples: list[dict] = SAMPLES,
    unfinished: float = UNFINISHED,
    ray: bool = False,
    estimators: tuple[str, ...] = (),
) -> dict:
    """What tests/rl/verl_loop_run.py reads: a batch of ``samples`` paid by ``served``'s server, verl's
    config composed with ``overrides``, advantages by ``estimators``; its result goes to ``out``."""
    return {
        "tokenizer": served["tokenizer_dir"],
        "overrides": [
            f"actor_rollout_ref.model.path={served['tokenizer_dir']}",
            "reward.num_workers=1",
            f"+reward.reward_kwargs.prmkit.url={served['url']}",
            f"+reward.reward_kwargs.prmkit.unfinished_reward={unfinished}",
            *overrides,
        ],
        "samples": samples,
        "prompt_length": PROMPT_LEN,
        "response_length": RESPONSE_LEN,
        "ray": ray,
        "estimators": list(estimators),
        "out": str(served["root"] / f"out-{next(_RUNS)}.json"),
    }


def run_requests(requests: list[dict], env: dict | None = None) -> list[dict]:
    """Each request run by tests/rl/verl_loop_run.py in one interpreter of the verl environment, in
    turn; their results (``{"failed": traceback}`` for one that raised, where there are several)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PRMKIT_"))}
    proc = subprocess.run(
        [str(VERL_PYTHON), str(SCRIPT)],
        input=json.dumps(requests[0] if len(requests) == 1 else {"requests": requests}),
        capture_output=True,
        text=True,
        timeout=300 * len(requests),
        env={**clean, "TOKENIZERS_PARALLELISM": "false", **(env or {})},
        cwd=Path(requests[0]["out"]).parent,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return [json.loads(Path(r["out"]).read_text()) for r in requests]


def run_verl(served, overrides: list[str], *, env: dict | None = None, **request) -> dict:
    """One request (:func:`verl_request`) in an interpreter of its own, with ``env`` added."""
    (result,) = run_requests([verl_request(served, overrides, **request)], env)
    return result


CUSTOM_SCALAR = [
    "reward.custom_reward_function.path={client}",
    "reward.custom_reward_function.name=compute_score",
    "+reward.custom_reward_function.reward_kwargs.url={url}",
    "+reward.custom_reward_function.reward_kwargs.unfinished_reward={unfinished}",
]


@pytest.fixture(scope="module")
def shared_runs(served, oracle) -> dict[str, dict]:
    """The runs of the tests below that need no process of their own (no Ray, no environment variable
    read at ``import verl``), one after the other in one verl interpreter: verl's imports take ~8 s each
    time, the runs under a second. Each test checks its own run's result (:func:`shared_result`)."""
    custom = [o.format(client=CLIENT, url=served["url"], unfinished=UNFINISHED) for o in CUSTOM_SCALAR]
    graded = [{**s, "ground_truth": GROUND_TRUTH[s["uid"]]} for s in oracle["samples"]]
    on_world = {"samples": oracle["samples"], "unfinished": 0.0}
    requests = {
        "custom_scalar": verl_request(served, custom),
        "documented_default": verl_request(
            oracle, [*BY_PATH, "algorithm.adv_estimator=grpo"], estimators=("grpo",), **on_world
        ),
        "step_rewards": verl_request(oracle, [*BY_PATH, MIN], estimators=STEP_ESTIMATORS, **on_world),
        "outcomes": verl_request(
            oracle,
            [*BY_PATH, f"algorithm.adv_estimator={OUTCOME_ESTIMATORS[0]}"],
            samples=graded,
            unfinished=0.0,
            estimators=OUTCOME_ESTIMATORS,
        ),
    }
    return dict(zip(requests, run_requests(list(requests.values())), strict=True))


def shared_result(shared_runs: dict[str, dict], name: str) -> dict:
    """Run ``name``'s result; its traceback, where it raised, fails the test that reads it."""
    result = shared_runs[name]
    if "failed" in result:
        pytest.fail(f"verl_loop_run.py raised on {name}:\n{result['failed']}")
    return result


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
    assert extra["prm_empty_problem"] == extra["prm_overlong"] == extra["prm_refused"] == [0.0, 0.0, 0.0]
    assert set(va.ESTIMATOR_FNS) <= set(result["estimators_registered"])  # every form, and the old names
    if result["v1_colocated_rm_scores"] is not None:
        # issue 66, item 6: verl's v1 trainer hands its colocated reward path raw_prompt only, no
        # extra_info; the PRM must still read the gsm8k row's question without verl's instruction
        assert result["v1_colocated_fields"] == ["raw_prompt"]
        v1 = torch.tensor(result["v1_colocated_rm_scores"])
        assert torch.allclose(v1, want, atol=1e-6), (v1, want)


def test_reward_loop_by_registered_name(served, tmp_path) -> None:
    """``reward.reward_manager.name=prmkit``: the module imported at ``import verl`` registers it, and
    prmkit's estimators with it."""
    (tmp_path / "prmkit_verl_client.py").symlink_to(CLIENT)
    env = {"PYTHONPATH": str(tmp_path), "VERL_USE_EXTERNAL_MODULES": "prmkit_verl_client"}
    result = run_verl(served, ["reward.reward_manager.name=prmkit", MIN], env=env)
    assert "prmkit" in result["registered"] and result["manager"].endswith("PrmkitRewardManager")
    check(served, result)
    # verl's streaming paths (v0 and v1 trainers) keep one float per response at its last token: the
    # aggregate (min), never the step sum
    streamed = torch.tensor(result["streamed_rm_scores"])
    assert torch.equal(streamed, torch.tensor(result["streamed_v1_rm_scores"]))
    last = [sum(m[PROMPT_LEN:]) - 1 for m in result["attention_mask"]]
    assert [torch.nonzero(r).flatten().tolist() for r in streamed] == [[t] for t in last]
    paid = [streamed[i, t].item() for i, t in enumerate(last)]
    assert paid == pytest.approx(result["reward_extra_info"]["prm_score"], abs=1e-6)
    assert paid[2] == UNFINISHED
    # the pollution the manager avoids: decoding the prompt without its special tokens keeps role words
    tok = served["tokenizer"]
    polluted = tok.decode(result["prompt_ids"][0], skip_special_tokens=True)
    assert polluted.startswith("system\nYou are a careful math tutor.\nuser\n")
    process = ProcessReward(served["url"])
    response = tok.decode(result["response_ids"][0], skip_special_tokens=True)
    clean_scores = process.score([expected_problem(SAMPLES[0])], [response])[0].rewards
    assert process.score([polluted], [response])[0].rewards != clean_scores


def test_reward_loop_by_import_path_on_ray(served) -> None:
    """``source=importlib`` + ``module.path``: ``RewardLoopManager.compute_rm_score`` (what verl's trainer
    calls on its colocated reward path) runs it in a Ray worker actor and assembles the step rewards;
    verl's advantage computation then reads them with the registered estimator."""
    one_group = [{**sample, "uid": "g"} for sample in SAMPLES]
    result = run_verl(served, [*BY_PATH, MIN], samples=one_group, ray=True, estimators=("prmkit_min",))
    check(served, result)
    got = torch.tensor(result["advantages"]["prmkit_min"]["colocated"])
    torch.testing.assert_close(got, expected_advantages(served, result, ["g"] * 3, "min", UNFINISHED))


def test_custom_reward_function_scalar(served, shared_runs) -> None:
    """``reward.custom_reward_function`` = the client's async ``compute_score``, run by verl's naive
    manager: the aggregate at the last token; no ``extra_info.question`` means an empty problem, flagged."""
    result = shared_result(shared_runs, "custom_scalar")
    assert result["manager"].endswith("NaiveRewardManager")
    extra = result["reward_extra_info"]
    assert extra["prm_empty_problem"] == [1.0, 0.0, 0.0]  # MATH row: verl gives the function no prompt
    assert extra["prm_overlong"] == extra["prm_refused"] == [0.0, 0.0, 0.0]
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


def expected_advantages(
    served, result: dict, uids: list[str], credit: str, unfinished: float
) -> torch.Tensor:
    """prmkit's own ``process_advantages`` for the tokens verl built: the same server's step rewards at
    the same token ends, each uid group passed whole."""
    samples = served.get("samples", SAMPLES)
    rewards, ends, lengths = served_steps(served, samples, result, unfinished)
    out = torch.zeros(len(samples), RESPONSE_LEN)
    for uid in dict.fromkeys(uids):
        rows = [i for i, u in enumerate(uids) if u == uid]
        values = process_advantages(
            [rewards[i] for i in rows],
            [ends[i] for i in rows],
            [lengths[i] for i in rows],
            group_size=len(rows),
            credit=credit,
        )
        for i, v in zip(rows, values, strict=True):
            out[i, : len(v)] = torch.tensor(v)
    return out


MIA = (
    "Mia has 3 stickers. She gets 7 more stickers. She gives away 8 stickers. "
    "How many stickers does Mia have now?"
)
ANN = (
    "Ann has 9 marbles. She gets 7 more marbles. She gives away 10 marbles. Ben has 4 marbles. She splits "
    "the marbles into 2 equal groups and keeps one. She gets 10 times as many marbles. How many marbles "
    "does Ann have now?"
)
SHORT = (
    "She gets 7 more, so 3 + 7 = 10 stickers.\nShe gives away 8, so 10 - 8 = 2 stickers.\nThe answer is 2."
)
REPEAT = "So far she has 3 stickers.\n" * 4
WORLD = [  # (uid, problem, response): arithmetic-oracle pays 1.0 per step up to the first error, 0.0 after
    ("mia", MIA, SHORT),  # correct, 3 steps
    ("mia", MIA, REPEAT + SHORT),  # the same answer padded to 7 correct-looking steps
    ("mia", MIA, REPEAT + "The answer is 5."),  # a wrong answer after 4 correct-looking steps
    ("mia", MIA, SHORT.replace("= 2 stickers", "= 18 stickers").replace("is 2.", "is 18.")),  # wrong early
    ("ann", ANN, "She gets 7 more, so 9 + 7 = 16 marbles.\nShe gives away 10, so 16 - 10 = 4 marbles."),
    (
        "ann",
        ANN,
        "She gets 7 more, so 9 + 7 = 16 marbles.\nShe gives away 10, so 16 - 10 = 6 marbles.\n"
        "She keeps one of 2 groups, so 6 / 2 = 3 marbles.\nShe has 10 times as many, so 3 * 10 = 30 marbles.\n"
        "The answer is 30.",
    ),
]
"""Two problems, groups of 4 and 2 (uneven, as after verl drops samples); 0.0 rewards among them."""


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    """``arithmetic-oracle`` served on loopback (a perfect PRM: wrong steps get exactly 0.0) and a policy
    tokenizer for the world's words."""
    from prmkit.modeling.tokenizer import build_tokenizer

    root = tmp_path_factory.mktemp("verl-world")
    samples = [
        {"messages": [{"role": "user", "content": p}], "response": r, "extra_info": {"index": i}, "uid": u}
        for i, (u, p, r) in enumerate(WORLD)
    ]
    texts = [p for _, p, _ in WORLD] + [r for _, _, r in WORLD]
    tok = build_tokenizer(texts * 4, vocab_size=400, extra_tokens=("<|im_start|>", "<|im_end|>"))
    tok.eos_token = "<|im_end|>"
    tok.chat_template = CHATML
    tok.save_pretrained(root / "policy")
    with run_server(create_app(OracleScorer(), ServerConfig())) as url:
        yield {
            "tokenizer": tok,
            "tokenizer_dir": str(root / "policy"),
            "url": url,
            "root": root,
            "samples": samples,
        }


def last_values(result: dict, key: str) -> list[float]:
    rows = torch.tensor(result[key])
    return [rows[i, sum(m[PROMPT_LEN:]) - 1].item() for i, m in enumerate(result["attention_mask"])]


def test_documented_default_pays_no_padding(shared_runs) -> None:
    """The documented command with verl's ``grpo``: every path pays the ``min``, so the padded answer
    earns what the short one does and the wrong one after repeated correct steps earns 0 (the sum paid
    3.0, 7.0 and 4.0, and gave the wrong answer the larger advantage)."""
    result = shared_result(shared_runs, "documented_default")
    assert result["reward_extra_info"]["prm_num_steps"][:3] == [3.0, 7.0, 5.0]
    for key in ("rm_scores", "streamed_rm_scores", "streamed_v1_rm_scores"):
        assert last_values(result, key) == [1.0, 1.0, 0.0, 0.0, 0.0, 1.0], key
        assert [len(torch.nonzero(r)) for r in torch.tensor(result[key])] == [1, 1, 0, 0, 0, 1]
    for path in ("colocated", "streamed", "streamed_v1"):
        adv = [row[0] for row in result["advantages"]["grpo"][path]]
        assert adv[1] == pytest.approx(adv[0]) and adv[2] < adv[0], (path, adv)


def served_steps(
    served, samples: list[dict], result: dict, unfinished: float = 0.0
) -> tuple[list, list, list]:
    """prmkit's own step rewards, step-end tokens and lengths for the tokens verl built (same server)."""
    tok, process = served["tokenizer"], ProcessReward(served["url"], unfinished_reward=unfinished)
    rewards, ends, lengths = [], [], []
    for sample, row, mask in zip(samples, result["response_ids"], result["attention_mask"], strict=True):
        ids = row[: sum(mask[PROMPT_LEN:])]
        (paid,) = process.score([expected_problem(sample)], [tok.decode(ids, skip_special_tokens=True)])
        rewards.append(paid.rewards), ends.append(step_token_ends(ids, tok, paid.char_ends))
        lengths.append(len(ids))
    return rewards, ends, lengths


WORLD_GROUPS, WORLD_KEYS = [[0, 1, 2, 3], [4, 5]], ["mia", "ann"]


def test_step_rewards_train_through_verls_estimator(oracle, shared_runs) -> None:
    """Step rewards from ``prmkit serve`` (``run_single`` + ``assemble_rm_scores``) become, through verl's
    ``compute_advantage`` and the registered estimators, exactly the credit forms that read step rewards
    alone (``prmkit_min``, ``prmkit_sum``: ``process_advantages``; ``prmkit_pure``, ``prmkit_pav``);
    the zero rewards of wrong steps reach the estimator as -0.0."""
    names = STEP_ESTIMATORS
    result = shared_result(shared_runs, "step_rewards")
    rm = torch.tensor(result["rm_scores"])
    ends = rm.ne(0) | torch.tensor(result["signbits"]["colocated"])
    assert ends.sum(-1).tolist() == [3, 7, 5, 3, 1, 5]  # the unfinished one: one step of 0.0
    assert rm[ends].eq(0).sum().item() == 4  # wrong steps (1 + 2) and the unfinished response, as -0.0
    uids = [s["uid"] for s in oracle["samples"]]
    for name, credit in (("prmkit_min", "min"), ("prmkit_sum", "sum")):
        got = torch.tensor(result["advantages"][name]["colocated"])
        torch.testing.assert_close(got, expected_advantages(oracle, result, uids, credit, 0.0))
    rewards, step_ends, lengths = served_steps(oracle, oracle["samples"], result)
    batch = Rollouts(rewards, step_ends, lengths, WORLD_GROUPS, keys=WORLD_KEYS)
    for name, credit in zip(names, va.STEP_CREDITS, strict=True):
        got = result["advantages"][name]["colocated"]
        for i, row in enumerate(credit_advantages(credit, batch)):
            assert got[i][: len(row)] == pytest.approx(row, abs=1e-5), (name, i)
            assert not any(got[i][len(row) :])
    legacy, summed = (
        torch.tensor(result["advantages"][n]["colocated"])[:, 0] for n in ("prmkit_min", "prmkit_sum")
    )
    assert legacy[1] <= legacy[0] + 1e-6  # min-form: padding with correct steps does not raise it
    assert summed[1] > summed[0]  # sum credit pays the padding
    # the streaming path (v1 trainer's default) keeps one number: each response one step, its min at its
    # last token (a 0.0 kept as -0.0, so it still counts in its group)
    paid = result["reward_extra_info"]["prm_score"]
    for rows in WORLD_GROUPS:
        want = process_advantages(
            [[paid[i]] for i in rows], [[lengths[i] - 1] for i in rows], [lengths[i] for i in rows], len(rows)
        )
        for i, row in zip(rows, want, strict=True):
            got = torch.tensor(result["advantages"]["prmkit_min"]["streamed_v1"][i][: lengths[i]])
            torch.testing.assert_close(got, torch.tensor(row))


GROUND_TRUTH = {"mia": "2", "ann": "30"}


def test_outcomes_reach_verls_estimator(oracle, shared_runs) -> None:
    """Outcome forms (issue 60): ``run_single`` grades each answer against ``reward_model.ground_truth``
    and writes the verdict into the outcome channel; through verl's ``compute_advantage`` every
    ``prmkit_<form>`` that reads outcomes gives ``credit_advantages`` on the same step rewards and
    outcomes. verl's v1 colocated path hands the manager ``raw_prompt`` only: the reference answer then
    comes from the data files, and the channel carries the same verdicts."""
    samples = [{**s, "ground_truth": GROUND_TRUTH[s["uid"]]} for s in oracle["samples"]]
    names = OUTCOME_ESTIMATORS
    result = shared_result(shared_runs, "outcomes")
    outcomes = [1.0, 1.0, 0.0, 0.0, 0.0, 1.0]  # right, right (padded), wrong, wrong, unfinished, right
    for key in ("rm_scores", "v1_colocated_rm_scores", "streamed_rm_scores", "streamed_v1_rm_scores"):
        values = torch.tensor(result[key])
        assert va.read_outcomes(values.tolist(), values.signbit().tolist()) == outcomes, key
    rewards, ends, lengths = served_steps(oracle, samples, result)
    for name, credit in zip(names, va.OUTCOME_CREDITS, strict=True):
        batch = Rollouts(rewards, ends, lengths, WORLD_GROUPS, outcomes, keys=WORLD_KEYS)
        want = credit_advantages(credit, batch)
        got = result["advantages"][name]["colocated"]
        for i, row in enumerate(want):
            assert got[i][: len(row)] == pytest.approx(row, abs=1e-5), (name, i)
            assert not any(got[i][len(row) :])

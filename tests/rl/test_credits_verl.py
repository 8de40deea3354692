"""prmkit's credit forms as verl estimators: verl 0.9.1's own ``compute_advantage`` with each registered
``prmkit_<name>`` (and each old name; run in ``.venv-verl`` by tests/rl/credits_verl_run.py, the rewards written by
prmkit's reward manager's own ``assemble_rm_scores``) gives the library function's token advantages on
the same step rewards and outcomes, groups read from uids (uneven, interleaved).

The outcome forms read each response's outcome from the channel the manager writes into its last
token's reward (:mod:`prmkit.rl.verl_advantages`); here, without verl, the channel's encoding, the
manager's rows (:func:`prmkit.rl.verl_client.dense_row`), its grading (``pay`` with a ground truth,
against a server on loopback) and the reference answers it reads from verl's data files.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import pickle
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

from prmkit.rl import verl_advantages as va
from prmkit.rl import verl_client as vc
from prmkit.rl.credits import Rollouts, credit_advantages, credit_names, verified_groups
from prmkit.serving.reward_server import ServerConfig, create_app
from tests.rl.test_verl_loop import VERL_PYTHON
from tests.serving.conftest import HashScorer, run_server

SCRIPT = Path(__file__).with_name("credits_verl_run.py")
WIDTH = 8
REWARDS = [[0.9, 0.2], [0.7], [0.8, 0.0, 0.95], [0.3, 0.5, 0.1], [1.0, 1.0], [0.0]]
ENDS = [[2, 5], [3], [1, 4, 6], [0, 2, 4], [1, 3], [2]]
LENGTHS = [6, 5, 7, 6, 4, 3]  # rows 1 and 3 end on a token no step ends at (an end-of-sequence token)
OUTCOMES = [1.0, 0.0, 0.0, 1.0, 1.0, None]  # row 5: no reference answer
UIDS = ["a", "h", "a", "a", "h", "a"]  # groups of 4 and 2, interleaved as after verl's balancing
KEYS = ["a", "h"]  # "h" is among anchor's 10 % of prompts with a verifiable reward, "a" is not
GROUPS = [[0, 2, 3, 5], [1, 4]]
CONFIG = {"use_kl_in_reward": False, "norm_adv_by_std_in_grpo": True}


PARAMS = {
    "prmkit_pure": {"temperature": 0.5, "baseline": "step"},
    "prmkit_min": {"temperature": 0.5},
    "prmkit_anchor": {"share": 1.0, "verifiable_coef": 2.0},
    "prmkit_papo": {"process_weight": 0.5},
    "prmkit_prime": {"process_coef": 1.0, "outcome_coef": 3.0},
}
"""Non-default keywords per estimator, passed as verl's ``algorithm.prmkit`` section."""


def library(credit: str, params: dict | None = None) -> list[list[float]]:
    """The credit form on the test's batch: the outcomes only for a form that reads them (``pure`` given
    outcomes adds PURE's verifiable reward, which the step-only estimator does not receive)."""
    outcome = OUTCOMES if credit in va.OUTCOME_CREDITS else None
    rollouts = Rollouts(REWARDS, ENDS, LENGTHS, GROUPS, outcome, keys=KEYS)
    return credit_advantages(credit, rollouts, **(params or {}))


def manager_rows(channel: bool) -> torch.Tensor:
    """``rm_scores`` as the manager's ``assemble_rm_scores`` writes them (without verl's base class)."""
    out = torch.zeros(len(REWARDS), WIDTH)
    for i, (rewards, ends, length, o) in enumerate(zip(REWARDS, ENDS, LENGTHS, OUTCOMES, strict=True)):
        score = vc.DenseScore(min(rewards), list(zip(ends, rewards, strict=True)), (o,) if channel else ())
        for t, r in vc.dense_row(score, length - 1).items():
            out[i, t] = r
    return out


def test_the_estimators_cover_every_credit_form_under_its_name() -> None:
    assert verified_groups(KEYS, 0.1) == [False, True]  # anchor reads the outcomes of one group
    assert tuple(sorted(credit_names(outcome=True))) == va.OUTCOME_CREDITS
    assert tuple(sorted(credit_names(outcome=False))) == va.STEP_CREDITS
    assert {f"prmkit_{name}": name for name in credit_names()} == va.ESTIMATORS  # one to one, same names
    assert va.ESTIMATOR_FNS["prmkit_process_grpo"] is va.ESTIMATOR_FNS["prmkit_sum"]  # old names: aliases
    assert va.ESTIMATOR_FNS["prmkit_credit_pure"] is va.ESTIMATOR_FNS["prmkit_pure"]
    assert va.credit_of("prmkit_pure") == "pure" and va.credit_of("prmkit_min") == "min"
    assert va.credit_of("grpo") is None
    assert va.reads_outcome({"adv_estimator": "prmkit_papo"})
    assert va.reads_outcome({"adv_estimator": "prmkit_credit_papo"})
    assert not va.reads_outcome({"adv_estimator": "prmkit_pure"}) and not va.reads_outcome({})


@pytest.mark.parametrize("value", [0.0, -0.0, 0.7, 1.0, -0.25, 0.123456789, 3e-39])
@pytest.mark.parametrize("outcome", [1.0, 0.0, None])
def test_the_outcome_channel_survives_float32_and_changes_the_reward_by_ulps(value, outcome) -> None:
    written = va.with_outcome(value, outcome)
    assert torch.tensor([written]).tolist() == [written]  # verl's float32 rm_scores keep it bit for bit
    assert va.with_outcome(written, outcome) == written  # idempotent: pickling a DenseScore re-encodes
    back, read = va.read_outcome(written)
    assert read == outcome and math.copysign(1, back) == math.copysign(1, value)
    assert abs(back - value) <= 2e-6 * abs(value) + 1e-37
    assert written != 0.0  # a +0.0 carrying the channel is the row's last token with a bit set


def test_rows_without_the_channel_are_refused_not_read_as_wrong() -> None:
    mask = torch.tensor([[1] * n + [0] * (WIDTH - n) for n in LENGTHS])
    index = np.array(UIDS, dtype=object)
    with pytest.raises(ValueError, match=r"row 0 carries no outcome.*reward_manager\.name=prmkit"):
        va.ESTIMATOR_FNS["prmkit_prof"](manager_rows(False), mask, index=index, config=CONFIG)
    verl_naive = torch.zeros(2, WIDTH)
    verl_naive[0, 3], verl_naive[1, 5] = 1.0, 0.0  # verl's naive manager: accuracy at the last token
    with pytest.raises(ValueError, match="row 0 carries no outcome"):
        va.read_steps(verl_naive, torch.ones(2, WIDTH), outcome=True)
    with pytest.raises(ValueError, match=r"an outcome is 1\.0"):
        va.with_outcome(0.5, 0.5)
    with pytest.raises(ValueError, match="not finite"):
        va.with_outcome(float("nan"), 1.0)


@pytest.mark.parametrize("credit", va.OUTCOME_CREDITS)
def test_estimator_reads_the_managers_outcomes(credit: str) -> None:
    """The manager's rows (steps at their end tokens, the channel at the last token, over a step's reward
    or on a free end-of-sequence token, a zero step as -0.0) read back to the library's advantages."""
    mask = torch.tensor([[1] * n + [0] * (WIDTH - n) for n in LENGTHS])
    fn = va.ESTIMATOR_FNS[f"prmkit_{credit}"]
    adv, ret = fn(manager_rows(True), mask, index=np.array(UIDS, dtype=object), config=CONFIG)
    assert adv is ret
    for i, row in enumerate(library(credit)):
        assert adv[i, : len(row)].tolist() == pytest.approx(row, abs=1e-5), i
        assert not adv[i, len(row) :].any()
    pickled = pickle.loads(pickle.dumps(vc.DenseScore(0.0, [(2, 0.0)], (1.0,))))
    assert pickled.prmkit_outcome == (1.0,) and va.read_outcome(float(pickled)) == (-0.0, 1.0)


@pytest.mark.parametrize("name", PARAMS)
def test_estimators_take_the_forms_keywords_from_algorithm_prmkit(name: str) -> None:
    """``algorithm.prmkit`` (the section verl hands the estimator as ``config``) reaches the form: the
    estimator equals the library function with the same non-default keywords, not its defaults."""
    credit = va.credit_of(name)
    mask = torch.tensor([[1] * n + [0] * (WIDTH - n) for n in LENGTHS])
    config = {**CONFIG, "prmkit": PARAMS[name]}
    adv, _ = va.ESTIMATOR_FNS[name](
        manager_rows(credit in va.OUTCOME_CREDITS), mask, index=np.array(UIDS, dtype=object), config=config
    )
    want, default = library(credit, PARAMS[name]), library(credit)
    assert any(w != pytest.approx(d, abs=1e-3) for w, d in zip(want, default, strict=True))  # a change
    for i, row in enumerate(want):
        assert adv[i, : len(row)].tolist() == pytest.approx(row, abs=1e-5), i
    assert va.credit_params(config) == PARAMS[name]


def test_a_keyword_the_form_does_not_take_is_refused_before_the_first_step() -> None:
    """The manager checks verl's ``algorithm`` section at construction (``dense_placement``), so a
    misspelt keyword, or keywords for an estimator that is not prmkit's, stop a run before its first step;
    the estimator checks again."""
    misspelt = {"adv_estimator": "prmkit_pure", "prmkit": {"temprature": 0.5}}
    with pytest.raises(ValueError, match=r"algorithm\.prmkit of algorithm\.adv_estimator=prmkit_pure: "
                       r"credit 'pure' takes .*not 'temprature'; did you mean 'temperature'"):  # fmt: skip
        va.dense_placement(None, misspelt)
    with pytest.raises(ValueError, match="credit 'pure' takes"):
        va.ESTIMATOR_FNS["prmkit_pure"](
            manager_rows(False), torch.ones(len(REWARDS), WIDTH), index=np.array(UIDS, dtype=object),
            config={**CONFIG, "prmkit": {"share": 1.0}},  # anchor's keyword, not pure's
        )  # fmt: skip
    with pytest.raises(ValueError, match=r"algorithm\.adv_estimator=grpo is not prmkit's and would ignore"):
        va.check_algorithm({"adv_estimator": "grpo", "prmkit": {"temperature": 0.5}})
    with pytest.raises(ValueError, match="holds the credit form's keywords"):
        va.check_algorithm({"adv_estimator": "prmkit_pure", "prmkit": 0.5})
    va.check_algorithm({"adv_estimator": "prmkit_anchor", "prmkit": {"share": 1.0, "baseline": "step"}})
    assert va.credit_params({"adv_estimator": "prmkit_pure"}) == {}


def test_pay_grades_the_answer_against_the_ground_truth() -> None:
    problem = "Tom has 3 apples. He gets 4 more."
    settings = lambda url: vc.settings_from({"url": url})  # noqa: E731

    async def outcome(url: str, response: str, gold: str | None) -> float | None:
        async with vc.httpx.AsyncClient(timeout=30) as client:
            return (await vc.pay(client, settings(url), problem, response, ground_truth=gold)).outcome

    with run_server(create_app(HashScorer(), ServerConfig())) as url:
        assert asyncio.run(outcome(url, "3 + 4 = 7 apples.\nThe answer is 7.", "7")) == 1.0
        assert asyncio.run(outcome(url, "3 + 4 = 8 apples.\nThe answer is 8.", "7")) == 0.0
        assert asyncio.run(outcome(url, "3 + 4 = 7 apples.", "7")) == 0.0  # no final answer: wrong
        assert asyncio.run(outcome(url, "3 + 4 = 7 apples.\nThe answer is 7.", None)) is None


def test_reference_answers_come_from_the_row_or_verls_data_files(tmp_path: Path) -> None:
    """verl's colocated path hands the manager only ``raw_prompt``: the answer is read from the files."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    turn = [{"role": "user", "content": "What is 3 + 4? Think step by step."}]
    path = tmp_path / "train.parquet"
    pd.DataFrame(
        {"prompt": [turn], "extra_info": [{"question": "What is 3 + 4?"}],
         "reward_model": [{"style": "rule", "ground_truth": "7"}]}
    ).to_parquet(path)  # fmt: skip

    manager = SimpleNamespace(
        config={"data": {"train_files": [str(path)], "prompt_key": "prompt"}}, questions=None
    )
    assert vc.row_answer({"reward_model": {"ground_truth": " 12 "}}, manager) == "12"
    assert manager.questions is None  # the row's own field: no file read
    assert vc.row_answer({"raw_prompt": turn}, manager) == "7"
    assert vc.row_info({"raw_prompt": turn}, manager) == {"question": "What is 3 + 4?"}
    assert vc.row_answer({"raw_prompt": [{"role": "user", "content": "unknown"}]}, manager) is None


def run_in_verl(tmp_path: Path, **request: Any) -> dict[str, Any]:
    """The batch above through verl's own ``compute_advantage`` in the verl environment (SCRIPT), with
    ``request``'s estimators (and ``params``): what the script wrote."""
    out = tmp_path / "out.json"
    batch = {"rewards": REWARDS, "ends": ENDS, "lengths": LENGTHS, "outcomes": OUTCOMES, "uids": UIDS,
             "width": WIDTH, "out": str(out), **request}  # fmt: skip
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PRMKIT_"))}
    proc = subprocess.run(
        [str(VERL_PYTHON), str(SCRIPT)], input=json.dumps(batch), capture_output=True, text=True,
        timeout=300, env=clean, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(out.read_text())


@pytest.mark.slow
@pytest.mark.skipif(not VERL_PYTHON.exists(), reason="no verl environment: `make verl-env`")
def test_verl_estimators_equal_the_library(tmp_path: Path) -> None:
    got = run_in_verl(tmp_path, estimators=list(va.ESTIMATOR_FNS))
    assert set(got["advantages"]) == set(va.ESTIMATORS) | set(va.OLD_NAMES)
    for name in va.ESTIMATOR_FNS:
        for i, row in enumerate(library(va.credit_of(name))):
            assert got["advantages"][name][i][: len(row)] == pytest.approx(row, abs=1e-5), (name, i)
            assert got["advantages"][name][i][len(row) :] == [0.0] * (WIDTH - len(row))
    # dense: false (or verl's streaming path): one step, the aggregate, at the last token, and the outcome
    aggregate = [[min(r)] for r in REWARDS]
    last = [[n - 1] for n in LENGTHS]
    for credit in va.OUTCOME_CREDITS:
        want = credit_advantages(credit, Rollouts(aggregate, last, LENGTHS, GROUPS, OUTCOMES, keys=KEYS))
        for i, row in enumerate(want):
            assert got["aggregate"][credit][i][: len(row)] == pytest.approx(row, abs=1e-5), (credit, i)
    assert got["refused"] == {
        name: True for name in va.ESTIMATOR_FNS if va.credit_of(name) in va.OUTCOME_CREDITS
    }


@pytest.mark.slow
@pytest.mark.skipif(not VERL_PYTHON.exists(), reason="no verl environment: `make verl-env`")
def test_verl_estimators_take_non_default_keywords(tmp_path: Path) -> None:
    """``+algorithm.prmkit.KEY=VALUE`` overrides, composed by hydra into verl's ``algorithm`` section as
    ``main_ppo`` composes it, reach each estimator through verl's own ``compute_advantage``: the library
    function with the same keywords."""
    got = run_in_verl(tmp_path, estimators=list(PARAMS), params=PARAMS)["advantages"]
    for name, params in PARAMS.items():
        for i, row in enumerate(library(va.credit_of(name), params)):
            assert got[name][i][: len(row)] == pytest.approx(row, abs=1e-5), (name, i)
            assert got[name][i][len(row) :] == [0.0] * (WIDTH - len(row))

"""Every credit form through ``prmkit rl``'s config: ``RlConfig.credit`` takes each registered form by
name (an unknown one answers "Did you mean"), each form's parameters are typed fields that reach its
function (on inputs computed by hand), a setting no form of the run reads is refused, the monitors are
told what each form pays, and ``train_policy`` hands the form and its parameters to DenseGRPOTrainer."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from prmkit.rl.advantages import min_form
from prmkit.rl.config import CREDIT_FIELDS, CREDIT_PARAMS, RlConfig
from prmkit.rl.credits import (
    CREDITS,
    Rollouts,
    anchor,
    check_params,
    credit_advantages,
    credit_names,
    pure,
    verified_groups,
)
from prmkit.rl.paid import PaidForm
from prmkit.rl.train import paid_form
from tests.rl.test_train import _config, tiny_lm  # noqa: F401  (the module-scoped π0 fixture)
from tests.rl.test_train import pytestmark as train_marks

pytestmark = train_marks  # TRL's and transformers' deprecation warnings, as test_train.py filters them


def config(**fields: Any) -> RlConfig:
    return RlConfig(**{"policy": "pi0", "reward": "dense", "prm": "arithmetic-oracle", **fields})


@pytest.mark.parametrize("name", credit_names())
def test_every_registered_form_is_a_credit_of_prmkit_rl(name: str) -> None:
    params = config(credit=name).credit_params()
    assert set(params) == set(CREDIT_PARAMS.get(name, {}).values())
    check_params(name, params)  # each keyword is one the form's function takes
    signature = {**inspect.signature(pure).parameters, **inspect.signature(CREDITS.get(name).fn).parameters}
    if CREDITS.get(name).fn is anchor:
        signature = {
            **inspect.signature(pure).parameters,
            "share": inspect.signature(anchor).parameters["share"],
        }
    for keyword, value in params.items():  # the config's defaults are the function's: nothing changes
        assert signature[keyword].default == value, (name, keyword)


def test_an_unknown_credit_answers_did_you_mean() -> None:
    with pytest.raises(ValidationError, match=r"unknown credit form 'papa'\. Did you mean 'papo'"):
        config(credit="papa")


def test_the_parameters_reach_the_form_on_hand_computed_inputs() -> None:
    # pav, alpha 0.5: V(s0) = mean first value 0.7; A = [0.8, 0.2] paid [0.8 + 0.5 * 0.1, 0.2 - 0.5 * 0.6]
    # = [0.85, -0.1], B = [0.6] paid [0.6 - 0.5 * 0.1] = [0.55]; normalised over the group (mean 0.4333,
    # std 0.4856): [0.8581, -1.0982], [0.2402]; sum credit: A's first step -0.2402, its second -1.0982
    batch = Rollouts([[0.8, 0.2], [0.6]], [[1, 3], [1]], [4, 2], [[0, 1]])
    got = credit_advantages("pav", batch, **config(credit="pav", progress_alpha=0.5).credit_params())
    assert got == [
        pytest.approx([-0.2402, -0.2402, -1.0982, -1.0982], abs=1e-3),
        pytest.approx([0.2402] * 2, abs=1e-3),
    ]
    # prof keeping all 4 of a group: nothing filtered, outcome GRPO (1 - 0.5) / sqrt(1/3) = +-0.866; by
    # default half are kept, one of each side, and the removed get 0
    one = Rollouts([[0.5]] * 4, [[0]] * 4, [1] * 4, [[0, 1, 2, 3]], outcome=[1.0, 0.0, 1.0, 0.0])
    kept = credit_advantages("prof", one, **config(credit="prof", group_size=4, prof_keep=4).credit_params())
    assert kept == [pytest.approx([v], abs=1e-3) for v in (0.866, -0.866, 0.866, -0.866)]
    half = credit_advantages("prof", one, **config(credit="prof", group_size=4).credit_params())
    assert sorted(abs(row[0]) > 0 for row in half) == [False, False, True, True]


def test_a_setting_the_run_does_not_read_is_refused() -> None:
    with pytest.raises(
        ValidationError, match="anchor_share is a parameter of credit anchor; this run's credit is 'sum'"
    ):
        config(credit="sum", anchor_share=0.2)
    with pytest.raises(
        ValidationError, match="credit_temperature is a parameter of credit min / pure / anchor"
    ):
        config(credit="papo", credit_temperature=0.5)
    with pytest.raises(ValidationError, match="'progress' already pays each step"):
        config(reward="progress", credit="pav")
    with pytest.raises(ValidationError, match="credit 'papo' mixes in the outcome itself"):
        config(reward="mixed", credit="papo")
    with pytest.raises(ValidationError, match=r"prof_keep 9: at most group_size \(8\)"):
        config(credit="prof", prof_keep=9)
    assert config(credit="anchor", anchor_share=1.0, pure_baseline="step").credit_params() == {
        "temperature": 0.1, "baseline": "step", "share": 1.0, "verifiable_coef": 1.0,
    }  # fmt: skip


def test_recipes_keep_their_stage_keys() -> None:
    """The parameters are new fields: left out of a dump at their default, so a recipe that does not set
    them keeps every RL stage key (and its cached stages)."""
    dumped = config(credit="pure").model_dump(mode="json")
    assert dumped["credit"] == "pure" and not set(CREDIT_FIELDS) & set(dumped)
    assert config(credit="pure", pure_baseline="step").model_dump(mode="json")["pure_baseline"] == "step"


def test_the_monitors_are_told_what_each_form_pays() -> None:
    assert paid_form(config(credit="min")) == PaidForm("dense", "min", "min", 0.1, 1.0)
    assert paid_form(config(credit="pav", progress_alpha=0.5)) == PaidForm(
        "progress", "min", "sum", 0.1, 1.0, progress_alpha=0.5
    )
    assert (
        paid_form(config(credit="prof")).reward == paid_form(config(credit="first_error")).reward == "outcome"
    )
    assert paid_form(config(credit="pure")) == PaidForm("dense", "min", "pure", 0.1, 1.0)
    assert paid_form(config(credit="papo", papo_weight=0.5)).credit_params == {"process_weight": 0.5}
    # pure pays sum softmax(-r/T) r over r = 2s - 1: scores 0.9, 0.2 give r = 0.8, -0.6, nearly all weight
    # on -0.6 at T = 0.1 (1 / (1 + e^14) on 0.8); the monitors watch it on the PRM's scale, (pay + 1) / 2
    scores, signed = [0.9, 0.2], [0.8, -0.6]
    pay = sum(min_form(signed, 0.1))
    assert pay == pytest.approx(-0.6, abs=1e-5)
    assert paid_form(config(credit="pure")).of(0.0, scores, 0.0) == pytest.approx((pay + 1) / 2, abs=1e-12)


def test_train_policy_hands_the_form_and_its_parameters_to_the_trainer(
    tiny_lm: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from prmkit.rl.train import train_policy
    from prmkit.rl.trl import DenseGRPOTrainer

    seen: list[dict[str, Any]] = []
    init = DenseGRPOTrainer.__init__

    def spy(self, *args: Any, **kwargs: Any) -> None:
        seen.append({k: kwargs[k] for k in ("credit", "credit_params", "process_weight")})
        init(self, *args, **kwargs)

    monkeypatch.setattr(DenseGRPOTrainer, "__init__", spy)
    run = _config(tiny_lm, reward="dense", credit="first_error", first_error_threshold=0.9, steps=1)
    summary = train_policy(run, tmp_path)
    assert seen == [
        {
            "credit": "first_error",
            "credit_params": {"threshold": 0.9, "prefix_advantage": 0.0},
            "process_weight": 1.0,
        }
    ]
    assert summary["steps"] == 1
    card = json.loads((tmp_path / "policy_card.json").read_text())
    assert card["reward"]["credit"] == "first_error" and card["config"]["first_error_threshold"] == 0.9


def test_the_monitors_state_what_anchor_papo_and_prime_pay() -> None:
    """On hand-computed inputs: scores 0.9, 0.2 give PURE's signed pay -0.6 (nearly all weight on the
    worst step, above), 0.2 on the PRM's scale; scores 0.9, 0.5 have mean 0.7 and sum 1.4."""
    worst, key = [0.9, 0.2], "any prompt"
    every = paid_form(config(credit="anchor", anchor_share=1.0, anchor_coef=2.0))
    assert every.of(1.0, worst, 0.0, key=key) == pytest.approx(0.2, abs=1e-5)  # right: PURE's pay alone
    assert every.of(0.0, worst, 0.0, key=key) == pytest.approx(
        0.2 - 2.0 / 2, abs=1e-5
    )  # wrong: coef (0 - 1) / 2
    assert every.of(1.0, None, 0.0, key=key) == pytest.approx(0.0 - 2.0 / 2)  # unfinished: a step of 0, wrong
    none = paid_form(config(credit="anchor", anchor_share=0.0))
    assert none.of(0.0, worst, 0.0, key=key) == pytest.approx(0.2, abs=1e-5)  # no verifiable reward
    with pytest.raises(ValueError, match="pass key"):
        none.of(0.0, worst, 0.0)
    # at the default 10 %, the prompt's hash decides, as in training (credits.verified_groups)
    keys = [f"prompt {i}" for i in range(40)]
    chosen = verified_groups(keys, 0.1)
    assert 0 < sum(chosen) < len(keys)
    anchor_pay = paid_form(config(credit="anchor"))
    for k, verified in zip(keys, chosen, strict=True):
        want = 0.2 - 0.5 if verified else 0.2
        assert anchor_pay.of(0.0, worst, 0.0, key=k) == pytest.approx(want, abs=1e-5), k
    papo_pay = paid_form(config(credit="papo", papo_weight=0.5))
    assert papo_pay.of(1.0, [0.9, 0.5], 0.0) == pytest.approx(1.0 + 0.5 * 0.7)
    assert papo_pay.of(0.0, [0.9, 0.5], 0.0) == 0.0  # a wrong answer: the outcome alone
    assert paid_form(config(credit="papo")).of(1.0, [0.9, 0.5], 0.0) == pytest.approx(1.7)  # weight 1
    prime_pay = paid_form(config(credit="prime"))  # 5 * process sum + 5 * outcome
    assert prime_pay.of(1.0, [0.9, 0.5], 0.0) == pytest.approx(5 * 1.4 + 5)
    assert prime_pay.of(0.0, [0.9, 0.5], 0.0) == pytest.approx(5 * 1.4)
    assert prime_pay.of(1.0, None, -0.5) == pytest.approx(5 * -0.5)  # unfinished: one step of -0.5, wrong
    weighted = paid_form(config(credit="prime", prime_process_coef=2.0, prime_outcome_coef=1.0))
    assert weighted.of(1.0, [0.9, 0.5], 0.0) == pytest.approx(2 * 1.4 + 1)


def test_the_monitors_hash_the_prompt_training_hashes_for_anchor() -> None:
    """A monitor point under ``anchor`` pays the verifiable reward on the held-out prompts whose text (the
    prompt TRL is handed: ``StepFormat().prompt(problem, [])``) falls in the share: per problem, the pay
    is ``pure``'s, less 0.5 exactly for the chosen prompts' wrong answers."""
    from prmkit.core.answers import check_answer
    from prmkit.core.steps import StepFormat, parse_completion
    from prmkit.rl.monitors import PER_PROBLEM, Monitor
    from prmkit.worlds.arithmetic import generate_problems, sample_traces
    from tests.rl.test_monitors import ArithmeticPRM

    traces = sample_traces(generate_problems(60, seed=11, split="test"), 1, seed=3)
    samples = [(t.problem, "\n".join(s.text for s in t.steps)) for t in traces]

    def paid(form: PaidForm) -> dict[str, float]:
        monitor = Monitor([], samples=1, temperature=1.0, max_new_tokens=1, prm=ArithmeticPRM(), paid=form)
        table = monitor.measure_samples(samples, 0)[PER_PROBLEM]
        column = table["columns"].index("paid_reward")
        return {pid: row[column] for pid, row in table["problems"].items()}

    anchored, pure_pay = paid(paid_form(config(credit="anchor", anchor_share=0.5))), paid(paid_form(config()))
    chosen = verified_groups([StepFormat().prompt(p, []) for p, _ in samples], 0.5)
    wrong = [
        not (c.finished and check_answer(p.answer, c.answer))
        for p, c in ((p, parse_completion(text)) for p, text in samples)
    ]
    assert sum(c and w for c, w in zip(chosen, wrong, strict=True)) > 0 and sum(chosen) < len(chosen)
    for (p, _), c, w in zip(samples, chosen, wrong, strict=True):
        assert anchored[p.id] == pytest.approx(pure_pay[p.id] - 0.5 * (c and w), abs=2e-4), p.id

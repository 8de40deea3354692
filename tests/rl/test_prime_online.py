"""PRIME in ``prmkit rl``: a ``credit: prime`` run on a tiny world LM trains an implicit PRM online (its
weights move, its reference's do not), pays the ``prime`` credit form's advantages over that PRM's token
rewards and the answer check, logs the PRM's loss and accuracy per step and saves it as an HF folder; a
killed run resumes with the PRM of its checkpoint; the update pulls the PRM's sequence reward toward the
outcome labels of world samples; the settings it cannot run are refused before any model loads."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest

from prmkit.rl.credits import Rollouts, prime
from tests.rl.test_train import _config, tiny_lm  # noqa: F401  (the module-scoped π0 fixture)
from tests.rl.test_train import pytestmark as train_marks

pytestmark = train_marks  # TRL's and transformers' deprecation warnings, as test_train.py filters them


def _prime_config(policy: Path, **overrides: Any):
    # the world's 1 x 32 LM: a PRM rate near the policy's (config.py, prime_lr), so it moves in 2 steps
    return _config(
        policy, **{"reward": "dense", "prm": None, "credit": "prime", "prime_lr": 1e-3, **overrides}
    )


def _weights(model: Any) -> dict[str, Any]:
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


KEYS = ("prompt_ids", "prompt_mask", "completion_ids", "completion_mask", "advantages")


def _prompt(batch: dict[str, Any], i: int) -> tuple[int, ...]:
    return tuple(batch["prompt_ids"][i][batch["prompt_mask"][i].bool()].tolist())


def _spy(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Record, per generation round, the PRM's weights before it scored, each prompt's answer, the
    trainer, and the batch as it reached TRL's loss (TRL shuffles a generation round before it)."""
    from prmkit.rl.trl import PrimeGRPOTrainer

    seen: dict[str, list[Any]] = {"before": [], "answers": [], "trainer": [], "loss_inputs": []}
    dense, loss = PrimeGRPOTrainer.dense_advantages, PrimeGRPOTrainer._compute_loss

    def dense_spy(self, inputs, output):
        seen["before"].append(_weights(self.implicit_prm.policy))
        seen["answers"].append({_prompt(output, i): x.get("answer") for i, x in enumerate(inputs)})
        seen["trainer"].append(self)
        return dense(self, inputs, output)

    def loss_spy(self, model, inputs):
        seen["loss_inputs"].append({k: inputs[k].detach().cpu().clone() for k in KEYS})
        return loss(self, model, inputs)

    monkeypatch.setattr(PrimeGRPOTrainer, "dense_advantages", dense_spy)
    monkeypatch.setattr(PrimeGRPOTrainer, "_compute_loss", loss_spy)
    return seen


def _expected(prm: Any, reference: Any, batch: dict[str, Any], outcome: list[float]) -> Any:
    """The advantages recomputed outside the trainer: ``prm`` (the PRM as it scored) read against
    ``reference`` at beta 0.05 (``prime_beta``'s default), every completion token a step, and the ``prime``
    form at its defaults (coefficients 5), a group the completions of one prompt."""
    import torch

    from prmkit.modeling.released import ImplicitPair
    from prmkit.rl.prime import implicit_token_rewards, step_rewards

    pair = ImplicitPair(prm.eval(), reference.eval(), beta=0.05)
    ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
    attention = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
    response = torch.cat([torch.zeros_like(batch["prompt_mask"]), batch["completion_mask"]], dim=1)
    with torch.no_grad():
        rewards, ends = step_rewards(implicit_token_rewards(pair, ids, attention, response), response, 0.05)
    groups: dict[tuple[int, ...], list[int]] = {}
    for i in range(len(rewards)):
        groups.setdefault(_prompt(batch, i), []).append(i)
    rows = prime(Rollouts(rewards, ends, [len(e) for e in ends], list(groups.values()), outcome=outcome))
    out = torch.zeros(batch["completion_ids"].shape)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row)
    return out


def _texts(batch: dict[str, Any], tokenizer: Any) -> list[str]:
    ids = [
        row[m.bool()].tolist()
        for row, m in zip(batch["completion_ids"], batch["completion_mask"], strict=True)
    ]
    return tokenizer.batch_decode(ids, skip_special_tokens=True)


def test_a_prime_run_trains_its_implicit_prm_and_pays_the_prime_form(
    tiny_lm: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prmkit.core.answers import check_answer
    from prmkit.core.steps import parse_completion
    from prmkit.rl.train import train_policy

    seen = _spy(monkeypatch)
    summary = train_policy(_prime_config(tiny_lm), tmp_path)
    assert summary["steps"] == 2 and len(seen["before"]) == len(seen["loss_inputs"]) == 2
    pi0 = _weights(AutoModelForCausalLM.from_pretrained(tiny_lm))
    # the PRM starts as π0 and moves at every update; its reference stays π0
    assert all(torch.equal(seen["before"][0][k], v) for k, v in pi0.items())
    assert any(not torch.equal(seen["before"][1][k], v) for k, v in pi0.items())
    trainer = seen["trainer"][-1]
    assert all(torch.equal(v.cpu(), pi0[k]) for k, v in trainer.implicit_prm.reference.state_dict().items())
    # saved after step 2's update, as an ordinary HF folder: no pickle
    saved = _weights(AutoModelForCausalLM.from_pretrained(tmp_path / "implicit_prm"))
    assert any(not torch.equal(v, seen["before"][1][k]) for k, v in saved.items())
    suffixes = {p.suffix for p in (tmp_path / "implicit_prm").iterdir()}
    assert "config.json" in {p.name for p in (tmp_path / "implicit_prm").iterdir()}
    assert ".safetensors" in suffixes and not suffixes & {".bin", ".pt", ".pkl"}
    # the advantages that reached TRL's loss: the prime form over the PRM as it scored, the answer checked
    tokenizer = AutoTokenizer.from_pretrained(tiny_lm)
    for weights, answers, batch in zip(seen["before"], seen["answers"], seen["loss_inputs"], strict=True):
        prm, reference = (AutoModelForCausalLM.from_pretrained(tiny_lm) for _ in range(2))
        prm.load_state_dict(weights)
        parsed = [parse_completion(t) for t in _texts(batch, tokenizer)]
        golds = [answers[_prompt(batch, i)] for i in range(len(parsed))]
        outcome = [
            float(bool(c.finished and check_answer(a, c.answer))) for c, a in zip(parsed, golds, strict=True)
        ]
        want = _expected(prm, reference, batch, outcome)
        assert torch.allclose(batch["advantages"] * batch["completion_mask"], want, atol=1e-4)
    assert want.abs().sum() > 0  # round 2: the PRM, moved once, pays (round 1's is π0: every reward 0)
    # the PRM's loss and accuracy on the outcome labels, logged per step
    log = [json.loads(line) for line in (tmp_path / "train_log.jsonl").read_text().splitlines()]
    steps = [h for h in log if "prime/loss" in h]
    assert [h["step"] for h in steps] == [1, 2]
    assert steps[0]["prime/loss"] == pytest.approx(math.log(2), abs=1e-5)  # the PRM is its reference: 0.5
    assert steps[0]["prime/accuracy"] == 0.5  # every score exactly 0.5: a coin's guess on each sample
    assert all(0.0 <= h["prime/accuracy"] <= 1.0 and math.isfinite(h["prime/loss"]) for h in steps)
    card = json.loads((tmp_path / "policy_card.json").read_text())
    assert card["reward"]["credit"] == "prime" and card["config"]["prime_lr"] == 1e-3
    assert card["reward"]["prm"].startswith(f"implicit PRM (PRIME), initialised from π0 ({tiny_lm})")


def test_the_trainer_pays_the_prime_form_on_outcomes_that_vary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PrimeGRPOTrainer alone, on test_trl.py's tiny model and an outcome that varies inside a group (the
    world's 30-step LM never reaches an answer): each round's advantages are the ``prime`` form over the
    PRM as it scored and that outcome, and the PRM learns from it."""
    import copy

    import torch

    from prmkit.modeling.released import ImplicitPair
    from prmkit.rl.trl import PrimeGRPOTrainer
    from tests.rl.test_credits_trl import parity_outcome
    from tests.rl.test_trl import _setup

    policy, tokenizer, dataset, args = _setup(tmp_path, max_steps=2, save_strategy="no")
    reference = copy.deepcopy(policy).eval()
    pair = ImplicitPair(copy.deepcopy(policy), copy.deepcopy(policy), beta=0.05)
    seen = _spy(monkeypatch)
    trainer = PrimeGRPOTrainer(
        model=policy, reward_funcs=[parity_outcome], args=args, train_dataset=dataset,
        processing_class=tokenizer, implicit_prm=pair, prm_lr=1e-2,
    )  # fmt: skip
    trainer.train()
    assert len(seen["before"]) == len(seen["loss_inputs"]) == 2
    outcomes = []
    for weights, batch in zip(seen["before"], seen["loss_inputs"], strict=True):
        prm = copy.deepcopy(reference)
        prm.load_state_dict(weights)
        outcome = parity_outcome(_texts(batch, tokenizer))
        want = _expected(prm, copy.deepcopy(reference), batch, outcome)
        assert torch.allclose(batch["advantages"] * batch["completion_mask"], want, atol=1e-4)
        assert want.abs().sum() > 0
        outcomes += outcome
    assert 0 < sum(outcomes) < len(outcomes)  # right and wrong among them
    log = [h for h in trainer.state.log_history if "prime/loss" in h]
    assert [h["step"] for h in log] == [1, 2] and log[0]["prime/loss"] == pytest.approx(math.log(2), abs=1e-5)


def test_a_killed_prime_run_resumes_with_the_prm_of_its_checkpoint(
    tiny_lm: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch

    from prmkit.rl import monitors
    from prmkit.rl.train import train_policy

    original = monitors.MonitorCallback.record

    def killed(self, model, tokenizer, step):
        if step == 2:
            raise RuntimeError("killed")
        return original(self, model, tokenizer, step)

    config = _prime_config(tiny_lm, steps=2)
    monkeypatch.setattr(monitors.MonitorCallback, "record", killed)
    with pytest.raises(RuntimeError, match="killed"):
        train_policy(config, tmp_path)
    checkpoint = tmp_path / "trainer" / "checkpoint-1" / "implicit_prm"
    assert (checkpoint / "model.safetensors").is_file() and (checkpoint / "optimizer.pt").is_file()
    from transformers import AutoModelForCausalLM

    after_one = _weights(AutoModelForCausalLM.from_pretrained(checkpoint))
    monkeypatch.setattr(monitors.MonitorCallback, "record", original)
    seen = _spy(monkeypatch)
    assert train_policy(config, tmp_path)["steps"] == 2
    (before,) = seen["before"]  # step 2 only, scored by the PRM step 1 left
    assert all(torch.equal(before[k], v) for k, v in after_one.items())
    state = seen["trainer"][0].prm_optimizer.state
    assert all(int(s["step"]) == 2 for s in state.values())  # AdamW's state went on from the checkpoint's


def test_the_update_pulls_the_sequence_reward_toward_the_outcome_labels(tiny_lm: Path) -> None:  # noqa: F811
    """World samples of one problem set, right and wrong, as prompt + completion tokens; a few updates at
    the trainer's optimiser settings lower the loss and raise the right samples' sequence reward above the
    wrong ones'."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prmkit.core.answers import check_answer
    from prmkit.core.steps import StepFormat
    from prmkit.modeling.released import ImplicitPair
    from prmkit.rl.prime import implicit_token_rewards, update_implicit_prm
    from prmkit.rl.trl import PRIME_GRAD_CLIP
    from prmkit.worlds.arithmetic import generate_problems, sample_traces

    traces = sample_traces(generate_problems(12, seed=7), 2, seed=1)
    verdicts = [check_answer(t.problem.answer, t.final_answer) for t in traces]
    right = [t for t, ok in zip(traces, verdicts, strict=True) if ok][:3]
    wrong = [t for t, ok in zip(traces, verdicts, strict=True) if ok is False][:3]
    assert len(right) == len(wrong) == 3
    tokenizer, fmt = AutoTokenizer.from_pretrained(tiny_lm), StepFormat()
    rows = []
    for t in right + wrong:
        prompt = tokenizer(fmt.prompt(t.problem, []))["input_ids"]
        completion = tokenizer("\n".join(s.text for s in t.steps), add_special_tokens=False)["input_ids"]
        rows.append((prompt, completion))
    width = max(len(p) + len(c) for p, c in rows)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    attention, response = torch.zeros_like(ids), torch.zeros_like(ids)
    for i, (p, c) in enumerate(rows):
        ids[i, : len(p) + len(c)] = torch.tensor(p + c)
        attention[i, : len(p) + len(c)] = 1
        response[i, len(p) : len(p) + len(c)] = 1
    labels = torch.tensor([1.0] * 3 + [0.0] * 3)
    torch.manual_seed(0)
    pair = ImplicitPair(
        AutoModelForCausalLM.from_pretrained(tiny_lm),
        AutoModelForCausalLM.from_pretrained(tiny_lm).eval(),
        0.05,
    )
    optimizer = torch.optim.AdamW(pair.policy.parameters(), lr=1e-3)
    losses = [
        update_implicit_prm(pair, optimizer, ids, attention, response, labels, PRIME_GRAD_CLIP)
        for _ in range(5)
    ]
    assert losses[0] == pytest.approx(math.log(2), abs=1e-5)
    assert all(b < a for a, b in itertools.pairwise(losses))
    pair.policy.eval()
    with torch.no_grad():
        sequence = implicit_token_rewards(pair, ids, attention, response).sum(dim=1)
    assert sequence[:3].min() > sequence[3:].max()


def test_what_prime_cannot_run_is_refused_before_any_model_loads(
    tiny_lm: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    from pydantic import ValidationError

    from prmkit.core.errors import InputError
    from prmkit.rl.train import train_policy

    with pytest.raises(InputError) as refused:
        train_policy(_prime_config(tiny_lm, reward="progress", prm="arithmetic-oracle"), tmp_path / "a")
    message = str(refused.value)
    assert "rl config: reward: expected dense" in message and "found 'progress'" in message
    assert "arithmetic-oracle: prm: expected a causal-LM folder" in message and "a scorer" in message
    prm_folder = tmp_path / "prm"  # a token-classification PRM is not an implicit PRM
    prm_folder.mkdir()
    (prm_folder / "config.json").write_text(
        json.dumps({"model_type": "llama", "architectures": ["LlamaForTokenClassification"]})
    )
    with pytest.raises(InputError, match="LlamaForTokenClassification, not a causal LM"):
        train_policy(_prime_config(tiny_lm, prm=str(prm_folder)), tmp_path / "b")
    with pytest.raises(InputError, match="rl config: prm_convention: expected none"):
        train_policy(_prime_config(tiny_lm, prm=str(tiny_lm), prm_convention="likelihood"), tmp_path / "c")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    with pytest.raises(ValidationError, match="prime_lr is a setting of credit prime's implicit PRM"):
        _config(tiny_lm, reward="dense", credit="pure", prime_lr=1e-3)
    with pytest.raises(ValidationError, match="needs a PRM"):  # only prime brings its own
        _config(tiny_lm, reward="dense", prm=None, credit="pure")

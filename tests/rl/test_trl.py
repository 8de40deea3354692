"""DenseGRPOTrainer: real TRL GRPO steps on a tiny model, the (batch, tokens) advantages reaching
``_compute_loss`` checked against prmkit's advantage functions, and a crashed run resumed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prmkit.rl.advantages import mixed_advantages, outcome_advantages, process_advantages
from prmkit.rl.emitters import step_token_ends
from prmkit.rl.rewards import ProcessReward
from prmkit.rl.steps import parse_completion
from prmkit.serving.steps import StepSplit, make_trace, problem_text
from tests.serving.conftest import HashScorer

pytestmark = [
    # TRL 1.16 itself sets/reads transformers 5.23's deprecated gradient-checkpointing names
    pytest.mark.filterwarnings(r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning"),
]

GROUP = 4


def length_reward(completions: list[str], **kwargs: Any) -> list[float]:
    """The outcome part of the mix: any reward that varies inside a group will do."""
    return [len(c) / 10 for c in completions]


def _setup(tmp_path: Path, **config: Any):
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import GRPOConfig

    from prmkit.modeling.backbone import TinyConfig, tiny_config
    from prmkit.modeling.tokenizer import build_tokenizer
    from prmkit.world import generate_problems

    problems = generate_problems(6, seed=2)
    tokenizer = build_tokenizer([p.text for p in problems] + ["3 + 4 = 7 apples.", "The answer is 7."], 300)
    torch.manual_seed(0)
    policy = AutoModelForCausalLM.from_config(
        tiny_config(tokenizer, TinyConfig(layers=1, width=32, heads=2, positions="rope"))
    )
    newline = tokenizer.encode("\n", add_special_tokens=False)[-1]
    dataset = Dataset.from_dict({"prompt": [p.text + "\n" for p in problems]})
    args = GRPOConfig(
        output_dir=str(tmp_path), per_device_train_batch_size=2 * GROUP, num_generations=GROUP,
        max_completion_length=24, learning_rate=1e-2, use_cpu=True, report_to="none", logging_steps=1,
        log_completions=False, bf16=False, disable_tqdm=True, seed=0,
        # a random model rarely writes a newline: bias it so completions have several steps
        generation_kwargs={"sequence_bias": {(newline,): 4.0}},
        **config,
    )  # fmt: skip
    return policy, tokenizer, dataset, args


def _trainer(policy, tokenizer, dataset, args, seen: list, callbacks=()):
    from prmkit.rl.trl import DenseGRPOTrainer

    class Capturing(DenseGRPOTrainer):
        def _compute_loss(self, model, inputs):
            keys = ("prompt_ids", "prompt_mask", "completion_ids", "completion_mask", "advantages")
            seen.append({k: inputs[k].detach().cpu().clone() for k in keys})
            return super()._compute_loss(model, inputs)

    return Capturing(
        model=policy, reward_funcs=[length_reward], args=args, train_dataset=dataset,
        processing_class=tokenizer, callbacks=list(callbacks),
        process_reward=ProcessReward(HashScorer(), unfinished_reward=None), process_weight=0.5,
    )  # fmt: skip


def _expected(batch: dict[str, Any], tokenizer: Any) -> Any:
    """The advantages prmkit's functions give this batch, recomputed from its token ids: rows grouped by
    prompt, completions decoded and split, steps scored by HashScorer, outcome = length_reward."""
    import torch

    rows: dict[tuple[int, ...], list[int]] = {}
    for i, (ids, mask) in enumerate(zip(batch["prompt_ids"], batch["prompt_mask"], strict=True)):
        rows.setdefault(tuple(ids[mask.bool()].tolist()), []).append(i)
    expected = torch.zeros_like(batch["advantages"])
    for prompt_ids, members in rows.items():
        assert len(members) == GROUP  # whole groups reach the loss together
        problem = problem_text(tokenizer.decode(list(prompt_ids), skip_special_tokens=True), StepSplit())
        ids = [batch["completion_ids"][i][batch["completion_mask"][i].bool()].tolist() for i in members]
        texts = tokenizer.batch_decode(ids, skip_special_tokens=True)
        parsed = [parse_completion(t) for t in texts]
        rewards = [HashScorer().score([make_trace(problem, p.steps)])[0] if p.steps else [] for p in parsed]
        ends = [step_token_ends(i, tokenizer, p.char_ends) for i, p in zip(ids, parsed, strict=True)]
        process = process_advantages(rewards, ends, [len(i) for i in ids], GROUP)
        outcome = outcome_advantages(length_reward(texts), GROUP)
        for i, row in zip(members, mixed_advantages(outcome, process, 0.5), strict=True):
            expected[i, : len(row)] = torch.tensor(row)
    return expected, sum(len(p.steps) > 1 for p in parsed)


def test_dense_advantages_reach_the_loss(tmp_path: Path) -> None:
    import torch

    policy, tokenizer, dataset, args = _setup(tmp_path, max_steps=2, save_strategy="no")
    before = [p.detach().clone() for p in policy.parameters()]
    seen: list[dict[str, Any]] = []
    trainer = _trainer(policy, tokenizer, dataset, args, seen)
    trainer.train()
    assert trainer.state.global_step == 2 and len(seen) == 2
    multi_step = 0
    for batch in seen:
        adv = batch["advantages"]
        assert adv.shape == batch["completion_ids"].shape  # (batch, tokens), not one per sequence
        expected, multi = _expected(batch, tokenizer)
        multi_step += multi
        assert torch.allclose(adv * batch["completion_mask"], expected, atol=1e-5)
        # dense: a completion's tokens do not all share one value
        assert any(
            len(set(r[m.bool()].tolist())) > 1 for r, m in zip(adv, batch["completion_mask"], strict=True)
        )
    assert multi_step > 0  # ragged steps were exercised
    logged = [h for h in trainer.state.log_history if "process/step_reward" in h]
    assert len(logged) == 2 and all(0.0 <= h["process/step_reward"] <= 1.0 for h in logged)
    assert any(not torch.equal(a, b) for a, b in zip(before, policy.parameters(), strict=True))


def test_a_crashed_run_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    from transformers import TrainerCallback

    class Crash(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step == 2:
                raise RuntimeError("killed")

    policy, tokenizer, dataset, args = _setup(tmp_path, max_steps=3, save_strategy="steps", save_steps=1)
    with pytest.raises(RuntimeError, match="killed"):
        _trainer(policy, tokenizer, dataset, args, [], callbacks=[Crash()]).train()
    assert [p.name for p in sorted(tmp_path.glob("checkpoint-*"))] == ["checkpoint-1"]
    policy, tokenizer, dataset, args = _setup(tmp_path, max_steps=3, save_strategy="steps", save_steps=1)
    seen: list[dict[str, Any]] = []
    trainer = _trainer(policy, tokenizer, dataset, args, seen)
    trainer.train(resume_from_checkpoint=True)
    assert trainer.state.global_step == 3 and len(seen) == 2  # it ran steps 2 and 3 only
    assert [h["step"] for h in trainer.state.log_history if "loss" in h] == [1, 2, 3]  # 1 from the checkpoint
    for batch in seen:
        expected, _ = _expected(batch, tokenizer)
        assert batch["advantages"].dim() == 2
        assert (batch["advantages"] * batch["completion_mask"]).allclose(expected, atol=1e-5)

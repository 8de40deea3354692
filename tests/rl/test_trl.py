"""DenseGRPOTrainer: real TRL GRPO steps on a tiny model, the (batch, tokens) advantages reaching
``_compute_loss`` checked against prmkit's advantage functions, a crashed run resumed, TRL's vLLM branch
run with a stand-in for vLLM, and the GPU recipe's settings checked. Two processes:
``test_trl_distributed.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prmkit.core.steps import StepSplit, make_trace, parse_completion, problem_text
from prmkit.rl.advantages import mixed_advantages, outcome_advantages
from prmkit.rl.credits import Rollouts, credit_advantages
from prmkit.rl.emitters import step_token_ends
from prmkit.rl.rewards import ProcessReward
from tests.serving.conftest import HashScorer

pytestmark = [
    # TRL 1.16 itself sets/reads transformers 5.23's deprecated gradient-checkpointing names
    pytest.mark.filterwarnings(r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning"),
]

GROUP = 4
GPU_RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "rl-gpu-trl.yaml"


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
    from prmkit.worlds.arithmetic import generate_problems

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
            keys = ("prompt_ids", "prompt_mask", "completion_ids", "completion_mask", "advantages",
                    "importance_sampling_ratio")  # fmt: skip
            seen.append({k: inputs[k].detach().cpu().clone() for k in keys if k in inputs})
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
    order: list[int] = []
    outcome_all: list[float] = []
    rewards_all: list[list[float]] = []
    ends_all: list[list[int]] = []
    lengths_all: list[int] = []
    for prompt_ids, members in rows.items():
        assert len(members) == GROUP  # whole groups reach the loss together
        problem = problem_text(tokenizer.decode(list(prompt_ids), skip_special_tokens=True), StepSplit())
        ids = [batch["completion_ids"][i][batch["completion_mask"][i].bool()].tolist() for i in members]
        texts = tokenizer.batch_decode(ids, skip_special_tokens=True)
        parsed = [parse_completion(t) for t in texts]
        rewards = [HashScorer().score([make_trace(problem, p.steps)])[0] if p.steps else [] for p in parsed]
        ends = [step_token_ends(i, tokenizer, p.char_ends) for i, p in zip(ids, parsed, strict=True)]
        order += members
        outcome_all += outcome_advantages(length_reward(texts), GROUP)
        rewards_all += rewards
        ends_all += ends
        lengths_all += [len(i) for i in ids]
    # PURE's credit, the default: its whitening spans the batch, so the groups go in together
    groups = [list(range(g, g + GROUP)) for g in range(0, len(order), GROUP)]
    process_all = credit_advantages("pure", Rollouts(rewards_all, ends_all, lengths_all, groups))
    # the process part is put on outcome's scale with one factor for the whole batch
    for i, row in zip(order, mixed_advantages(outcome_all, process_all, 0.5, scale=True), strict=True):
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


class VLLMStandIn:
    """What TRL 1.16's ``VLLMGeneration.generate`` hands ``_generate_single_turn`` in server mode (the
    prompts' ids, one completion's ids per prompt row, each token's top-1 logprob as a one-element list):
    completions fixed in advance (``trl_dist_run.rollout_text``) and the policy's own logprobs of them, so
    TRL's vLLM branch (importance sampling included) runs here, where vLLM itself cannot."""

    def __init__(self, model: Any, tokenizer: Any):
        self.model, self.tokenizer, self.synced = model, tokenizer, 0

    def sync_weights(self) -> None:
        self.synced += 1

    def generate(self, prompts: list[list[int]], images: Any, num_generations: int, profiler: Any = None):
        import torch

        from tests.rl.trl_dist_run import rollout_text

        tok = self.tokenizer
        texts = [rollout_text(0, i, tok.decode(p, skip_special_tokens=True)) for i, p in enumerate(prompts)]
        completions = [[*tok.encode(t, add_special_tokens=False), tok.eos_token_id] for t in texts]
        logprobs = []
        with torch.no_grad():
            for prompt, completion in zip(prompts, completions, strict=True):
                logits = self.model(torch.tensor([prompt + completion])).logits[0, len(prompt) - 1 : -1]
                picked = logits.log_softmax(-1).gather(1, torch.tensor(completion)[:, None])[:, 0]
                logprobs.append([[lp] for lp in picked.tolist()])
        return prompts, completions, logprobs, None


def test_vllm_generation_path(tmp_path: Path) -> None:
    """``use_vllm=True``: TRL's vLLM branch (weights synced, completions and sampling logprobs from the
    generator, importance-sampling ratio into the loss) with a stand-in for vLLM; the dense advantages
    still reach the loss as prmkit computes them."""
    import torch

    policy, tokenizer, dataset, args = _setup(tmp_path, max_steps=1, save_strategy="no")
    seen: list[dict[str, Any]] = []
    trainer = _trainer(policy, tokenizer, dataset, args, seen)
    # what GRPOTrainer.__init__ sets for use_vllm=True, the VLLMGeneration (which needs vllm) a stand-in
    trainer.use_vllm, trainer._last_loaded_step = True, -1
    trainer.vllm_generation = VLLMStandIn(policy, tokenizer)
    trainer.train()
    assert trainer.vllm_generation.synced == 1 and len(seen) == 1
    (batch,) = seen
    expected, multi = _expected(batch, tokenizer)
    assert multi > 0 and torch.allclose(batch["advantages"] * batch["completion_mask"], expected, atol=1e-5)
    ratio = batch["importance_sampling_ratio"]  # sequence_mask, TRL's default: one ratio per completion
    assert ratio.shape == (len(expected), 1) and torch.allclose(ratio, torch.ones_like(ratio), atol=1e-3)
    (logged,) = [h for h in trainer.state.log_history if "process/paid" in h]
    assert abs(logged["sampling/importance_sampling_ratio/mean"] - 1.0) < 1e-3


def test_gpu_recipe_passes_prmkit_rl_s_check(tmp_path: Path) -> None:
    """``recipes/rl-gpu-trl.yaml`` is read as ``prmkit rl --config`` reads it (its ``rl`` section as an
    RlConfig, unknown keys refused with their line): every setting valid, only the user's policy folder
    missing here."""
    from typer.testing import CliRunner

    from prmkit.cli import app
    from prmkit.core.yamlconf import load_yaml_config
    from prmkit.rl.config import RlConfig

    config = load_yaml_config(GPU_RECIPE, RlConfig, section="rl")
    assert config.dense() and config.credit == "min" and config.prm == "http://127.0.0.1:8000"
    assert config.policy.endswith("Qwen2.5-Math-1.5B-Instruct")
    result = CliRunner().invoke(app, ["rl", "--config", str(GPU_RECIPE), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and "policy: expected a causal-LM folder" in result.output, result.output


def test_a_completion_without_steps_is_standardised_as_its_tokens_are() -> None:
    """The trainer standardises per-step values (the gathered batch), prmkit's ``mixed_advantages`` token
    rows: a completion with no step (an immediate EOS, ``unfinished_reward=None``) counts as first value 0
    in both, so the two agree."""
    from prmkit.rl.advantages import spread, standardized, step_advantages
    from prmkit.rl.trl import _standardized

    rewards, ends, lengths = (
        [[0.9, 0.2], [], [0.5], [0.1, 0.8, 0.3]],
        [[2, 4], [], [3], [1, 2, 5]],
        [5, 1, 4, 6],
    )
    per_step = step_advantages(rewards, 4)
    trainer = [spread(v, e, n) for v, e, n in zip(_standardized(per_step), ends, lengths, strict=True)]
    tokens = standardized([spread(v, e, n) for v, e, n in zip(per_step, ends, lengths, strict=True)])
    assert trainer == tokens and trainer[1] == [0.0]

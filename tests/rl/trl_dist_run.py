"""Launched by ``tests/rl/test_trl_distributed.py``: ``DenseGRPOTrainer`` trained through TRL as users
launch it (``accelerate launch --config_file recipes/accelerate/ddp.yaml --num_processes N``), each rank
recording every batch it generated and every batch that reached ``_compute_loss``.

``python -m accelerate.commands.launch ... tests/rl/trl_dist_run.py MODEL_DIR OUT MODE...`` where MODE is

- ``sampled``: TRL's own generation (``model.generate``); completions differ between launches of one and
  two processes (each rank draws its own), so the test recomputes the advantages from the gathered batch;
- ``rollout``: TRL's ``rollout_func`` hook with completions fixed by (step, global row, prompt) alone, so a
  launch of one process and one of two train on the same completions and must give the same advantages.

The global batch is :data:`GLOBAL_BATCH` (three groups of :data:`GROUP`) whatever the number of processes:
with two processes of 6 rows the middle group spans both ranks, so its step rewards must be gathered.
Each rank writes ``OUT/MODE.rank{R}.pt``.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path
from typing import Any

GROUP = 4
GLOBAL_BATCH = 12
"""Three groups: over two processes of 6 rows, rows 4-7 (the middle group) lie on both ranks."""
STEPS = 2
PROCESS_WEIGHT = 0.5
"""Mixed: exercises TRL's own gathered outcome advantage and the process part's standardisation."""
UNFINISHED = {"sampled": None, "rollout": 0.5}
"""A random policy never answers, so ``sampled`` scores every completion's steps; ``rollout`` finishes
about half its completions and pays an unfinished one 0.5, above some finished ones' worst steps, so
the unfinished rule's cap binds in groups spanning ranks."""
KEYS = ("prompt_ids", "prompt_mask", "completion_ids", "completion_mask", "advantages")


def length_reward(completions: list[str], **kwargs: Any) -> list[float]:
    """The outcome part of the mix: any reward that varies inside a group will do."""
    return [len(c) / 10 for c in completions]


def rollout_text(step: int, row: int, prompt: str) -> str:
    """A completion fixed by the optimiser step, the row's place in the global batch and its prompt:
    two to four arithmetic steps (some wrong), then a final answer half of the time."""
    rng = random.Random(f"{step}/{row}/{prompt}")
    steps = []
    for _ in range(rng.randint(2, 4)):
        a, b = rng.randint(1, 9), rng.randint(1, 9)
        steps.append(f"{a} + {b} = {a + b + rng.choice([0, 0, 1])} apples.")
    if rng.random() < 0.5:
        steps.append(f"The answer is {rng.randint(1, 9)}.")
    return "\n".join(steps)


def rollout(prompts: list[str], trainer: Any) -> dict[str, Any]:
    """TRL's ``rollout_func``: this rank's rows are ``process_index * len(prompts)`` onwards of the
    global batch (TRL's own slicing), so a row's completion is the same in one process and in two."""
    tok = trainer.processing_class
    start = trainer.accelerator.process_index * len(prompts)
    texts = [rollout_text(trainer.state.global_step, start + i, p) for i, p in enumerate(prompts)]
    completion_ids = [[*tok.encode(t, add_special_tokens=False), tok.eos_token_id] for t in texts]
    return {"prompt_ids": tok(text=prompts)["input_ids"], "completion_ids": completion_ids, "logprobs": None}


def _trainer(model_dir: Path, out: Path, mode: str, processes: int, record: dict[str, list]) -> Any:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig

    from prmkit.rl.rewards import ProcessReward
    from prmkit.rl.trl import DenseGRPOTrainer
    from prmkit.worlds.arithmetic import generate_problems
    from tests.serving.conftest import HashScorer

    class Recording(DenseGRPOTrainer):
        def _generate_and_score_completions(self, inputs):
            output = super()._generate_and_score_completions(inputs)
            record["generated"].append({k: output[k].detach().cpu().clone() for k in KEYS})
            return output

        def _compute_loss(self, model, inputs):
            record["loss"].append({k: inputs[k].detach().cpu().clone() for k in KEYS})
            return super()._compute_loss(model, inputs)

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    torch.manual_seed(0)
    policy = AutoModelForCausalLM.from_pretrained(model_dir)
    dataset = Dataset.from_dict({"prompt": [p.text + "\n" for p in generate_problems(6, seed=2)]})
    newline = tokenizer.encode("\n", add_special_tokens=False)[-1]
    args = GRPOConfig(
        output_dir=str(out / mode), per_device_train_batch_size=GLOBAL_BATCH // processes,
        num_generations=GROUP, max_completion_length=24, learning_rate=1e-2, max_steps=STEPS,
        save_strategy="no", use_cpu=True, bf16=False, report_to="none", logging_steps=1,
        log_completions=False, disable_tqdm=True, seed=0,
        # a random model rarely writes a newline: bias it so completions have several steps
        generation_kwargs={"sequence_bias": {(newline,): 4.0}},
    )  # fmt: skip
    return Recording(
        model=policy, reward_funcs=[length_reward], args=args, train_dataset=dataset,
        processing_class=tokenizer, rollout_func=rollout if mode == "rollout" else None,
        process_reward=ProcessReward(HashScorer(), unfinished_reward=UNFINISHED[mode]),
        process_weight=PROCESS_WEIGHT, credit="min",  # step-level credit: the unfinished cap binds
    )  # fmt: skip


def main(model_dir: str, out: str, *modes: str) -> None:
    import torch

    # the launcher's count: a bare PartialState() here would see one process (the ddp config names GPUs;
    # the gloo group starts only when TRL's arguments ask for the CPU)
    processes = int(os.environ.get("WORLD_SIZE", "1"))
    for mode in modes:
        record: dict[str, list] = {"generated": [], "loss": []}
        trainer = _trainer(Path(model_dir), Path(out), mode, processes, record)
        trainer.train()
        rank = trainer.accelerator.process_index
        torch.save(
            {**record, "rank": rank, "processes": trainer.accelerator.num_processes,
             "log": trainer.state.log_history},
            Path(out) / f"{mode}.rank{rank}.pt",
        )  # fmt: skip
    # leave the gloo group together before exiting: a rank that exits with the group's threads still up
    # can abort in C++ ("terminate called without an active exception", seen once under load in CI)
    if torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main(*sys.argv[1:])

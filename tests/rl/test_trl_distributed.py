"""Issue 36: ``DenseGRPOTrainer`` under ``accelerate launch --num_processes 2`` (two gloo CPU processes)
gives the one-process advantages.

Groups span ranks on purpose (a global batch of 12 = three groups of 4, 6 rows a rank: rows 4-7 lie on
both), so a rank's advantages need the other rank's step rewards and unfinished flags. Two checks
(``trl_dist_run.py`` runs the trainings and records every batch):

- TRL's own sampling: each rank's ``(B, T)`` advantages equal what ``prmkit.rl.advantages`` gives the
  gathered batch, recomputed from its token ids, and the tensors reaching ``_compute_loss`` are those
  rows (TRL shuffles them within a rank);
- a deterministic ``rollout_func`` (a completion fixed by step, global row and prompt): the two-process
  launch trains on exactly the one-process run's completions (a run without a launcher, in the test's
  own process), and its concatenated advantages equal the one-process ones, at both steps.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from prmkit.rl.advantages import mixed_advantages, outcome_advantages, process_advantages
from prmkit.rl.emitters import step_token_ends
from prmkit.rl.rewards import ProcessReward
from tests.rl import trl_dist_run
from tests.rl.trl_dist_run import GLOBAL_BATCH, GROUP, PROCESS_WEIGHT, STEPS, UNFINISHED, length_reward
from tests.serving.conftest import HashScorer, free_port

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
Row = tuple[list[int], list[int], list[float]]
"""One completion as recorded: its prompt's ids, its ids and its advantages, padding removed."""


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny policy of ``test_trl.py`` (1 layer x 32, Llama, RoPE) and its tokenizer, on disk."""
    from transformers import AutoModelForCausalLM

    from prmkit.modeling.backbone import TinyConfig, tiny_config
    from prmkit.modeling.tokenizer import build_tokenizer
    from prmkit.worlds.arithmetic import generate_problems

    folder = tmp_path_factory.mktemp("policy")
    texts = [p.text for p in generate_problems(6, seed=2)] + ["3 + 4 = 7 apples.", "The answer is 7."]
    tokenizer = build_tokenizer(texts, 300)
    torch.manual_seed(0)
    config = tiny_config(tokenizer, TinyConfig(layers=1, width=32, heads=2, positions="rope"))
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _launch(processes: int, model_dir: Path, out: Path, *modes: str) -> list[dict[str, Any]]:
    """``accelerate launch --config_file recipes/accelerate/ddp.yaml --num_processes N`` of
    ``trl_dist_run.py``; each rank's record, rank 0 first."""
    out.mkdir()
    command = [sys.executable, "-m", "accelerate.commands.launch", "--config_file",
               str(ROOT / "recipes" / "accelerate" / "ddp.yaml"), "--num_processes", str(processes),
               "--main_process_port", str(free_port()), str(ROOT / "tests" / "rl" / "trl_dist_run.py"),
               str(model_dir), str(out), *modes]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore",
           "TRL_EXPERIMENTAL_SILENCE": "1"}  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    return {mode: [torch.load(out / f"{mode}.rank{r}.pt") for r in range(processes)] for mode in modes}


def _rows(batch: dict[str, torch.Tensor]) -> list[Row]:
    """(prompt ids, completion ids, advantages) of each row, padding removed."""
    out = []
    for i in range(len(batch["completion_ids"])):
        cmask, pmask = batch["completion_mask"][i].bool(), batch["prompt_mask"][i].bool()
        out.append(
            (batch["prompt_ids"][i][pmask].tolist(), batch["completion_ids"][i][cmask].tolist(),
             batch["advantages"][i][cmask].tolist())
        )  # fmt: skip
    return out


def _gathered(records: list[dict[str, Any]], step: int) -> list[Row]:
    """The global batch generated at ``step``: the ranks' rows in rank order (TRL's slicing)."""
    return [row for record in records for row in _rows(record["generated"][step])]


def _expected(rows: list[Row], tokenizer: Any, mode: str, capped: bool = True) -> list[list[float]]:
    """The advantages prmkit's functions give a global batch, from its token ids alone: completions
    decoded and paid by HashScorer, the process part with the unfinished flags (``capped``) and min
    credit (set by trl_dist_run.py: the step-level path, where the unfinished cap applies), mixed with
    outcome GRPO on the length reward."""
    prompts = [tokenizer.decode(p, skip_special_tokens=True) for p, _, _ in rows]
    texts = tokenizer.batch_decode([c for _, c, _ in rows], skip_special_tokens=True)
    paid = ProcessReward(HashScorer(), unfinished_reward=UNFINISHED[mode]).score(prompts, texts)
    ends = [step_token_ends(c, tokenizer, p.char_ends) for (_, c, _), p in zip(rows, paid, strict=True)]
    process = process_advantages(
        [p.rewards for p in paid], ends, [len(c) for _, c, _ in rows], GROUP,
        unpaid=[p.unpaid for p in paid] if capped else None,
    )  # fmt: skip
    outcome = outcome_advantages(length_reward(texts), GROUP)
    return mixed_advantages(outcome, process, PROCESS_WEIGHT, scale=True)


def _close(a: list[list[float]], b: list[list[float]], atol: float = 1e-5) -> bool:
    return len(a) == len(b) and all(
        len(x) == len(y) and torch.allclose(torch.tensor(x), torch.tensor(y), atol=atol)
        for x, y in zip(a, b, strict=True)
    )


def _alone(model_dir: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """``trl_dist_run.py``'s ``rollout`` training in one process without a launcher, here in the test's own
    process: a launch of one process adds ~10 s of interpreter start-ups and changes nothing compared
    (one process either way, the completions fixed by the rollout function); its record."""
    out.mkdir()
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    threads = torch.get_num_threads()
    try:
        trl_dist_run.main(str(model_dir), str(out), "rollout")
    finally:
        torch.set_num_threads(threads)
    return {"rollout": [torch.load(out / "rollout.rank0.pt")]}


# TRL 1.16 itself reads the TrainingArguments names transformers deprecates, and warns about rollout_func
@pytest.mark.filterwarnings(r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning")
@pytest.mark.filterwarnings(r"ignore:You are using 'rollout_func'")
def test_two_processes_give_the_one_process_advantages(
    model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    two = _launch(2, model_dir, tmp_path / "two", "sampled", "rollout")
    one = _alone(model_dir, tmp_path / "one", monkeypatch)

    for mode, records in two.items():
        assert [r["processes"] for r in records] == [2, 2]
        for step in range(STEPS):
            rows = _gathered(records, step)
            assert len(rows) == GLOBAL_BATCH and [len(_rows(r["generated"][step])) for r in records] == [6, 6]
            # the middle group lies on both ranks: rows 4-7 share one prompt
            assert len({tuple(p) for p, _, _ in rows[4:8]}) == 1
            assert _close([a for _, _, a in rows], _expected(rows, tokenizer, mode)), (mode, step)
            for record in records:  # what reaches the loss: this rank's rows, shuffled
                generated = sorted(map(repr, _rows(record["generated"][step])))
                assert sorted(map(repr, _rows(record["loss"][step]))) == generated
                adv = record["loss"][step]["advantages"]
                assert adv.dim() == 2 and adv.shape == record["loss"][step]["completion_ids"].shape
        # the process metrics are the whole batch's: both ranks log the same numbers
        paid = [[h["process/paid"] for h in r["log"] if "process/paid" in h] for r in records]
        assert len(paid[0]) == STEPS and paid[0] == paid[1]

    (single,) = one["rollout"]
    assert single["processes"] == 1
    uncapped = []
    for step in range(STEPS):
        alone, split = _rows(single["generated"][step]), _gathered(two["rollout"], step)
        assert [(p, c) for p, c, _ in alone] == [(p, c) for p, c, _ in split]  # the same completions
        assert _close([a for _, _, a in alone], [a for _, _, a in split], atol=1e-6)
        uncapped.append(
            _close([a for _, _, a in split], _expected(split, tokenizer, "rollout", capped=False))
        )
    assert not all(uncapped)  # the unfinished cap bound somewhere: its flags were gathered and used
    # the dense part is there: some completion's tokens do not all share one value
    assert any(len(set(a)) > 1 for _, _, a in _gathered(two["rollout"], 0))

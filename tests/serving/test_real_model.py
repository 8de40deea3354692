"""End to end with a real (randomly initialised) prmkit PRM checkpoint: ``prmkit serve`` in a subprocess,
RemoteScorer vs offline scoring, and a few real TRL GRPOTrainer steps with prmkit's reward function."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from prmkit.core.steps import make_trace
from prmkit.scoring.remote import RemoteScorer
from prmkit.search.bon import best_of_n
from prmkit.worlds.arithmetic import WorldPolicy, generate_problems
from tests.serving.conftest import prmkit_serve


@pytest.mark.slow
def test_prmkit_serve_subprocess_matches_offline(random_prm: str, tmp_path: Path) -> None:
    from prmkit.scoring import load_scorer

    with prmkit_serve(random_prm, "--max-wait-ms", "10", log=tmp_path / "server.log") as url:
        problems = generate_problems(4, seed=9, split="test")
        remote = best_of_n(problems, WorldPolicy(), RemoteScorer(url), n=4)
        offline = best_of_n(problems, WorldPolicy(), load_scorer(random_prm), n=4)
        for r, o in zip(remote, offline, strict=True):
            assert r.details["step_scores"] == pytest.approx(o.details["step_scores"], abs=1e-5)
            assert r.answer == o.answer
        tagged = "Ann has 3 pens.\n3 + 1 = 4 pens.<|step|>\nThe answer is 4.<|step|>\n"
        pool = httpx.post(f"{url}/pooling", json={"input": tagged}).json()
        trace = make_trace("Ann has 3 pens.", ["3 + 1 = 4 pens.", "The answer is 4."])
        (direct,) = RemoteScorer(url).score([trace])
        assert [p for _, p in pool["data"][0]["data"]] == pytest.approx(direct, abs=1e-6)


@pytest.mark.slow
# TRL 1.16 itself sets/reads transformers 5.23's deprecated gradient-checkpointing names; nothing a caller can change.
@pytest.mark.filterwarnings(r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning")
def test_trl_grpo_trainer_runs_with_prmkit_reward(random_prm: str, tmp_path: Path) -> None:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from prmkit.modeling.backbone import TinyConfig, tiny_config
    from prmkit.rl import trl_reward
    from prmkit.scoring import load_scorer

    tokenizer = AutoTokenizer.from_pretrained(random_prm)
    torch.manual_seed(0)
    policy = AutoModelForCausalLM.from_config(
        tiny_config(tokenizer, TinyConfig(layers=1, width=32, heads=2, positions="rope"))
    )
    before = [p.detach().clone() for p in policy.parameters()]
    problems = generate_problems(4, seed=2)
    dataset = Dataset.from_dict({"prompt": [p.text + "\n" for p in problems]})
    scorer = load_scorer(random_prm)
    seen: list[int] = []

    class Counting:
        name = scorer.name

        def score(self, traces):
            seen.append(len(traces))
            return scorer.score(traces)

    reward = trl_reward(
        Counting(), aggregation="min", unfinished_reward=None
    )  # a random policy never answers
    args = GRPOConfig(
        output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=4, num_generations=4,
        max_completion_length=16, learning_rate=1e-2, use_cpu=True, report_to="none", logging_steps=1,
        save_strategy="no", log_completions=False, bf16=False, disable_tqdm=True,
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=policy, reward_funcs=[reward], args=args, train_dataset=dataset, processing_class=tokenizer
    )
    trainer.train()
    assert seen and all(n == 4 for n in seen)
    key = f"rewards/{reward.__name__}/mean"  # TRL logs each reward function under its own name
    assert reward.__name__.startswith("prm_") and reward.__name__.endswith("_min")
    logs = [h for h in trainer.state.log_history if key in h]
    assert len(logs) == 2 and all(0.0 <= h[key] <= 1.0 for h in logs)
    assert any(not torch.equal(a, b) for a, b in zip(before, policy.parameters(), strict=True))


def test_served_checkpoint_gets_a_cpu_sized_forward_budget(random_prm: str) -> None:
    """``prmkit serve`` gives a checkpoint a small token budget on a CPU (several small length-sorted
    passes beat one large padded one there); an explicit ``batch_tokens`` wins; scores do not change."""
    import torch

    from prmkit.scoring import load_scorer
    from prmkit.serving.config import ServerConfig
    from prmkit.serving.reward_server import CPU_BATCH_TOKENS, serving_batch_tokens

    assert serving_batch_tokens(random_prm, ServerConfig(batch_tokens=4096)) == 4096
    assert serving_batch_tokens("arithmetic-oracle", ServerConfig()) is None
    assert serving_batch_tokens("http://127.0.0.1:1", ServerConfig()) is None
    expected = None if torch.cuda.is_available() else CPU_BATCH_TOKENS
    assert serving_batch_tokens(random_prm, ServerConfig()) == expected
    small = load_scorer(random_prm, batch_tokens=256)
    assert small.batch_tokens == 256
    traces = []
    for p in generate_problems(6, seed=3, split="test"):
        for cont in WorldPolicy().continue_from(p, [], n=2, seed=0):
            traces.append(make_trace(p.text, [s.text for s in cont.steps]))
    for got, want in zip(small.score(traces), load_scorer(random_prm).score(traces), strict=True):
        assert got == pytest.approx(want, abs=1e-5)

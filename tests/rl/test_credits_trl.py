"""prmkit's credit forms in TRL: a real GRPO step of :class:`~prmkit.rl.trl.DenseGRPOTrainer` on a tiny
model with ``credit=<form>``; the (batch, tokens) advantages reaching ``_compute_loss`` equal
:func:`prmkit.rl.credits.credit_advantages` recomputed from the batch's token ids (steps scored by
HashScorer, the outcome from the trainer's reward function, read only by the forms that take one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prmkit.core.steps import StepSplit, make_trace, parse_completion, problem_text
from prmkit.rl.credits import CREDITS, Rollouts, credit_advantages
from prmkit.rl.emitters import step_token_ends
from prmkit.rl.rewards import ProcessReward
from tests.rl.test_trl import GROUP, _setup
from tests.serving.conftest import HashScorer

pytestmark = [
    pytest.mark.filterwarnings(r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning"),
]


def parity_outcome(completions: list[str], **kwargs: Any) -> list[float]:
    """A 1/0 outcome that varies inside a group (a stand-in for the checker)."""
    return [float(len(c) % 2 == 0) for c in completions]


def expected(batch: dict[str, Any], tokenizer: Any, credit: str, params: dict[str, Any]) -> Any:
    import torch

    rows: dict[tuple[int, ...], list[int]] = {}
    for i, (ids, mask) in enumerate(zip(batch["prompt_ids"], batch["prompt_mask"], strict=True)):
        rows.setdefault(tuple(ids[mask.bool()].tolist()), []).append(i)
    rewards, ends, lengths, outcome, groups, keys, order = [], [], [], [], [], [], []
    for prompt_ids, members in rows.items():
        prompt = tokenizer.decode(list(prompt_ids), skip_special_tokens=True)
        problem = problem_text(prompt, StepSplit())
        ids = [batch["completion_ids"][i][batch["completion_mask"][i].bool()].tolist() for i in members]
        texts = tokenizer.batch_decode(ids, skip_special_tokens=True)
        parsed = [parse_completion(t) for t in texts]
        groups.append(list(range(len(order), len(order) + len(members))))
        keys.append(prompt)
        order += members
        rewards += [HashScorer().score([make_trace(problem, p.steps)])[0] if p.steps else [] for p in parsed]
        ends += [step_token_ends(i, tokenizer, p.char_ends) for i, p in zip(ids, parsed, strict=True)]
        lengths += [len(i) for i in ids]
        outcome += parity_outcome(texts)
    reads = CREDITS.get(credit).needs_outcome  # ``pure`` is PURE's PRM-only setting, as in verl
    r = Rollouts(rewards, ends, lengths, groups, outcome=outcome if reads else None, keys=keys)
    out = torch.zeros_like(batch["advantages"])
    for i, row in zip(order, credit_advantages(credit, r, **params), strict=True):
        out[i, : len(row)] = torch.tensor(row)
    return out


@pytest.mark.parametrize(
    ("credit", "params"),
    [("sum", {}), ("min", {}), ("min", {"temperature": 0.5}), ("pure", {}), ("pure", {"baseline": "step"}),
     ("anchor", {"share": 1.0}), ("first_error", {}), ("papo", {"process_weight": 0.5}), ("prof", {}),
     ("pav", {"alpha": 0.5}), ("prime", {})],
)  # fmt: skip
def test_trl_path_equals_the_library(tmp_path: Path, credit: str, params: dict[str, Any]) -> None:
    import torch

    from prmkit.rl.trl import DenseGRPOTrainer

    policy, tokenizer, dataset, args = _setup(tmp_path, max_steps=1, save_strategy="no")
    seen: list[dict[str, Any]] = []

    class Capturing(DenseGRPOTrainer):
        def _compute_loss(self, model, inputs):
            seen.append(
                {
                    k: inputs[k].detach().cpu().clone()
                    for k in ("prompt_ids", "prompt_mask", "completion_ids", "completion_mask", "advantages")
                }
            )
            return super()._compute_loss(model, inputs)

    trainer = Capturing(
        model=policy, reward_funcs=[parity_outcome], args=args, train_dataset=dataset,
        processing_class=tokenizer, process_reward=ProcessReward(HashScorer(), unfinished_reward=None),
        process_weight=1.0, credit=credit, credit_params=params,
    )  # fmt: skip
    trainer.train()
    assert len(seen) == 1 and seen[0]["advantages"].shape[0] == 2 * GROUP
    batch = seen[0]
    want = expected(batch, tokenizer, credit, params)
    assert torch.allclose(batch["advantages"] * batch["completion_mask"], want, atol=1e-5)
    assert want.abs().sum() > 0  # something was paid


def test_an_unknown_credit_or_keyword_is_refused_before_training() -> None:
    from prmkit.core.registry import UnknownNameError
    from prmkit.rl.trl import DenseGRPOTrainer

    with pytest.raises(UnknownNameError, match="Did you mean 'papo'"):
        DenseGRPOTrainer(model=None, reward_funcs=[], process_reward=None, credit="papa")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="credit 'pav' takes alpha, eps, not 'alpah'; did you mean 'alpha'"):
        DenseGRPOTrainer(
            model=None, reward_funcs=[], process_reward=None, credit="pav", credit_params={"alpah": 1}
        )  # type: ignore[arg-type]

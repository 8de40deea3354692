"""The critic head: its layout and objective (the loss is on what it writes), a real training run on a
teacher's filtered chains read back by the ``critic`` convention. Whether it learns to tell right steps
from wrong ones takes minutes of training: experiments/critic.py measures it."""

from __future__ import annotations

import json

import pytest
import torch

from prmkit.labeling.judge import label_judge
from prmkit.modeling import TinyConfig, build_tokenizer
from prmkit.modeling.critic import encode_chain
from prmkit.policies import load_judge
from prmkit.scoring import load_scorer
from prmkit.training import OrmConfig, PrmConfig, train_prm
from prmkit.training.critic import critic_loss
from prmkit.training.data import StepCollator
from prmkit.worlds.registry import world

TEACHER = "judge:arithmetic-teacher"


def _chains(problems: int, per_problem: int, seed: int):
    traces = world("arithmetic").traces(problems, per_problem, seed, "train")
    return label_judge(traces, load_judge("arithmetic-teacher", seed=seed))[0]


def test_the_loss_is_the_lm_loss_of_the_checks_and_verdicts_alone():
    tok = build_tokenizer(
        ["Ann has 7 apples. 7 * 8 = 56, the step says 54 correct incorrect"], vocab_size=300
    )
    steps, checks = ["so 7 * 8 = 54.", "The answer is 54."], [("7 * 8 = 56, the step says 54", False),
                                                              ("the last result is 54", True)]  # fmt: skip
    enc = encode_chain(tok, "Ann has 7 apples.", steps, checks)
    row = {"input_ids": enc.input_ids, "tag_positions": enc.tag_positions, "targets": [0.0, 1.0],
           "prompt_length": enc.prompt_length, "context_tokens": enc.context_tokens}  # fmt: skip
    batch = StepCollator(tok.pad_token_id)([row])
    ids, read = batch["input_ids"][0], batch["context_mask"][0]
    written = torch.zeros_like(read)
    written[enc.prompt_length : enc.tag_positions[-1] + 1] = True
    written &= ~read
    text = tok.decode(ids[written])
    assert text == "7 * 8 = 56, the step says 54 \\boxed{incorrectthe last result is 54 \\boxed{correct"
    assert tok.decode(ids[read]) == "so 7 * 8 = 54.\n}\nThe answer is 54.\n"  # the steps: read, not written
    torch.manual_seed(0)
    logits = torch.randn(1, len(ids), len(tok), requires_grad=True)
    logp = logits[0, :-1].log_softmax(-1).gather(1, ids[1:, None])[:, 0]
    expected = -logp[written[1:]].mean()
    loss = critic_loss(logits, batch)
    assert float(loss.detach()) == pytest.approx(float(expected.detach()), rel=1e-6)
    loss.backward()
    assert logits.grad[0, : enc.prompt_length - 1].abs().sum() == 0  # nothing flows to the problem


def test_the_filter_options_belong_to_the_critic_head():
    with pytest.raises(ValueError, match="set head='critic'"):
        PrmConfig(filter_source="gold")
    with pytest.raises(ValueError, match="name its labels with filter_source"):
        PrmConfig(head="critic", filter_traces=10)
    with pytest.raises(ValueError, match="train it as a PRM"):
        OrmConfig(head="critic")


def test_a_critic_trained_on_filtered_chains_is_saved_and_read_back(tmp_path):
    """A few optimiser steps: the checkpoint is a causal LM whose spec says critic, its card names the
    teacher and the filter set (gold: counted in gold_use), and the critic convention scores it."""
    chains = _chains(30, 2, 0)
    tiny = TinyConfig(layers=2, width=32, heads=2, max_length=1024)
    cfg = PrmConfig(head="critic", label_source=TEACHER, filter_source="gold", filter_traces=40, tiny=tiny,
                    max_steps=3, batch_size=8, max_length=1024, eval_every=100, threads=1,
                    dev_label_source="none", resume=False)  # fmt: skip
    result = train_prm(chains, tmp_path / "critic", cfg)
    card = json.loads((tmp_path / "critic" / "process_card.json").read_text())
    critic = card["training"]["critic"]
    assert (
        critic["teacher"] == TEACHER and critic["filter_source"] == "gold" and critic["filter_traces"] == 40
    )
    assert 0 < critic["kept"] <= 40
    assert {"use": "chain_filter", "source": "gold", "traces": 40, "labels": critic["filter_labels"],
            "via": None} in result["gold_use"]  # fmt: skip
    assert card["model"]["head"] == "critic" and card["model"]["verify_tokens"] > 8
    scorer = load_scorer(tmp_path / "critic", verify_tokens=4)
    test = world("arithmetic").traces(2, 1, 1, "test")
    assert [len(r) for r in scorer.score(test)] == [len(t.steps) for t in test]

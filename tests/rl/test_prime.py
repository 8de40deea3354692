"""PRIME's online implicit PRM: the loss by hand, and updates on policy samples and outcome labels that
separate correct from wrong samples in the PRM's own process rewards."""

from __future__ import annotations

import copy
import math

import pytest

from prmkit.rl.prime import implicit_prm_loss, implicit_token_rewards, step_rewards, update_implicit_prm


def test_loss_and_step_rewards_by_hand() -> None:
    import torch

    rewards = torch.tensor([[1.0, 1.0], [0.0, -2.0]])
    # beta 0.5: sigmoid(1) for the correct one, sigmoid(-1) for the wrong one -> -log sigmoid(1) each
    loss = implicit_prm_loss(rewards, torch.tensor([1.0, 0.0]), beta=0.5)
    assert loss.item() == pytest.approx(math.log(1 + math.exp(-1)), abs=1e-6)
    mask = torch.tensor([[0, 1, 1], [0, 0, 1]])
    values, ends = step_rewards(torch.tensor([[9.0, 1.0, 2.0], [9.0, 9.0, -4.0]]), mask, beta=0.5)
    assert values == [[0.5, 1.0], [-2.0]] and ends == [[0, 1], [0]]


def test_online_updates_follow_the_outcome_labels() -> None:
    import torch
    from transformers import AutoModelForCausalLM

    from prmkit.modeling.backbone import TinyConfig, tiny_config
    from prmkit.modeling.released import ImplicitPair
    from prmkit.modeling.tokenizer import build_tokenizer

    tokenizer = build_tokenizer(["3 + 4 = 7 apples.", "The answer is 7.", "5 - 2 = 3"], 120)
    torch.manual_seed(0)
    policy = AutoModelForCausalLM.from_config(
        tiny_config(tokenizer, TinyConfig(layers=1, width=32, heads=2, positions="rope"))
    )
    pair = ImplicitPair(policy, copy.deepcopy(policy).eval(), beta=0.5)
    ids = torch.randint(3, 100, (4, 10))
    attention = torch.ones_like(ids)
    response = torch.zeros_like(ids)
    response[:, 6:] = 1
    labels = torch.tensor([1.0, 0.0, 1.0, 0.0])
    start = implicit_token_rewards(pair, ids, attention, response)
    assert start.abs().max().item() == 0.0  # the PRM starts as its reference: no process reward yet
    optimizer = torch.optim.Adam(pair.policy.parameters(), lr=1e-2)
    losses = [update_implicit_prm(pair, optimizer, ids, attention, response, labels) for _ in range(8)]
    assert losses[0] == pytest.approx(math.log(2), abs=1e-5) and losses[-1] < losses[0]
    with torch.no_grad():
        paid = implicit_token_rewards(pair, ids, attention, response).sum(dim=1)
    assert min(paid[0], paid[2]) > max(paid[1], paid[3])

"""The policy card names the PRM that paid the run: under ``credit: prime`` PRIME's implicit PRM (its
initialisation, its online updates from outcome labels, its folder), since the configured ``prm`` only
starts it; under any other credit the configured PRM (or the world's checker), as before. Built from
configs alone (no training: tests/rl/test_prime_online.py checks the card of a real prime run)."""

from __future__ import annotations

import json
from pathlib import Path

from prmkit.cards.process_card import CARD_FILE
from prmkit.rl.card import policy_card, render
from prmkit.rl.config import RlConfig

UPDATED = "updated online from outcome labels on the policy's own samples, saved at implicit_prm/"
CORPUS_FILTER = {"use": "corpus_filter", "source": "gold", "traces": 40, "labels": 160}


def _folder(path: Path, gold_use: list[dict] | None = None, card: bool = False) -> Path:
    """A model folder declaring ``gold_use`` in its ``training.json`` (as ``prmkit pretrain`` writes
    it), with a process card when ``card``."""
    path.mkdir()
    if gold_use is not None:
        (path / "training.json").write_text(json.dumps({"gold_use": gold_use}))
    if card:
        (path / CARD_FILE).write_text(json.dumps({"kind": "prm"}))
    return path


def _card(policy: Path, **settings: object) -> dict:
    return policy_card(RlConfig(policy=str(policy), **settings), 2, [], [], 0)


def test_a_prime_card_names_the_implicit_prm_initialised_from_pi0(tmp_path: Path) -> None:
    pi0 = _folder(tmp_path / "pi0", [CORPUS_FILTER])
    for prm in (None, str(pi0)):  # no PRM named, or π0's folder named (the grid's `prm: pi0`)
        card = _card(pi0, reward="dense", credit="prime", prm=prm, prime_lr=2e-4)
        want = f"implicit PRM (PRIME), initialised from π0 ({pi0}), {UPDATED}"
        assert card["reward"]["prm"] == want and card["reward"]["prm_card"] is None
        assert f"; PRM: {want}\n" in render(card)
        # π0's gold use reached the policy once: the PRM that starts as π0 does not add it again
        assert card["gold_use"] == [{**CORPUS_FILTER, "via": "backbone"}]


def test_a_prime_card_names_the_checkpoint_its_implicit_prm_started_from(tmp_path: Path) -> None:
    pi0 = _folder(tmp_path / "pi0")
    start = _folder(tmp_path / "prm", [CORPUS_FILTER], card=True)
    card = _card(pi0, reward="dense", credit="prime", prm=str(start))
    assert card["reward"]["prm"] == f"implicit PRM (PRIME), initialised from {start}, {UPDATED}"
    assert card["reward"]["prm_card"] == str((start / CARD_FILE).resolve())
    line = f"; PRM: {card['reward']['prm']} (its initialisation's process card: `{start / CARD_FILE}`)\n"
    assert line in render(card)
    assert card["gold_use"] == [{**CORPUS_FILTER, "via": "prm"}]  # its starting checkpoint's training


def test_other_credits_name_the_configured_prm_or_the_checker(tmp_path: Path) -> None:
    pi0 = _folder(tmp_path / "pi0")
    prm = _folder(tmp_path / "prm", [CORPUS_FILTER], card=True)
    for credit in ("pure", "anchor", "sum"):
        card = _card(pi0, reward="dense", credit=credit, prm=str(prm))
        assert card["reward"]["prm"] == str(prm) and card["reward"]["credit"] == credit
        assert f"; PRM: `{prm}` (process card: `{prm / CARD_FILE}`)\n" in render(card)
        assert card["gold_use"] == [{**CORPUS_FILTER, "via": "prm"}]
    same = _card(pi0, reward="dense", credit="pure", prm=str(pi0))  # π0 read as a PRM is named as such
    assert same["reward"]["prm"] == str(pi0) and f"; PRM: `{pi0}`\n" in render(same)
    checker = _card(pi0, reward="dense", credit="pure", prm="arithmetic-oracle")
    assert checker["reward"]["prm"] == "world checker (gold)"
    assert _card(pi0, reward="outcome")["reward"]["prm"] is None

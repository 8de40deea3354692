"""The policy card: beside every RL-trained policy, what trained it and what the monitors saw.

``policy_card.json`` (and a ``README.md`` rendering it) records the reward, the PRM and a pointer to its
process card, the budget in optimiser steps, the seeds, the first and last monitor points with any
Goodhart warning, and every way gold reached the policy, as :class:`~prmkit.cards.process_card.GoldUse`
records (the PRM cards' own): ``rl_reward`` for the ``gold_process`` reward (the world's checker
paid every step), and the uses π0 and the PRM declare, inherited (``via``: ``backbone`` for π0,
``prm`` for the reward model). The monitors' gold is evaluation, not a use.

Under ``credit: prime`` no checkpoint named before the run pays it: PRIME's implicit PRM does, initialised
from ``prm`` (π0 where none is named), updated online from the outcome labels of the policy's own
samples and saved in ``implicit_prm/``; the card's PRM says so (:func:`prm_role`), its process card is its
initialisation's, and its inherited gold uses are counted once where it starts as π0.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prmkit.cards.process_card import CARD_FILE, GoldUse, inherited_gold_use
from prmkit.core.files import atomic_write
from prmkit.rl.config import RlConfig
from prmkit.rl.prime import PRIME_DIR
from prmkit.scoring.forms import oracle_world
from prmkit.worlds.registry import oracle_name

POLICY_CARD = "policy_card.json"
CARD_KIND = "policy-card-1"


def prm_card(prm: str | None) -> str | None:
    """The PRM's process card, when the PRM is a local checkpoint that has one."""
    if prm and Path(prm, CARD_FILE).is_file():
        return str(Path(prm, CARD_FILE).resolve())
    return None


def _starts_as_pi0(config: RlConfig) -> bool:
    """Whether ``prime``'s implicit PRM starts from π0's own weights (no ``prm``, or π0's folder)."""
    return config.prm is None or Path(config.prm).resolve() == Path(config.policy).resolve()


def prm_role(config: RlConfig) -> str | None:
    """The PRM that paid the run, as the card names it: ``prime``'s implicit PRM (the module docstring),
    the world's checker where gold pays, else the configured PRM (None: none)."""
    if config.credit == "prime":
        start = f"π0 ({config.policy})" if _starts_as_pi0(config) else config.prm
        return (
            f"implicit PRM (PRIME), initialised from {start}, updated online from outcome labels on the "
            f"policy's own samples, saved at {PRIME_DIR}/"
        )
    return "world checker (gold)" if uses_gold(config) else config.prm


def uses_gold(config: RlConfig) -> bool:
    """Whether a world's checker pays the training reward (``gold_process``, or ``NAME-oracle`` named
    as the PRM of a reward that reads it)."""
    oracle = oracle_world(config.prm) is not None
    return config.reward == "gold_process" or (oracle and config.reward != "outcome")


def gold_uses(config: RlConfig, gold_steps: int) -> list[GoldUse]:
    """Every way gold reached the trained policy (see the module docstring)."""
    uses = list(inherited_gold_use(config.policy))
    pi0_prm = config.credit == "prime" and _starts_as_pi0(config)  # its uses are π0's, listed above
    if config.prm and Path(config.prm).is_dir() and not pi0_prm:
        uses += [g.model_copy(update={"via": "prm"}) for g in inherited_gold_use(config.prm)]
    if uses_gold(config):
        completions = config.steps * config.batch * config.group_size
        oracle = oracle_name(oracle_world(config.prm) or config.prompts.source)
        uses.append(GoldUse(use="rl_reward", source=f"gold:{oracle}", traces=completions, labels=gold_steps))
    return uses


def policy_card(
    config: RlConfig, steps_taken: int, points: list[dict[str, Any]], warnings: list[str], gold_steps: int
) -> dict[str, Any]:
    """The card's content (written by :func:`write_policy_card`)."""
    return {
        "kind": CARD_KIND,
        "created_at": datetime.now(UTC).isoformat(),
        "base_policy": config.policy,
        "reward": {
            "kind": config.reward,
            "prm": prm_role(config),
            "prm_card": prm_card(config.prm),
            "prm_convention": config.prm_convention,
            "aggregation": config.aggregation if config.reward == "prm_aggregate" else None,
            "process_weight": {"mixed": config.process_weight, "outcome": 0.0, "prm_aggregate": 0.0}.get(
                config.reward, 1.0
            ),
            "credit": config.credit if config.dense() else None,
            "progress_alpha": config.progress_alpha if config.reward == "progress" else None,
            "unfinished_reward": config.unfinished_reward,
        },
        "budget": {
            "optimiser_steps": config.steps,
            "steps_taken": steps_taken,
            "completions_per_step": config.batch * config.group_size,
            "training_problems": config.prompts.n,
        },
        "seeds": {"trainer": config.seed, "problems": config.prompts.seed, "monitors": config.seed},
        "monitors": {
            "file": "monitors.jsonl",
            "plot": "monitors.png",
            "first": points[0] if points else None,
            "last": points[-1] if points else None,
            "warnings": warnings,
            "gold": "evaluation only: the world's checker on held-out test problems"
            if points and "process_correct" in points[-1]
            else None,
        },
        "gold_use": [g.model_dump(mode="json") for g in gold_uses(config, gold_steps)],
        "config": config.model_dump(mode="json"),
    }


def write_policy_card(directory: str | Path, card: dict[str, Any]) -> Path:
    """``policy_card.json`` and ``README.md`` in ``directory``; returns the JSON's path."""
    path = Path(directory) / POLICY_CARD
    with atomic_write(path) as fh:
        json.dump(card, fh, indent=2)
    with atomic_write(Path(directory) / "README.md") as fh:
        fh.write(render(card))
    return path


def _row(point: dict[str, Any] | None, key: str) -> str:
    return "–" if not point or key not in point else f"{point[key]:.3f}"


def _prm_line(reward: dict[str, Any]) -> str:
    """The PRM as the README names it: ``prime``'s implicit PRM in words, with its initialisation's
    process card; any other PRM as code, with its own."""
    card = reward["prm_card"]
    if reward["credit"] == "prime":
        return reward["prm"] + (f" (its initialisation's process card: `{card}`)" if card else "")
    return f"`{reward['prm']}`" + (f" (process card: `{card}`)" if card else "")


def render(card: dict[str, Any]) -> str:
    """The card as Markdown (the policy folder's README)."""
    r, b, m = card["reward"], card["budget"], card["monitors"]
    lines = [
        f"# Policy trained with GRPO: reward `{r['kind']}`",
        "",
        f"- base policy (π0): `{card['base_policy']}`",
        f"- reward: `{r['kind']}`; PRM: {_prm_line(r)}",
        f"- process weight {r['process_weight']}, credit {r['credit']}, aggregation {r['aggregation']}, "
        f"unfinished completions earn {r['unfinished_reward']}",
        f"- budget: {b['steps_taken']} of {b['optimiser_steps']} optimiser steps, "
        f"{b['completions_per_step']} completions each, {b['training_problems']} training problems",
        f"- seeds: {card['seeds']}",
        "",
        "## Where gold was used",
        "",
    ]
    uses = [GoldUse.model_validate(g) for g in card["gold_use"]]
    lines += [f"- {g.line()}" + (" (its PRM's training)" if g.via == "prm" else "") for g in uses] or [
        "- nowhere"
    ]
    lines += ["", "## Monitors (held-out samples; `monitors.jsonl`, `monitors.png`)", ""]
    keys = ["prm_reward", "paid_reward", "process_correct", "answer_accuracy", "lucky", "unfinished",
            "steps_per_response", "causal_dependence"]  # fmt: skip
    keys = [k for k in keys if any(m[n] and k in m[n] for n in ("first", "last"))]
    lines += ["| | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
    for name in ("first", "last"):
        point = m[name]
        label = f"{name} (step {point['step']})" if point else name
        lines.append(f"| {label} | " + " | ".join(_row(point, k) for k in keys) + " |")
    lines += ["", *(f"**Warning**: {w}" for w in m["warnings"])]
    return "\n".join(lines) + "\n"

"""The policy card: beside every RL-trained policy, what trained it and what the monitors saw.

``policy_card.json`` (and a ``README.md`` rendering it) records the reward, the PRM and a pointer to its
process card, the budget in optimiser steps, the seeds, the first and last monitor points with any
Goodhart warning, and every way gold reached the policy, as :class:`~prmkit.cards.process_card.GoldUse`
records (the PRM cards' own): ``rl_reward`` for the ``gold_process`` reward (the world's checker
paid every step), and the uses π0 and the PRM declare, inherited (``via``: ``backbone`` for π0,
``prm`` for the reward model). The monitors' gold is evaluation, not a use.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prmkit.cards.process_card import CARD_FILE, GoldUse, inherited_gold_use
from prmkit.core.files import atomic_write
from prmkit.rl.config import RlConfig
from prmkit.scoring.forms import oracle_world
from prmkit.worlds.registry import oracle_name

POLICY_CARD = "policy_card.json"
CARD_KIND = "policy-card-1"


def prm_card(prm: str | None) -> str | None:
    """The PRM's process card, when the PRM is a local checkpoint that has one."""
    if prm and Path(prm, CARD_FILE).is_file():
        return str(Path(prm, CARD_FILE).resolve())
    return None


def uses_gold(config: RlConfig) -> bool:
    """Whether a world's checker pays the training reward (``gold_process``, or ``NAME-oracle`` named
    as the PRM of a reward that reads it)."""
    oracle = oracle_world(config.prm) is not None
    return config.reward == "gold_process" or (oracle and config.reward != "outcome")


def gold_uses(config: RlConfig, gold_steps: int) -> list[GoldUse]:
    """Every way gold reached the trained policy (see the module docstring)."""
    uses = list(inherited_gold_use(config.policy))
    if config.prm and Path(config.prm).is_dir():
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
            "prm": "world checker (gold)" if uses_gold(config) else config.prm,
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


def render(card: dict[str, Any]) -> str:
    """The card as Markdown (the policy folder's README)."""
    r, b, m = card["reward"], card["budget"], card["monitors"]
    lines = [
        f"# Policy trained with GRPO: reward `{r['kind']}`",
        "",
        f"- base policy (π0): `{card['base_policy']}`",
        f"- reward: `{r['kind']}`; PRM: `{r['prm']}`"
        + (f" (process card: `{r['prm_card']}`)" if r["prm_card"] else ""),
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

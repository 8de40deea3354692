"""The process card shows honest best-of-N accuracy (issue 61) beside accuracy where the evaluation
measured one (a world with loopholes), and a card of a world without loopholes reads as it always did."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from prmkit.cards.card import write_card
from prmkit.core.results import percent
from prmkit.evaluation.config import WorldEvalSettings
from prmkit.evaluation.suite import evaluate_world
from prmkit.scoring import load_scorer
from tests.markdown_tables import table_after

from .test_card import training_card

HONEST_HEAD = "Honest accuracy ×100, where a pick that games the task counts as wrong"


def _card(tmp_path: Path, world: str) -> tuple[str, dict[str, Any]]:
    """The README and process_card.json of a card whose evaluation is a real one on ``world``'s fresh
    data, scored by the world's oracle (its checker's verdicts as step scores)."""
    training_card(tmp_path)
    settings = WorldEvalSettings(
        world=world, problems=9, per_problem=8, heldout_problems=4, beam_problems=0, bootstrap=100
    )
    evaluation = evaluate_world(load_scorer(f"{world}-oracle"), tmp_path / "card", settings)
    readme = write_card(tmp_path, evaluation).read_text(encoding="utf-8")
    return readme, json.loads((tmp_path / "process_card.json").read_text(encoding="utf-8"))


def test_the_card_of_a_world_with_loopholes_shows_its_honest_accuracy(tmp_path: Path) -> None:
    readme, saved = _card(tmp_path, "agent")
    bon = saved["evaluation"]["bon"]
    rows = {(r["method"], r["n"]): r for r in bon["rows"]}
    assert bon["params"]["gaming_traces"] > 0  # the agent policy sometimes takes the grader's tool
    assert any(r["honest_accuracy"] < r["accuracy"] for r in rows.values())  # so the two tables differ
    assert f"with a step gold marks as a loophole: {bon['params']['gaming_traces']})" in readme
    header, *body = table_after(readme, HONEST_HEAD)
    ns = [int(h.removeprefix("N = ")) for h in header[1:]]
    assert ns == sorted({n for _, n in rows}) and [r[0] for r in body] == list(
        dict.fromkeys(m for m, _ in rows)
    )
    for method, *cells in body:
        for n, text in zip(ns, cells, strict=True):
            found = re.fullmatch(r"([\d.]+) \(([\d.]+)–([\d.]+)\)", text)
            assert found, text
            row = rows[method, n]
            shown = [float(x) for x in found.groups()]
            assert shown == pytest.approx(
                [100 * row[k] for k in ("honest_accuracy", "honest_lo", "honest_hi")], abs=0.05
            )
    # the honest table sits between the accuracy table and the gaps, inside the best-of-N section
    order = [readme.index(s) for s in ("### Best-of-N", HONEST_HEAD, "Gap to majority vote")]
    assert order == sorted(order)


def test_the_card_of_a_world_without_loopholes_reads_as_before(tmp_path: Path) -> None:
    readme, saved = _card(tmp_path, "arithmetic")
    bon = saved["evaluation"]["bon"]
    assert "gaming_traces" not in bon["params"] and not any("honest_accuracy" in r for r in bon["rows"])
    assert "Honest" not in readme and "honest accuracy" not in readme.lower()
    assert _bon_md_as_before(bon) in readme


def _bon_md_as_before(bon: dict[str, Any]) -> str:
    """The card's best-of-N section as it was rendered before honest accuracy (commit e66da9f's
    ``prmkit.cards.render._bon_md``, copied): the text a world without loopholes must still show."""
    p = bon["params"]
    rows = bon["rows"]
    ns = sorted({r["n"] for r in rows})
    cell = {(r["method"], r["n"]): r for r in rows}
    head = "| method | " + " | ".join(f"N = {n}" for n in ns) + " |\n|---|" + "---|" * len(ns)
    acc = [head] + [
        f"| {m} | "
        + " | ".join(
            f"{percent(cell[m, n]['accuracy'])} ({percent(cell[m, n]['lo'])}–{percent(cell[m, n]['hi'])})"
            for n in ns
        )
        + " |"
        for m in dict.fromkeys(r["method"] for r in rows)
    ]
    gap = [head] + [
        f"| {m} | "
        + " | ".join(
            f"{100 * cell[m, n]['gap_vs_majority']:+.1f} ({100 * cell[m, n]['gap_lo']:+.1f} to "
            f"{100 * cell[m, n]['gap_hi']:+.1f})"
            for n in ns
        )
        + " |"
        for m in dict.fromkeys(r["method"] for r in rows)
        if m not in ("majority", "oracle")
    ]
    return "\n".join(
        [
            f"### Best-of-N: answer accuracy ×100 ({int(p['confidence'] * 100)} % bootstrap band over "
            f"{p['problems']} problems)",
            "",
            *acc,
            "",
            "Gap to majority vote, points (paired bootstrap band: the same resampled problems on both sides):",
            "",
            *gap,
        ]
    )

"""Which benchmarks a PRM's training data overlaps: said in the benchmark's eval report and in the process
card's warnings (:meth:`prmkit.cards.process_card.ProcessCard.warnings` reads :func:`overlaps`).

One overlap is known: 3,203 of PRMBench's 6,216 items (51.5 %) are built on PRM800K *train* phase-1
problems (``prm800k_train_p1_first400_*``), so a PRM trained on PRM800K has seen their original
solutions. A card names PRM800K when its label provenance says so (the PRM800K reader's
``params.dataset``), or its data, training config or base model mentions it.

The card is read here as the JSON it is (``process_card.json``), not through :mod:`prmkit.cards`, which
sits above evaluation: only the four parts that say what the model was trained on are searched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CARD_FILE = "process_card.json"
TRAINING_PARTS = ("labels", "data", "training", "base_model")
"""The card's parts that say what the model was trained on."""


@dataclass(frozen=True)
class Overlap:
    """A benchmark whose items are built on a training data set."""

    benchmark: str
    dataset: str
    items: int
    of: int
    what: str

    def line(self) -> str:
        share = 100 * self.items / self.of
        return (
            f"trained on {self.dataset}: {self.items:,} of {self.benchmark}'s {self.of:,} items ({share:.1f} %) "
            f"are built on {self.what}; read its score on the items that are not"
        )


OVERLAPS = (Overlap("PRMBench", "PRM800K", 3203, 6216, "PRM800K train problems"),)


def overlaps(card: Mapping[str, Any]) -> list[Overlap]:
    """The known benchmark overlaps of a card's training data (``card``: the card as JSON), matched by the
    data set's name (case-insensitive) anywhere in :data:`TRAINING_PARTS`."""
    said = json.dumps({k: card.get(k) for k in TRAINING_PARTS}, default=str).lower()
    return [o for o in OVERLAPS if o.dataset.lower() in said]


def card_overlap(path: str | Path, benchmark: str) -> Overlap | None:
    """The overlap of ``benchmark`` (e.g. ``prmbench``) with the training data of the card at ``path``
    (``process_card.json`` or its folder); None when there is none. A path with no card is a ValueError."""
    folder = Path(path)
    if folder.name == CARD_FILE:
        folder = folder.parent
    file = folder / CARD_FILE
    if not file.is_file():
        raise ValueError(f"card: expected a {CARD_FILE} in {folder}, found none")
    try:
        card = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(
            f"{file}: expected a process card (JSON), found {type(err).__name__}: {err}"
        ) from None
    if not isinstance(card, dict):
        raise ValueError(f"{file}: expected a process card (a JSON object), found {type(card).__name__}")
    return next((o for o in overlaps(card) if o.benchmark.lower() == benchmark.lower()), None)

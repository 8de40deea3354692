"""The three splits of every world and how a problem lands in one.

Problem ``i`` of a split is drawn again and again from its own seeded stream (:func:`problem_rng`)
until the draw belongs to the split: train and test partition the problem space by a BLAKE2 digest of
the draw's *signature* (the numbers of a computation graph, the words of a question), so the two never
share a problem whatever ``n`` is; a held-out draw is taken as it comes (held-out problems differ by
their knobs, such as length).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TypeVar

from prmkit.core.seeds import derive_seed

SPLITS = ("train", "test", "heldout")

Draw = TypeVar("Draw")


def require_split(split: str) -> None:
    """Fail, naming the three, when ``split`` is not one of :data:`SPLITS`."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")


def problem_rng(tag: str, seed: int, split: str, index: int) -> random.Random:
    """The random stream of problem ``index`` of ``split`` (its own, so it does not depend on how many
    others are generated), seeded from ``(tag, seed, split, index)``; an unknown split fails first."""
    require_split(split)
    return random.Random(derive_seed(tag, seed, split, index))


def in_test_bucket(signature: str, fraction: float) -> bool:
    """Whether the problem of ``signature`` falls in the share ``fraction`` of the space kept for test."""
    return derive_seed("bucket", signature) / 2**64 < fraction


def draw_in_split(
    split: str, test_fraction: float, draw: Callable[[], Draw], signature: Callable[[Draw], str]
) -> Draw:
    """The first of ``draw()``'s draws that belongs to ``split`` (its signature is read for train / test)."""
    while True:
        found = draw()
        if split == "heldout" or in_test_bucket(signature(found), test_fraction) == (split == "test"):
            return found

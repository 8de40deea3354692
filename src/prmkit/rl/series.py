"""Which series of the monitors' points is gold: read by the warnings (monitors.py) and the plot (plot.py),
so neither imports the other for it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def gold_key(points: Sequence[dict[str, Any]]) -> str:
    """The gold series of a run: process-correct rate where the world judged, else answer accuracy."""
    return "process_correct" if points and "process_correct" in points[-1] else "answer_accuracy"

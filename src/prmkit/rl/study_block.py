"""The RL study as the docs show it: a block rendered from a committed results file.

``<!-- results: docs/results/rl-measure.json view=rl-measure tuned=0 -->`` ... ``<!-- /results -->`` in a
page is replaced by :func:`render_measure_block` of that file (``tuned`` names the draws whose monitor
problems the settings were tuned on): the view ``rl-measure`` of :mod:`prmkit.core.results`, registered
here; ``python experiments/render_results.py`` re-renders every results block of the docs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prmkit.core.results import VIEWS, Block
from prmkit.core.stats import multiplicity
from prmkit.rl.study import METRICS, PAIRED

BLOCK_DELTAS = ("process_correct", "answer_accuracy", "lucky", "prm_reward", "misconception")
"""The changes from π0 the block shows per reward (the report has every metric)."""


def _cells(row: dict[str, Any], keys: Sequence[str]) -> list[str]:
    return [row.get(m, {}).get("cell", "–") for m in keys]


def render_measure_block(results: dict[str, Any], tuned: Sequence[str] = ()) -> str:
    """The study as the docs show it: what went in, each reward's π0 level, change and KL over every
    draw, then each reward's change and its difference from outcome over every draw and in each draw
    alone (a draw in ``tuned`` is marked as read during tuning; the others are fresh), and the
    multiplicity of the intervals shown (a value with no spread, e.g. a rate 0 in every run, has none)."""
    rewards, alone = results["rewards"], results.get("per_draw") or {}
    head = ["π0 process-correct", *(f"Δ {METRICS[m]}" for m in BLOCK_DELTAS), "KL to π0"]
    lines = [
        "| reward | runs | " + " | ".join(head) + " |",
        "|---|---|" + "---|" * len(head),
    ]
    shown = 0
    for name, row in rewards.items():
        runs = row["delta"]["process_correct"]["draws"].get("run", "")
        cells = [row["first"]["process_correct"]["cell"], *_cells(row["delta"], BLOCK_DELTAS)]
        cells.append(row.get("kl_last", {}).get("cell", "–"))
        shown += sum("[" in c for c in cells)
        lines.append(f"| {name} | {runs} | " + " | ".join(cells) + " |")

    def label(d: str) -> str:
        return f"draw {d} ({'its problems read in tuning' if d in tuned else 'fresh: claims'})"

    pooled = {"rewards": {n: {"delta": r["delta"]} for n, r in rewards.items()}, "paired": results["paired"]}
    sets = [("all draws", pooled)] + [(label(d), one) for d, one in alone.items()]
    lines += [
        "",
        "| Δ from π0, or difference from outcome's Δ | draws | " + " | ".join(PAIRED.values()) + " |",
        "|---|---|" + "---|" * len(PAIRED),
    ]
    for name in [*rewards, *results["paired"]]:
        for title, one in sets:
            row = one["rewards"].get(name, {}).get("delta") or one["paired"].get(name)
            if not row:
                continue
            cells = _cells(row, list(PAIRED))
            shown += sum("[" in c for c in cells)
            lines.append(f"| {name} | {title} | " + " | ".join(cells) + " |")
    return f"{results['draws']}\n\n" + "\n".join(lines) + f"\n\nThis block: {multiplicity(shown)}\n"


def measure_view(block: Block) -> str:
    """The ``rl-measure`` results view: :func:`render_measure_block` of the block's file, ``tuned=D,D``
    naming the draws read while tuning."""
    block.expect("tuned")
    tuned = block.attrs.get("tuned", "")
    return render_measure_block(block.result, tuned.split(",") if tuned else ())


VIEWS.register("rl-measure", measure_view)

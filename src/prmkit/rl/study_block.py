"""The RL study as the docs show it: a block rendered from a committed results file.

``<!-- rl-measure: docs/results/rl-measure.json tuned=0 -->`` ... ``<!-- /rl-measure -->`` in a page is
replaced by :func:`render_measure_block` of that file (``tuned`` names the draws whose monitor problems
the settings were tuned on); :func:`render_measure_blocks` re-renders every such block of a page, and
``python -m prmkit.rl.study_block docs/rl.md docs/results.md`` rewrites them in place.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prmkit.core.stats import multiplicity
from prmkit.rl.study import METRICS, PAIRED

MEASURE_BLOCK = re.compile(
    r"(?s)(<!-- rl-measure: (?P<file>\S+)(?: tuned=(?P<tuned>[\d,]+))? -->\n).*?(<!-- /rl-measure -->)"
)
"""A docs block rendered from a committed ``results.json`` of the study (:func:`render_measure_block`)."""
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


def render_measure_blocks(text: str, root: Path) -> str:
    """``text`` with every rl-measure block re-rendered from its file (a path relative to ``root``)."""

    def one(m: re.Match[str]) -> str:
        results = json.loads((root / m["file"]).read_text(encoding="utf-8"))
        tuned = m["tuned"].split(",") if m["tuned"] else []
        return m[1] + render_measure_block(results, tuned) + m[4]

    return MEASURE_BLOCK.sub(one, text)


def main(pages: Sequence[str]) -> None:
    """Rewrite each page's rl-measure blocks in place (paths in the blocks are relative to the working
    folder: run it from the repository's root)."""
    for page in map(Path, pages):
        text = page.read_text(encoding="utf-8")
        new = render_measure_blocks(text, Path.cwd())
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"re-rendered {page}")


if __name__ == "__main__":
    main(sys.argv[1:])

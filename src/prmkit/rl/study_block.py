"""The RL study as the docs show it: a block rendered from a committed results file.

``<!-- results: docs/results/rl-measure.json view=rl-measure tuned=0 -->`` ... ``<!-- /results -->`` in a
page is replaced by :func:`render_measure_block` of that file (``tuned`` names the draws whose monitor
problems the settings were tuned on; ``gain=0.05`` adds the column of steps each run took to that
process-correct gain): the view ``rl-measure`` of :mod:`prmkit.core.results`, registered here;
``python experiments/render_results.py`` re-renders every results block of the docs. A file with claims
draws (``sides``, issue 60) shows its tuning and claims sides in place of each draw alone, with the claims
verdict of every difference from outcome; a file with ``sample_efficiency`` adds each run's steps to
outcome's final answer accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prmkit.core.results import MISSING, VIEWS, Block
from prmkit.core.stats import multiplicity
from prmkit.rl.study import METRICS, PAIRED, SIDES, verdict_cell

BLOCK_DELTAS = ("process_correct", "answer_accuracy", "lucky", "prm_reward", "misconception")
"""The changes from π0 the block shows per reward (the report has every metric)."""


def _cells(row: dict[str, Any], keys: Sequence[str]) -> list[str]:
    return [row.get(m, {}).get("cell", MISSING) for m in keys]


def _steps(results: dict[str, Any], name: str, gain: float) -> str:
    """The steps each run of ``name`` took to ``gain`` over step 0 (``–``: never at a monitored point),
    blank where the file has none for it (extra cells)."""
    per_run = results.get("steps_to_gain", {}).get(name, {}).get(str(gain))
    if per_run is None:
        return ""
    return ", ".join(MISSING if per_run[run] is None else str(per_run[run]) for run in sorted(per_run))


def _rows(results: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every reward's row and every paired difference: the grid's, then the extra cells' (measured on the
    grid's problems)."""
    extra = results.get("extra") or {}
    return {**results["rewards"], **extra.get("rewards", {})}, {
        **results["paired"],
        **extra.get("paired", {}),
    }


def _efficiency(results: dict[str, Any], name: str) -> str | None:
    """The steps each run of ``name`` took to outcome's final answer accuracy on its draw and seed (``–``:
    not reached), blank where the file has none for it; None where the file has no sample efficiency."""
    found = results.get("sample_efficiency") or {}
    if not found:
        return None
    per_run = found["steps"].get(name, {})
    return ", ".join(MISSING if per_run[run] is None else str(per_run[run]) for run in sorted(per_run))


def _levels(results: dict[str, Any], rewards: dict[str, Any], gain: float | None) -> tuple[list[str], int]:
    """The first table (each cell's π0 level, changes and KL over every draw, the optional step columns)
    and how many intervals it shows."""
    head = ["π0 process-correct", *(f"Δ {METRICS[m]}" for m in BLOCK_DELTAS), "KL to π0"]
    if gain is not None:
        head.append(f"steps to +{100 * gain:g} points process-correct, per run")
    efficiency = _efficiency(results, "") is not None
    if efficiency:
        head.append("steps to outcome's final answer accuracy, per run (–: not reached)")
    lines = ["| reward | runs | " + " | ".join(head) + " |", "|---|---|" + "---|" * len(head)]
    shown = 0
    for name, row in rewards.items():
        runs = row["delta"]["process_correct"]["draws"].get("run", "")
        cells = [row["first"]["process_correct"]["cell"], *_cells(row["delta"], BLOCK_DELTAS)]
        cells.append(row.get("kl_last", {}).get("cell", MISSING))
        shown += sum("[" in c for c in cells)
        cells += [_steps(results, name, gain)] if gain is not None else []
        cells += [_efficiency(results, name) or ""] if efficiency else []
        lines.append(f"| {name} | {runs} | " + " | ".join(cells) + " |")
    return lines, shown


def _sets(
    results: dict[str, Any], rewards: dict[str, Any], pairs: dict[str, Any], tuned: Sequence[str]
) -> list[tuple[str, dict[str, Any]]]:
    """The sets the second table shows each change and difference in: with claims draws the tuning and
    claims sides (and the extra cells, on draw 0); else every draw pooled, then each draw alone."""
    split = results.get("sides") or {}
    if split:
        found = [(f"{side}: draw(s) {', '.join(map(str, split[side]['draws']))}", split[side])
                 for side in SIDES if side in split]  # fmt: skip
        extra = results.get("extra") or {}
        if extra:
            rows = {n: {"delta": r["delta"]} for n, r in extra["rewards"].items()}
            found.append(("extra cells: draw 0", {"rewards": rows, "paired": extra["paired"]}))
        return found

    def label(d: str) -> str:
        return f"draw {d} ({'its problems read in tuning' if d in tuned else 'fresh: claims'})"

    pooled = {"rewards": {n: {"delta": r["delta"]} for n, r in rewards.items()}, "paired": pairs}
    return [("all draws", pooled)] + [(label(d), one) for d, one in (results.get("per_draw") or {}).items()]


def render_measure_block(
    results: dict[str, Any], tuned: Sequence[str] = (), gain: float | None = None
) -> str:
    """The study as the docs show it: what went in, each reward's (and extra cell's) π0 level, change and
    KL over every draw (with ``gain``, the steps each run took to that process-correct gain; with the
    file's sample efficiency, each run's steps to outcome's final answer accuracy), then each change and
    difference from outcome (or from the extra cell's own reward) over every draw and in each draw alone
    (a draw in ``tuned`` is marked as read during tuning; the others are fresh), or, where the file has
    claims draws, on the tuning side and the claims side with the claims verdict of each difference (its
    interval above 0, below 0 or containing 0), and the multiplicity of the intervals shown (a value with
    no spread, e.g. a rate 0 in every run, has none)."""
    rewards, pairs = _rows(results)
    lines, shown = _levels(results, rewards, gain)
    claims = bool(results.get("sides"))
    versus = "difference of two Δs (paired)" if results.get("extra") else "difference from outcome's Δ"
    verdict_head = " claims verdict (the difference's interval against 0) |" if claims else ""
    lines += [
        "",
        f"| Δ from π0, or {versus} | draws | " + " | ".join(PAIRED.values()) + f" |{verdict_head}",
        "|---|---|" + "---|" * (len(PAIRED) + claims),
    ]
    sets = _sets(results, rewards, pairs, tuned)
    for name in [*rewards, *pairs]:
        for title, one in sets:
            row = one["rewards"].get(name, {}).get("delta") or one["paired"].get(name)
            if not row:
                continue
            cells = _cells(row, list(PAIRED))
            shown += sum("[" in c for c in cells)
            if claims:
                verdicts = one.get("verdicts", {}).get(name) if one.get("side") == "claims" else None
                cells.append(verdict_cell(verdicts) if verdicts else "")
            lines.append(f"| {name} | {title} | " + " | ".join(cells) + " |")
    return f"{results['draws']}\n\n" + "\n".join(lines) + f"\n\nThis block: {multiplicity(shown)}\n"


def measure_view(block: Block) -> str:
    """The ``rl-measure`` results view: :func:`render_measure_block` of the block's file, ``tuned=D,D``
    naming the draws read while tuning, ``gain=G`` the process-correct gain whose steps it shows."""
    block.expect("tuned", "gain")
    tuned = block.attrs.get("tuned", "")
    gain = block.attrs.get("gain")
    return render_measure_block(
        block.result, tuned.split(",") if tuned else (), None if gain is None else float(gain)
    )


VIEWS.register("rl-measure", measure_view)

"""The scoring benchmarks' results views: how docs show ``bench/results/released-*.json``.

Each view renders one ``<!-- results: FILE view=NAME ... -->`` block (:mod:`prmkit.core.results`) from a
file a benchmark wrote, one run per file, so the table names its file and the run's date:

- ``released`` (``date=YYYY-MM-DD``: the file's name carries none): ``bench/bench_released.py``'s run,
  every released convention read by prmkit's ``score`` against the model's own forward pass on the same
  padded batches, per model shape: tokens/s, their ratio, peak memory above the weights, and how far
  bf16 moves a step score from fp32.

:func:`run_date` (which run a bench table shows) serves the benchmarks' views of the packages above too
(``training/views.py``, ``serving/views.py``).
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any

from prmkit.core.results import VIEWS, Block, Table

DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
"""A run's date as a results file's name carries it (``train-cpu-2026-11-26.json``)."""
GOAL = 0.9
"""``bench/bench_released.py``'s goal for prmkit's tokens/s over the raw forward pass's."""


def run_date(block: Block, file: str | None = None) -> str:
    """The date of the run a bench results file records: the block's ``date`` attribute, else the date in
    the file's name (``file``, default the block's); a file with neither is refused, since a table of one
    run must say which run it shows."""
    file = file or block.file
    found = DATE.search(PurePath(file).name)
    if "date" in block.attrs and file == block.file:
        return block.attrs["date"]
    if not found:
        raise ValueError(f"{file}: no date in the file's name; name the run's date (date=YYYY-MM-DD)")
    return found.group()


def _small(x: float, digits: int) -> str:
    """A small difference: ``digits`` decimals, or one significant digit (``6e-8``) below a thousandth."""
    return f"{x:.{digits}f}" if x >= 1e-3 or x == 0 else f"{x:.0e}".replace("e-0", "e-")


def _bf16(row: dict[str, Any]) -> str:
    """bf16's largest and mean difference from fp32 in a step score, and the share of steps it moves
    across 0.5; empty where the run did not compare them."""
    if "bf16_vs_fp32_max" not in row:
        return ""
    flips = f"{100 * row['bf16_vs_fp32_flips']:.1f} %" if row["bf16_vs_fp32_flips"] else "0"
    return f"{_small(row['bf16_vs_fp32_max'], 3)} / {_small(row['bf16_vs_fp32_mean'], 4)}; {flips}"


def released_table(result: dict[str, Any], file: str, date: str) -> str:
    """``bench/bench_released.py``'s run: one row per model shape and convention, larger shapes first;
    the ratio is bold where it meets :data:`GOAL`."""
    rows = []
    for row in sorted(result["rows"], key=lambda r: r["size"] != "7B"):
        ratio = f"{row['ratio']:.3f}"
        rows.append(
            [
                row["size"],
                row["convention"],
                f"{row['raw_tok_s']:,.0f}",
                f"{row['prmkit_tok_s']:,.0f}",
                f"**{ratio}**" if row["ratio"] >= GOAL else ratio,
                f"{row['raw_peak_gib']:.2f} / {row['prmkit_peak_gib']:.2f}",
                _bf16(row),
            ]
        )
    columns = [
        "shape",
        "convention",
        "raw forward tok/s",
        "prmkit tok/s",
        f"ratio (goal ≥ {GOAL})",
        "peak GiB above weights, raw / prmkit",
        "bf16 − fp32 step score, max / mean; steps across 0.5",
    ]
    note = (
        f"One run: `{PurePath(file).name}` ({date}, {result['device']}, torch {result['torch']}, "
        f"transformers {result['transformers']}; {result['traces']} traces × {result['steps']} steps, "
        f"{result['tokenizer']} tokenizer)."
    )
    return Table(rows, columns=columns, notes=[note]).markdown() + "\n"


@VIEWS.register("released")
def released(block: Block) -> str:
    """The ``released`` view: :func:`released_table` of the block's file, dated by its ``date``."""
    block.expect("date")
    return released_table(block.result, block.file, run_date(block))

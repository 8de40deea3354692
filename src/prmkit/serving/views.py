"""The reward server's benchmark view: how docs show ``bench/results/serving-*.json``.

One view renders a ``<!-- results: FILE view=serving -->`` block (:mod:`prmkit.core.results`) from the
file ``bench/bench_serving.py --out`` wrote, one run, so the table names its file and date:

- ``serving``: per model and number of concurrent clients, the batched and the unbatched server's
  requests/s, p50 / p99 latency and CPU per request (the server's, and of it the scorer's), and the ratio
  of their requests/s.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any

from prmkit.core.results import VIEWS, Block, Table
from prmkit.scoring.views import run_date

TINY = re.compile(r"(?P<layers>\d+) layers x width (?P<width>\d+), (?P<heads>\d+) heads")
SIMULATED = re.compile(r"SIMULATED accelerator: (?P<ms>\d+) ms")


def model_name(section: str) -> str:
    """A section's model as the benchmark's ``--model-size`` names it (``2x64x2``: layers x width x
    heads), ``SIMULATED 20 ms`` for the simulated accelerator, else the section's own text."""
    if m := TINY.search(section):
        return f"{m['layers']}x{m['width']}x{m['heads']}"
    if m := SIMULATED.search(section):
        return f"SIMULATED {m['ms']} ms"
    return section


def _mode(row: dict[str, Any]) -> list[str]:
    return [
        f"{row['rps']:.1f}",
        f"{row['p50_ms']:.1f} / {row['p99_ms']:.1f}",
        f"{row['server_cpu_ms']:.2f} / {row['scorer_cpu_ms']:.2f}",
    ]


def serving_table(rows: list[dict[str, Any]], file: str, date: str) -> str:
    """One run of ``bench/bench_serving.py``: the batched and unbatched rows of each model and client
    count side by side, with batched / unbatched requests/s."""
    cells: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
    for row in rows:
        cells.setdefault((model_name(row["section"]), row["clients"]), {})[row["mode"]] = row
    table = []
    for (model, clients), modes in cells.items():
        batched, unbatched = modes["batched"], modes["unbatched"]
        ratio = f"{batched['rps'] / unbatched['rps']:.2f}x"
        table.append([model, clients, *_mode(batched), *_mode(unbatched), ratio])
    columns = ["model", "clients", "batched req/s", "p50 / p99 ms", "CPU ms", "unbatched req/s"]
    columns += ["p50 / p99 ms", "CPU ms", "ratio"]
    errors = sum(r["errors"] for r in rows)
    note = (
        f"One run: `{PurePath(file).name}` ({date}); CPU ms per request: the server process's / of it the "
        f"scorer's; {sum(r['requests'] for r in rows):,} requests, {errors} errors."
    )
    return Table(table, columns=columns, notes=[note]).markdown() + "\n"


@VIEWS.register("serving")
def serving(block: Block) -> str:
    """The ``serving`` view: :func:`serving_table` of the block's file."""
    block.expect("date")
    return serving_table(block.result, block.file, run_date(block))

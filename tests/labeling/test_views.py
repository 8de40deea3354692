"""prmkit.labeling.views' ``rollouts-bench`` view: docs/labeling.md's throughput blocks are what the committed
``bench/bench_rollouts.py`` files render, and every number they show is the file's (rates to the
rollout, CPU to the microsecond, ratios to the hundredth)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prmkit.core.results import BlockError, render_blocks
from prmkit.labeling.views import (
    rollouts_before_after,
    rollouts_bench,
    rollouts_cells,
    rollouts_clients,
    rollouts_goals,
)
from tests.experiments import ROOT, shown


def _file(name: str) -> dict:
    return json.loads((ROOT / "bench" / "results" / name).read_text(encoding="utf-8"))


def _rows(body: str) -> list[list[str]]:
    """The cells of the Markdown table rows in ``body`` (header and rule left out)."""
    lines = [line for line in body.splitlines() if line.startswith("|")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]


def test_the_labeling_page_shows_what_the_committed_files_render() -> None:
    blocks = shown("docs/labeling.md", "rollouts-bench")
    assert [(b.file, b.attrs["tables"]) for b, _ in blocks] == [
        ("bench/results/rollouts-cpu-2026-11-26.json", "cells,goals"),
        ("bench/results/rollouts-cpu-2026-11-29.json", "goals,clients"),
        ("bench/results/rollouts-before-after-2026-11-26.json", "before-after"),
    ]
    assert all(rollouts_bench(block) == body for block, body in blocks)


def test_every_cell_is_the_files_with_its_repeats_side_by_side() -> None:
    result = _file("rollouts-cpu-2026-11-26.json")
    rows = _rows(rollouts_cells(result))
    measured = [r for r in result["rows"] if not r.get("profiled")]
    assert len(rows) == len({(r["answers"], r["concurrency"], r["work_dir"]) for r in measured})
    for row in rows:
        answers = "latex" if row[0] == "LaTeX" else "numeric"
        work_dir = row[0].endswith("`work_dir`")
        runs = [
            r
            for r in measured
            if (r["answers"], str(r["concurrency"]), r["work_dir"]) == (answers, row[1], work_dir)
        ]
        assert runs and row[2:] == [
            " / ".join(f"{r[k]:,.0f}" for r in runs) if any(r[k] for r in runs) else "-"
            for k in ("rollouts_per_s", "client_cpu_us", "workers_cpu_us", "server_cpu_us")
        ]
    # the profiled run (slowed by its profiler) shares numeric C=64's key but is not one of its repeats
    assert any(r.get("profiled") for r in result["rows"])
    assert next(row for row in rows if row[:2] == ["numeric", "64"])[2].count(" / ") == 1


def test_the_goals_line_states_the_files_best_rates_and_ratios() -> None:
    result = _file("rollouts-cpu-2026-11-26.json")
    line = rollouts_goals(result)
    assert (
        f"{result['numeric_best']:,.0f} rollouts/s, {result['numeric_ratio']:.2f} of the 5,000 goal" in line
    )
    assert f"{result['latex_ratio']:.2f} of 0.8 × 2 cores / {result['prmkit_math_verify_us']:.0f} µs" in line
    assert f"= {result['latex_goal']:,.0f} rollouts/s" in line


def test_the_client_table_is_the_files_ratios() -> None:
    result = _file("rollouts-cpu-2026-11-29.json")
    rows = _rows(rollouts_clients(result))
    ratios = result["ratio_to_httpx_client"]
    assert len(rows) == len(ratios)
    for row, (key, r) in zip(rows, ratios.items(), strict=True):
        assert row[1] == key.split(" C=")[1]
        assert row[2:] == [f"{r['http.client']:,.0f}", f"{r['httpx']:,.0f}", f"{r['ratio']:.2f}×"]


def test_before_and_after_are_paired_by_pass_answers_and_concurrency() -> None:
    result = _file("rollouts-before-after-2026-11-26.json")
    rows = _rows(rollouts_before_after(result))
    assert len(rows) == len(result["rows"]) // 2
    by_key = {(r["pass"], r["answers"], r["concurrency"], r["code"]): r for r in result["rows"]}
    for row in rows:
        answers = "latex" if row[1] == "LaTeX" else row[1]
        old = by_key[(int(row[0]), answers, int(row[2]), "before")]
        new = by_key[(int(row[0]), answers, int(row[2]), "after")]
        assert row[3:6] == [
            f"{old['rollouts_per_s']:,.0f}",
            f"{new['rollouts_per_s']:,.0f}",
            f"{new['rollouts_per_s'] / old['rollouts_per_s']:.2f}×",
        ]


def test_an_unknown_table_or_attribute_is_refused(tmp_path: Path) -> None:
    file = "bench/results/rollouts-cpu-2026-11-26.json"
    for attrs, message in (
        ("tables=cells,speed", r"unknown tables \['speed'\]"),
        ("set=claims", "unknown attributes"),
    ):
        page = f"<!-- results: {file} view=rollouts-bench {attrs} -->\n<!-- /results -->\n"
        with pytest.raises(BlockError, match=message):
            render_blocks(page, ROOT, page=str(tmp_path / "page.md"))

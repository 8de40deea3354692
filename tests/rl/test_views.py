"""prmkit.rl.views and the study block's extra cells: docs/rl.md's RL tables are rendered from the
committed results files, and every number a table shows is one of its file's numbers (in %, to the
decimal shown) or, for the causal monitor's paired change, a bootstrap recomputed here by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from prmkit.core.results import VIEWS, BlockError, render_blocks
from prmkit.core.stats import crossed_bootstrap
from prmkit.rl import views
from prmkit.rl.monitors import read_per_problem, read_points
from prmkit.rl.study_block import render_measure_block
from tests.experiments import ROOT, shown

DECIMAL = re.compile(r"[+-]?\d+\.\d+")
RESULTS = ROOT / "docs" / "results"
MONITOR = RESULTS / "rl-causal-monitor"


def _numbers(data: Any, scale: float = 100, digits: int = 1) -> set[float]:
    """Every float in a results file as a table shows it: times ``scale``, to ``digits`` decimals, both
    signs."""
    if isinstance(data, dict):
        return set().union(*(_numbers(v, scale, digits) for v in data.values())) if data else set()
    if isinstance(data, list):
        return set().union(*(_numbers(v, scale, digits) for v in data)) if data else set()
    if isinstance(data, float):
        return {round(scale * data, digits), round(-scale * data, digits)}
    return set()


def _cells(data: Any) -> set[str]:
    """Every rendered cell a results file holds (an estimate's ``"cell"``), at any depth."""
    if isinstance(data, dict):
        own = {data["cell"]} if isinstance(data.get("cell"), str) else set()
        return own.union(*(_cells(v) for v in data.values()))
    if isinstance(data, list):
        return set().union(*(_cells(v) for v in data)) if data else set()
    return set()


def _shown_numbers(body: str) -> list[float]:
    return [float(x) for x in DECIMAL.findall(body)]


def test_the_faithfulness_tables_are_their_files_numbers() -> None:
    tables = shown("docs/rl.md", "rl-faithfulness")
    assert [b.file for b, _ in tables] == [
        "docs/results/rl-faithfulness.json",
        "docs/results/rl-faithfulness-tuning.json",
    ]
    for block, body in tables:
        assert VIEWS.get("rl-faithfulness")(block) == body
        rows = block.result["rows"]
        numbers = _numbers(rows)
        table = [line for line in body.splitlines() if line.startswith("| ")][1:]
        assert len(table) == len(rows) and table[0].startswith("| π0 |")
        cells = _shown_numbers("\n".join(table))
        assert len(cells) >= 27 and all(x in numbers for x in cells)
    claims = tables[0][1]
    assert "| dense − outcome | -2.2 [-7.7, +2.9] |" in claims  # the file's early-answering difference
    assert claims.count("[") == 54 and "54 intervals at 95 % each" in claims
    assert "40 problems × 4 samples (160 traces per policy)" in claims
    tuning = tables[1][1]  # one column shown: its multiplicity counts the 9 intervals shown, not the file's
    assert "| policy | all |" in tuning and "9 intervals at 95 % each" in tuning


def _dependence_rates(run: str, step: int) -> tuple[np.ndarray, np.ndarray]:
    """A point's per-problem (sum of causal dependence, traces measured), straight from the file."""
    record = read_per_problem(MONITOR / run)[step]
    col = {name: i for i, name in enumerate(record["columns"])}
    rows = np.array([record["problems"][pid] for pid in sorted(record["problems"])], dtype=float)
    return rows[:, col["dependence"]], rows[:, col["dependence_traces"]]


def _paired_change(first: tuple[np.ndarray, np.ndarray], last: tuple[np.ndarray, np.ndarray]) -> Any:
    """The last point's rate minus π0's on the same problem weights, each the ratio of its own sums."""
    return lambda seed, w: (w @ last[0]) / (w @ last[1]) - (w @ first[0]) / (w @ first[1])


def test_the_causal_monitor_table_is_its_points_and_a_bootstrap_over_their_problems() -> None:
    [(block, body)] = shown("docs/rl.md", "rl-causal-monitor")
    assert views.causal_monitor(block) == body
    for run, warned in (("outcome-0", "at step 100"), ("dense-0", "none")):
        points = read_points(MONITOR / run / "monitors.jsonl")
        at = {p["step"]: 100 * p["causal_dependence"] for p in points}
        first, last = _dependence_rates(run, 0), _dependence_rates(run, 100)

        change = _paired_change(first, last)
        est = crossed_bootstrap(change, 1, len(first[0]), resamples=2000)
        reward = run.split("-")[0]
        row = f"| {reward}, seed 0 | {at[0]:.1f} | {at[50]:.1f} | {at[100]:.1f} | {est.cell(signed=True)} | {warned} |"
        assert row in body
        assert round(est.mean * 100, 1) == round(at[100] - at[0], 1)  # the change is the points' difference
    assert "48 traces a point" in body and "48 monitor problems (2000 resamples, 95 %)" in body


def test_the_dependence_warning_is_reported_at_the_first_point_that_fires() -> None:
    points = [
        {"step": 0, "causal_dependence": 0.80},
        {"step": 10, "causal_dependence": 0.75},
        {"step": 20, "causal_dependence": 0.65},  # 0.15 below π0's: fires here
        {"step": 30, "causal_dependence": 0.79},
    ]
    assert views.first_dependence_warning(points) == 20
    assert views.first_dependence_warning(points[:2]) is None


def test_the_causal_monitor_refuses_runs_that_end_at_different_steps(tmp_path: Path) -> None:
    for run, steps in (("a-0", (0, 10)), ("b-0", (0, 10, 20))):
        (tmp_path / run).mkdir()
        lines = [json.dumps({"step": s, "causal_dependence": 0.5, "dependence_traces": 1}) for s in steps]
        (tmp_path / run / "monitors.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="end at different steps"):
        views.causal_monitor_table(tmp_path, ["a-0", "b-0"])


def test_the_gpu_check_row_is_the_files_timed_steps() -> None:
    [(block, body)] = shown("docs/rl.md", "rl-gpu-check")
    assert views.gpu_check(block) == body
    result = block.result
    timed = result["steps"][result["settings"]["warmup"] :]
    seconds = [s["seconds"] for s in timed]
    shares = [100 * s["reward_share"] for s in timed]
    assert f"{np.mean(seconds):.1f} ({min(seconds):.1f}–{max(seconds):.1f})" in body
    assert f"{np.mean(shares):.1f} ({min(shares):.1f}–{max(shares):.1f})" in body
    assert round(np.mean(seconds), 6) == round(result["step_seconds"], 6)  # the file's own mean agrees
    assert f"| {result['peak_gpu_mb'] / 1024:.1f} |" in body and "| 64 (660) | 0 | 0 |" in body


def test_the_progress_block_shows_the_extra_cells_and_each_runs_steps_to_a_gain() -> None:
    [progress] = [(b, t) for b, t in shown("docs/rl.md", "rl-measure") if b.file.endswith("rl-progress.json")]
    block, body = progress
    assert VIEWS.get("rl-measure")(block) == body
    result = block.result
    cells = _cells(result)
    shown_cells = re.findall(r"[+-]?\d+\.\d+ \[[^\]]+\]", body)
    assert len(shown_cells) >= 60 and all(c in cells for c in shown_cells)
    for name, runs in result["steps_to_gain"].items():
        steps = ", ".join("–" if s is None else str(s) for _, s in sorted(runs["0.05"].items()))
        assert re.search(rf"^\| {name} \| .* \| {re.escape(steps)} \|$", body, re.M)
    for name in result["extra"]["rewards"]:  # extra cells: no steps recorded, the column left blank
        assert re.search(rf"^\| {name} \| 3 \| .* \|  \|$", body, re.M)
    assert "| progress_sum − progress | all draws | +23.1 [+13.7, +32.8] |" in body
    assert "| Δ from π0, or difference of two Δs (paired) |" in body


def test_the_study_block_without_extra_cells_or_gain_is_unchanged_by_them() -> None:
    measure = json.loads((RESULTS / "rl-measure.json").read_text(encoding="utf-8"))
    plain = render_measure_block(measure, tuned=["0"])
    assert "difference from outcome's Δ" in plain and "steps to" not in plain
    with_gain = render_measure_block(measure, tuned=["0"], gain=0.05)
    header = with_gain.split("\n")[2]
    assert header.endswith("| KL to π0 | steps to +5 points process-correct, per run |")
    assert "| outcome | 10 |" in with_gain and "–, –, –, –, –, 50, –, –, –, –" in with_gain


def test_an_rl_block_refuses_an_attribute_its_view_does_not_read() -> None:
    page = "<!-- results: docs/results/rl-faithfulness.json view=rl-faithfulness column=all -->\n<!-- /results -->\n"
    with pytest.raises(BlockError, match=r"unknown attributes \['column'\] of a rl-faithfulness block"):
        render_blocks(page, ROOT)


def test_a_claims_block_shows_only_its_files_numbers_and_the_claims_verdicts() -> None:
    """A study with a claims draw (issue 60): every interval the block shows is one of its file's, the
    claims rows carry the file's verdicts, and the tuning rows none."""
    from prmkit.rl.study_report import measure
    from tests.rl.test_study import REWARDS, _fabricate

    result = json.loads(json.dumps(measure(_fabricate(1), REWARDS, resamples=100, claims=[1])))
    body = render_measure_block(result)
    shown_cells = re.findall(r"[+-]?\d+\.\d+ \[[^\]]+\]", body)
    assert len(shown_cells) >= 20 and all(c in _cells(result) for c in shown_cells)
    claims = result["sides"]["claims"]
    for pair, verdicts in claims["verdicts"].items():
        said = "; ".join(f"{name} {verdicts[m]}" for m, name in
                         (("process_correct", "process-correct"), ("lucky", "lucky"), ("answer_accuracy", "answer accuracy")))  # fmt: skip
        assert re.search(rf"^\| {pair} \| claims: draw\(s\) 1 \| .* \| {said} \|$", body, re.M)
        assert re.search(rf"^\| {pair} \| tuning: draw\(s\) 0 \| .* \|  \|$", body, re.M)

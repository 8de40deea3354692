"""experiments/in_range.py: one run's values against a study's single-run ranges, value by value, as
README prints them (one decimal), with the exit status saying whether anything landed outside."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.experiments import ROOT, load_experiment

in_range = load_experiment("in_range")


def _est(mean: float, low: float | None = None, high: float | None = None) -> dict:
    est = {"mean": mean}
    if low is not None:
        est["single_run"] = [low, high]
    return est


def _study(f1: float, bon: float) -> dict:
    return {"claims": {"first_error": {"prm": {"F1 test": _est(f1, 0.80, 0.90)}},
                       "bon": {"majority vote": {"N=4": _est(bon, 0.50, 0.60)}}}}  # fmt: skip


def test_values_inside_and_outside_are_told_apart() -> None:
    study = _study(0.85, 0.55)
    run = _study(0.9004, 0.61)  # 90.0 rounds onto the top of its range; 61.0 lies above 60.0
    rows = in_range.compare(run, study, "claims")
    assert [(r["row"], r["metric"], r["value"], r["inside"]) for r in rows] == [
        ("prm", "F1 test", 90.0, True),
        ("majority vote", "N=4", 61.0, False),
    ]
    assert in_range.compare(run, study, "tuning") == []  # a set the study does not have


def test_a_value_the_run_did_not_measure_is_not_compared() -> None:
    run = {"claims": {"first_error": {"prm": {"F1 test": _est(0.85)}}, "bon": {}}}
    assert [r["metric"] for r in in_range.compare(run, _study(0.85, 0.55), "claims")] == ["F1 test"]


def test_the_committed_sweep_holds_its_own_means(tmp_path: Path) -> None:
    """Every mean of the README's study lies in its own single-run range: the script's exit status on
    the file against itself is 0, and a run with one value moved out of range gives 1."""
    study = ROOT / "docs" / "results" / "world-seeds.json"
    script = ROOT / "experiments" / "in_range.py"
    done = subprocess.run([sys.executable, script, study, study], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "claims set:" in done.stdout and "outside" not in done.stdout
    moved = json.loads(study.read_text(encoding="utf-8"))
    moved["claims"]["first_error"]["orm"]["F1 world-test"]["mean"] = 1.5
    (tmp_path / "run.json").write_text(json.dumps(moved), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, script, tmp_path / "run.json", study], capture_output=True, text=True
    )
    assert done.returncode == 1
    assert "| orm | F1 world-test | 150.0 |" in done.stdout and "**outside**" in done.stdout

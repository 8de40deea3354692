"""experiments/unseen_misconceptions.py: per first-error class, the traces a PRM flags and the first errors
it finds exactly, for two sets of seed models on the same traces, and their paired differences. Read with
the world's oracle standing in for both (the counts it must give are known: every error found)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.experiments import load_experiment


def test_the_oracle_for_both_finds_every_error_and_the_differences_are_zero(
    tmp_path: Path, monkeypatch
) -> None:
    from prmkit.scoring import load_scorer

    script = load_experiment("unseen_misconceptions")
    for s in (0, 1):
        (tmp_path / "sweep" / f"seed-{s}" / "stages" / "prm-gold-x" / "model").mkdir(parents=True)
    oracle = load_scorer("arithmetic-oracle")
    monkeypatch.setattr("prmkit.scoring.load_scorer", lambda path, **_: oracle)
    monkeypatch.setattr(script, "MEASURED", script.MEASURED | {"problems": 6, "per_problem": 4})
    result = script.measure(tmp_path / "sweep", tmp_path / "out", [0, 1])
    assert result["draws"] == {"seed": 2, "problem": 6}
    for rate in ("misconception flagged", "misconception found exactly", "other class found exactly"):
        cells = result[rate]
        assert cells["traces"] > 0 and cells["demo"]["mean"] == cells["no_misconceptions"]["mean"] == 1.0
        assert cells["no_misconceptions − demo"]["mean"] == pytest.approx(0.0)

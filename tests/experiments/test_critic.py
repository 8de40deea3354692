"""experiments/critic.py at its smoke size: the critic trained at a label budget, the PRMs on every label,
every model measured and the verifier-compute curve written, with the filter set declared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prmkit.evaluation.views import critic_table
from tests.experiments import load_experiment


@pytest.mark.slow
def test_the_smoke_run_measures_every_model_and_the_compute_curve(tmp_path: Path) -> None:
    exp = load_experiment("critic")
    result = exp.main(["--out", str(tmp_path), "--smoke", "--threads", "1"])
    assert set(result["models"]) == {"likelihood", "classifier"} and set(result["compute"]) == {"1", "2"}
    row = result["compute"]["2"]["test"]
    assert 0 <= row["f1"] <= 1 and row["cpu_seconds"] > 0
    card = result["critic_card"]
    assert card["critic"]["filter_traces"] == 12 and card["gold_use"][-1]["use"] == "chain_filter"
    assert json.loads((tmp_path / "critic-1234.json").read_text())["budget"] == 0.25
    # the committed summary: intervals over problems, the critic paired with the likelihood PRM
    summary = exp.summarise(tmp_path / "critic-1234.json", resamples=50)
    row = summary["rows"]["critic k=2"]["heldout"]
    assert set(row) == {
        "f1",
        "auroc",
        "misconception_f1",
        "cpu_seconds",
        "auroc_minus_likelihood",
        "f1_minus_likelihood",
    }
    assert row["auroc"]["draws"] == {"problem": 4} and "intervals at 95 %" in summary["multiplicity"]
    auroc = result["compute"]["2"]["heldout"]["auroc"]  # the library's AUROC is the experiment's own
    assert row["auroc"]["mean"] == pytest.approx(auroc, nan_ok=True)
    assert critic_table(summary).count("\n| critic k=") == 2

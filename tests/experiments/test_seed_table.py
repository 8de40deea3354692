"""experiments/seed_table.py: the committed monitorability and transfer files of the demo's models tabulate
as docs/evaluation.md shows them, and fabricated seeds give their mean and range."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.experiments import ROOT, load_experiment


def _view(view: str, tpr: float, f1: float | None) -> dict:
    rate = {"mean": tpr, "low": tpr, "high": tpr}
    first = {"f1": f1, "auroc": None} if f1 is not None else {}
    return {"view": view, "tpr": rate, "tnr": rate, "g_mean2": rate, "first_error": first}


def test_mean_and_range_over_seeds(tmp_path: Path) -> None:
    table = load_experiment("seed_table")
    for seed, (tpr, f1) in enumerate([(0.5, 0.25), (0.7, 0.75)]):
        folder = tmp_path / f"prm-seed{seed}"
        folder.mkdir()
        views = [_view("raw", tpr, f1), _view("answer", 0.0, None)]
        (folder / "monitorability.json").write_text(json.dumps({"views": views}))
    numbers = table.collect(tmp_path)
    raw = {c: table.summary(v) for c, v in numbers["prm"]["raw"].items()}
    assert raw["TPR"] == {"mean": pytest.approx(0.6), "min": 0.5, "max": 0.7, "seeds": 2}
    assert raw["AUROC"]["seeds"] == 0 and table.cell(raw["AUROC"]) == "n/a"
    assert table.cell(raw["first-error F1"]) == "50.0 (25.0 – 75.0)"
    answer = {c: table.summary(v) for c, v in numbers["prm"]["answer"].items()}
    assert answer["first-error F1"]["seeds"] == 0  # a view without a first-error value is left out


@pytest.mark.parametrize("kind", ["monitorability", "transfer"])
def test_the_docs_table_is_what_the_committed_files_give(kind: str) -> None:
    table = load_experiment("seed_table")
    folder = ROOT / "docs" / "results" / kind / "demo"
    numbers = {
        model: {row: {c: table.summary(v) for c, v in cols.items()} for row, cols in rows.items()}
        for model, rows in table.collect(folder).items()
    }
    docs = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    assert table.table(numbers) in docs
    assert len(numbers) == 4 and all(len(rows) == 4 for rows in numbers.values())
    assert all(
        len(v) == 5
        for rows in table.collect(folder).values()
        for cols in rows.values()
        for v in cols.values()
    )

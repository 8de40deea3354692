"""experiments/label_budget.py: a budget sweep's study file becomes the results file, the table (with the
budget each source and head needs for 90 % of its full-data held-out F1, :mod:`prmkit.labeling.views`)
and the plot."""

from __future__ import annotations

import json
from pathlib import Path

from prmkit.core.results import render_blocks
from prmkit.labeling.views import budget_class_table, budget_curves, budget_table, label_budget, reaches
from tests.experiments import ROOT, load_experiment, shown


def _est(mean: float) -> dict:
    return {"mean": mean, "low": mean - 0.05, "high": mean + 0.05, "single_run": [mean - 0.1, mean + 0.1]}


def _study() -> tuple[dict, dict]:
    first_error = {"lm (zero-shot)": {"F1 world-heldout": _est(0.3), "AUROC world-heldout": _est(0.6)}}
    heldout = {"gold": (0.2, 0.5, 0.8, 0.85), "judge": (0.1, 0.2, 0.3, 0.6)}
    for source, values in heldout.items():
        for budget, value in zip(("0.1", "1", "10", "100"), values, strict=True):
            first_error[f"prm-{source}-likelihood-{budget}pct"] = {
                "F1 world-heldout": _est(value), "AUROC world-heldout": _est(value + 0.1),
                "F1 world-test": _est(value + 0.05), "AUROC world-test": _est(value + 0.1),
            }  # fmt: skip
    study = {
        "seeds": [0, 1, 2],
        "tuning": {
            "evaluate_seed": 1234,
            "first_error": first_error,
            "multiplicity": "n intervals.",
            "paired": {"prm-gold-likelihood-10pct − lm (zero-shot): AUROC world-heldout": _est(0.3)},
        },
    }
    sweep = {
        "metrics": {
            "first-error F1 world-test misconception": {"prm-gold-likelihood-1pct": [0.5, 0.6, 0.7]},
            "first-error F1 world-heldout misconception": {
                "prm-gold-likelihood-1pct": [0.2, 0.4, None],
                "prm-gold-likelihood-100pct": [0.8, 0.9, 1.0],
                "lm (zero-shot)": [0.0, 0.1, 0.2],
            },
            "first-error F1 world-heldout": {"prm-gold-likelihood-1pct": [0.5, 0.6, 0.7]},
        }
    }
    return study, sweep


def test_the_table_names_the_budget_that_reaches_90_percent(tmp_path: Path) -> None:
    exp = load_experiment("label_budget")
    result = exp.collect(*_study())
    assert set(result["sets"]) == {"tuning"} and "lm (zero-shot)" in result["sets"]["tuning"]["rows"]
    curves = budget_curves(result, "tuning", "F1 world-heldout")
    assert list(curves) == [("gold", "likelihood"), ("judge", "likelihood")]
    assert reaches(curves[("gold", "likelihood")]) == 10.0  # 0.80 >= 0.9 x 0.85
    assert reaches(curves[("judge", "likelihood")]) == 100.0
    table = budget_table(result, "tuning")
    f1, auroc = table.split("Held-out first-error AUROC")
    assert "| gold | likelihood | 20.0 [15.0, 25.0] | 50.0 [45.0, 55.0] | 80.0 [75.0, 85.0] |" in f1
    assert "| 85.0 [80.0, 90.0] | 10 % |" in f1  # the gold row at 100 %, then its 90 % budget
    assert "| judge | likelihood |" in f1 and f1.rstrip().endswith("| 100 % |")
    assert "F1 (no labels, the zero-shot LM: 30.0 [25.0, 35.0]):" in f1
    # AUROC: 90 % of the full-data value above chance (0.5): gold 0.5 + 0.9 x 0.45 = 0.905 -> 100 %
    assert "| 95.0 [90.0, 100.0] | 100 % |" in auroc and "| 60.0 [55.0, 65.0] |" in auroc
    assert reaches({1.0: {"mean": 0.7}, 100.0: {"mean": 0.72}}, floor=0.5) == 1.0  # 0.7 >= 0.698
    assert reaches({1.0: {"mean": 0.65}, 100.0: {"mean": 0.72}}, floor=0.5) == 100.0
    assert "19 intervals at 95 % each" in table  # 2 metrics x (2 x 4 budgets + the zero-shot LM) + 1 paired
    paired = table.split("Paired against the zero-shot LM")[1]
    assert "| gold | likelihood | – | – | +30.0 [+25.0, +35.0] | – |" in paired
    assert result["by_class_tuning_f1_per_seed"]["test"] == {
        "gold/likelihood/1": {"misconception": [0.5, 0.6, 0.7]}
    }
    classes = budget_class_table(result)
    assert (
        "| gold | likelihood | 30.0 (20.0–40.0) | 90.0 (80.0–100.0) |" in classes
    )  # a missing seed left out
    assert "no labels (the zero-shot LM): 10.0 (0.0–20.0)" in classes
    exp.plot(result, tmp_path / "budget.png")
    assert (tmp_path / "budget.png").read_bytes()[:4] == b"\x89PNG"
    results = tmp_path / "r.json"
    results.write_text(json.dumps(result))
    head = f"<!-- results: {results.name} view=label-budget set=tuning by_class=misconception -->\n"
    doc = f"x\n{head}old\n<!-- /results -->\n"
    assert render_blocks(doc, tmp_path) == doc.replace("old\n", table + "\n" + classes)


def test_the_docs_blocks_are_what_the_committed_results_file_gives() -> None:
    """docs/labeling.md's label-budget tables (claims and tuning set) are the committed file's rendering."""
    docs = (ROOT / "docs" / "labeling.md").read_text(encoding="utf-8")
    budget = shown("docs/labeling.md", "label-budget")
    assert {block.attrs["set"] for block, _ in budget} == {"claims", "tuning"}
    assert all(label_budget(block) == body for block, body in budget)
    result = json.loads((ROOT / "docs" / "results" / "label-budget.json").read_text(encoding="utf-8"))
    assert len(result["seeds"]) >= 3  # the minimum
    assert (ROOT / "docs" / "img" / "label-budget.png").exists() and "img/label-budget.png" in docs

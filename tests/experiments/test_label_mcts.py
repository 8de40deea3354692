"""experiments/label_mcts.py: a small run labels the same traces by every method with MCTS held to Monte
Carlo's budget, and docs/labeling.md shows what the committed results files render."""

from __future__ import annotations

from prmkit.labeling.views import label_mcts
from tests.experiments import load_experiment, shown


def test_a_small_run_holds_mcts_to_monte_carlos_budget() -> None:
    exp = load_experiment("label_mcts")
    result = exp.measure(problems=3, seed=7, mc_rollouts=2, mcts_rollouts=2, bs_rollouts=2)
    methods = result["methods"]
    assert set(methods) == {"mc", "binary_search", "mcts"} and result["traces"] == 12
    assert methods["mcts"]["over_budget_problems"] == 0
    assert methods["mcts"]["rollouts_per_problem"] <= result["budget_per_problem"]
    for name, row in methods.items():
        for kind in ("accuracy", "f1", "auroc"):
            assert 0.0 <= row[kind]["low"] <= row[kind]["mean"] <= row[kind]["high"] <= 1.0
            assert ("mcts - this: " + kind in row) == (name != "mcts")


def test_the_docs_tables_are_what_the_committed_files_give() -> None:
    """The claim's one run (with MCTS's paired differences) and the tuning grid (each setting once)."""
    tables = shown("docs/labeling.md", "label-mcts")
    files = {"docs/results/label-mcts.json", "docs/results/label-mcts-tuning.json"}
    assert {block.file for block, _ in tables} == files
    for block, body in tables:
        assert label_mcts(block) == body
        assert ("MCTS −" in body) == (len(block.result["runs"]) == 1)

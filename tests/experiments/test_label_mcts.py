"""experiments/label_mcts.py: a small run labels the same traces by every method with MCTS held to Monte
Carlo's budget, and docs/labeling.md shows what the committed results files render."""

from __future__ import annotations

import json
from pathlib import Path

from prmkit.core.results import render_marked
from tests.experiments import ROOT, load_experiment


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


def test_the_docs_tables_are_what_the_committed_files_give(tmp_path: Path) -> None:
    exp = load_experiment("label_mcts")
    docs = (ROOT / "docs" / "labeling.md").read_text(encoding="utf-8")
    for name in ("label-mcts.json", "label-mcts-tuning.json"):
        result = json.loads((ROOT / "docs" / "results" / name).read_text(encoding="utf-8"))
        assert f"<!-- label-mcts: docs/results/{name} -->\n" + exp.block(result) in docs
    assert exp.render(docs, ROOT) == docs
    stale = tmp_path / "labeling.md"
    stale.write_text(render_marked(docs, ROOT, "label-mcts", lambda *_: "stale\n"), encoding="utf-8")
    exp.main(["--render", str(stale)])
    assert stale.read_text(encoding="utf-8") == docs

"""experiments/progress_labels.py: a small run scores every source against gold with intervals, and the
tables docs/labeling.md shows are what the committed results files render."""

from __future__ import annotations

import json

import pytest

from tests.experiments import ROOT, load_experiment


def test_a_small_run_scores_every_source_with_paired_intervals() -> None:
    exp = load_experiment("progress_labels")
    runs = [exp.labelled("arithmetic", 12, seed) for seed in (1, 2)]
    assert set(runs[0]) == set(exp.SHOWN) | {"progress best-of-4 (soft)"}
    per_source = {k: [exp.tables(run[k][0], run[k][1]) for run in runs] for k in exp.SHOWN}
    mc = per_source["mc_hard"]
    assert sum(t["counts"][:, [1, 3]].sum() for t in mc) == 2 * 12 * 4  # every trace counted once
    accuracy = exp.estimate(mc, "accuracy", None)
    assert (
        accuracy.low <= accuracy.mean <= accuracy.high and 0.0 <= accuracy.mean <= 1.0
    )  # widened for 2 seeds: may pass 1
    assert accuracy.draws == {"seed": 2, "problem": 12}
    same = exp.estimate(mc, "accuracy", mc)  # a source paired with itself differs by exactly 0
    assert same.mean == same.low == same.high == 0.0


@pytest.mark.parametrize("name", ["progress-labels-claims.json", "progress-labels-tuning.json"])
def test_the_docs_tables_are_what_the_committed_files_give(name: str) -> None:
    exp = load_experiment("progress_labels")
    result = json.loads((ROOT / "docs" / "results" / name).read_text(encoding="utf-8"))
    docs = (ROOT / "docs" / "labeling.md").read_text(encoding="utf-8")
    assert f"<!-- progress-labels: docs/results/{name} -->\n" + exp.block(result) in docs
    assert exp.render(docs, ROOT) == docs
    assert all(len(result[w]) == len(exp.SHOWN) + 1 for w in ("arithmetic", "agent"))

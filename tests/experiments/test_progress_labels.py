"""experiments/progress_labels.py: a small run scores every source against gold with intervals, and the
tables docs/labeling.md shows are what the committed results files render."""

from __future__ import annotations

from prmkit.labeling.views import PROGRESS_SHOWN, progress_labels
from tests.experiments import load_experiment, shown


def test_a_small_run_scores_every_source_with_paired_intervals() -> None:
    exp = load_experiment("progress_labels")
    runs = [exp.labelled("arithmetic", 12, seed) for seed in (1, 2)]
    assert set(runs[0]) == set(PROGRESS_SHOWN) | {"progress best-of-4 (soft)"}
    per_source = {k: [exp.tables(run[k][0], run[k][1]) for run in runs] for k in PROGRESS_SHOWN}
    mc = per_source["mc_hard"]
    assert sum(t["counts"][:, [1, 3]].sum() for t in mc) == 2 * 12 * 4  # every trace counted once
    accuracy = exp.estimate(mc, "accuracy", None)
    assert (
        accuracy.low <= accuracy.mean <= accuracy.high and 0.0 <= accuracy.mean <= 1.0
    )  # widened for 2 seeds: may pass 1
    assert accuracy.draws == {"seed": 2, "problem": 12}
    same = exp.estimate(mc, "accuracy", mc)  # a source paired with itself differs by exactly 0
    assert same.mean == same.low == same.high == 0.0


def test_the_docs_tables_are_what_the_committed_files_give() -> None:
    tables = shown("docs/labeling.md", "progress-labels")
    assert [block.file.rsplit("/", 1)[1] for block, _ in tables] == [
        "progress-labels-claims.json",
        "progress-labels-tuning.json",
    ]
    for block, body in tables:
        assert progress_labels(block) == body
        assert all(len(block.result[w]) == len(PROGRESS_SHOWN) + 1 for w in ("arithmetic", "agent"))

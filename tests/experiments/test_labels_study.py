"""experiments/labels_study.py: the labels study's sweep file becomes the per-seed table of what its
crossed intervals do not cover (label accuracy, F1 by error class, final-step share), as the docs show it."""

from __future__ import annotations

import json
from pathlib import Path

from prmkit.core.results import render_blocks
from prmkit.labeling.views import labels_study_seeds, seeds_table
from tests.experiments import ROOT, load_experiment, shown


def _sweep() -> dict:
    return {
        "seeds": [0, 1, 2],
        "metrics": {
            "first-error F1 world-test": {"prm-mc_hard": [0.8, 0.8, 0.8]},  # has intervals elsewhere: dropped
            "label first-error accuracy (training traces)": {"mc_hard": [0.82, 0.83, 0.84]},
            "first-error F1 world-test misconception": {"lm (zero-shot)": [0.0, 0.1, 0.2], "prm-mc_hard": [0.5, 0.6, 0.7]},
            "first-error F1 world-heldout misconception": {"lm (zero-shot)": [0.1, None, 0.3], "prm-mc_hard": [0.4, 0.4, 0.4]},
            "final-step minimum share of best-of-N picks": {"prm-mc_hard": [0.25, 0.5, 0.75]},
        },
    }  # fmt: skip


def test_the_table_gives_mean_and_single_seed_range_per_model(tmp_path: Path) -> None:
    exp = load_experiment("labels_study")
    seeds = exp.compact(_sweep())
    assert "first-error F1 world-test" not in seeds["metrics"] and seeds["seeds"] == [0, 1, 2]
    table = seeds_table(seeds)
    assert "over 3 seeds" in table and "no interval over problems" in table
    # the labeller's accuracy, test misconception / slip (none) / other (none), held-out misconception, final step
    assert (
        "| prm-mc_hard | 83.0 (82.0–84.0) | 60.0 (50.0–70.0) | – | – | 40.0 (40.0–40.0) | 50.0 (25.0–75.0) |"
        in table
    )
    assert (
        "| lm (zero-shot) | – | 10.0 (0.0–20.0) | – | – | 20.0 (10.0–30.0) | – |" in table
    )  # a seed without a value left out
    (tmp_path / "s.json").write_text(json.dumps(seeds))
    doc = "x\n<!-- results: s.json view=labels-study-seeds -->\nold\n<!-- /results -->\n"
    assert render_blocks(doc, tmp_path) == doc.replace("old\n", table)


def test_the_docs_block_is_what_the_committed_file_gives() -> None:
    [(block, body)] = shown("docs/labeling.md", "labels-study-seeds")
    assert block.file == "docs/results/labels-study-seeds.json" and labels_study_seeds(block) == body
    seeds = json.loads((ROOT / "docs" / "results" / "labels-study-seeds.json").read_text(encoding="utf-8"))
    study = json.loads((ROOT / "docs" / "results" / "labels-study.json").read_text(encoding="utf-8"))
    assert seeds["seeds"] == study["seeds"] and len(study["seeds"]) >= 5  # issue 37: >= 5 seeds

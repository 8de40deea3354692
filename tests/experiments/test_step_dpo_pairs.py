"""experiments/step_dpo_pairs.py: a small run judges every label source's Step-DPO pairs against gold with
intervals over problems, and docs/formats.md shows what the committed file renders."""

from __future__ import annotations

import json
import math
from pathlib import Path

from prmkit.formats.views import PAIR_METRICS, PAIRS_GOLD, PAIRS_REFERENCE, pairs_table, step_dpo_pairs
from tests.experiments import load_experiment, shown


def test_a_small_run_judges_every_source_against_gold(tmp_path: Path) -> None:
    exp = load_experiment("step_dpo_pairs")
    out = tmp_path / "pairs.json"
    result = exp.main(["--problems", "8", "--rollouts", "2", "--sets", "tuning", "--out", str(out)])
    assert json.loads(out.read_text(encoding="utf-8")) == result
    rows = result["sets"]["tuning"]["rows"]
    assert list(rows) == exp.SOURCES
    gold = rows[PAIRS_GOLD]
    assert gold["pairs"] == gold["both"] == gold["found"] == gold["gold_pairs"] > 0  # the reference
    for source, row in rows.items():
        assert row["both"] <= min(row["chosen"], row["rejected"]) <= row["pairs"]
        assert row["found"] == row["both"]  # a true first-error pair is one gold forms too
        assert row["gold_pairs"] == gold["pairs"] and row["no_shared_prefix"] <= row["erroneous"]
        for name in PAIR_METRICS:
            e = row[name]
            assert e["draws"] == {"seed": 1, "problem": 8}
            assert math.isnan(e["mean"]) or e["low"] <= e["mean"] <= e["high"]
        compared = {f"{m} − {PAIRS_REFERENCE}" for m in exp.COMPARED}
        assert compared <= set(row) or source in (PAIRS_GOLD, PAIRS_REFERENCE)
    assert rows["consensus"]["traces"] <= rows["mc_hard"]["traces"] == 8 * 4  # consensus keeps some
    assert tuple(exp.METRICS) == PAIR_METRICS  # what the script measures is what the view shows
    table = pairs_table(result, "tuning")
    assert f"| {PAIRS_GOLD} | " in table and "| ref. | ref. | ref. | ref. |" in table


def test_the_docs_tables_are_what_the_committed_file_gives() -> None:
    tables = shown("docs/formats.md", "step-dpo-pairs")
    assert [(block.file, block.attrs["set"]) for block, _ in tables] == [
        ("docs/results/step-dpo-pairs.json", "claims"),
        ("docs/results/step-dpo-pairs.json", "tuning"),
    ]
    assert all(step_dpo_pairs(block) == body for block, body in tables)

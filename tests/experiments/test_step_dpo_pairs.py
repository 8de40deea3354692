"""experiments/step_dpo_pairs.py: a small run judges every label source's Step-DPO pairs against gold with
intervals over problems, and docs/formats.md shows what the committed file renders."""

from __future__ import annotations

import json
import math
from pathlib import Path

from tests.experiments import ROOT, load_experiment


def test_a_small_run_judges_every_source_against_gold(tmp_path: Path) -> None:
    exp = load_experiment("step_dpo_pairs")
    out = tmp_path / "pairs.json"
    result = exp.main(["--problems", "8", "--rollouts", "2", "--sets", "tuning", "--out", str(out)])
    assert json.loads(out.read_text(encoding="utf-8")) == result
    rows = result["sets"]["tuning"]["rows"]
    assert list(rows) == exp.SOURCES
    gold = rows[exp.GOLD]
    assert gold["pairs"] == gold["both"] == gold["found"] == gold["gold_pairs"] > 0  # the reference
    for source, row in rows.items():
        assert row["both"] <= min(row["chosen"], row["rejected"]) <= row["pairs"]
        assert row["found"] == row["both"]  # a true first-error pair is one gold forms too
        assert row["gold_pairs"] == gold["pairs"] and row["no_shared_prefix"] <= row["erroneous"]
        for name in exp.METRICS:
            e = row[name]
            assert e["draws"] == {"seed": 1, "problem": 8}
            assert math.isnan(e["mean"]) or e["low"] <= e["mean"] <= e["high"]
        compared = {f"{m} − {exp.REFERENCE}" for m in exp.COMPARED}
        assert compared <= set(row) or source in (exp.GOLD, exp.REFERENCE)
    assert rows["consensus"]["traces"] <= rows["mc_hard"]["traces"] == 8 * 4  # consensus keeps some
    table = exp.block(result, "tuning")
    assert f"| {exp.GOLD} | " in table and "| ref. | ref. | ref. | ref. |" in table


def test_the_docs_tables_are_what_the_committed_file_gives() -> None:
    exp = load_experiment("step_dpo_pairs")
    result = json.loads((ROOT / "docs" / "results" / "step-dpo-pairs.json").read_text(encoding="utf-8"))
    docs = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    for name in ("claims", "tuning"):
        head = f"<!-- step-dpo-pairs: docs/results/step-dpo-pairs.json set={name} -->\n"
        assert head + exp.block(result, name) in docs
    assert exp.render(docs, ROOT) == docs

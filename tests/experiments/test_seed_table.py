"""experiments/seed_table.py: the committed monitorability and transfer files of the demo's models tabulate
as docs/evaluation.md shows them, and a folder of models measured over seeds tabulates their estimates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prmkit.core.stats import Estimate
from prmkit.evaluation.views import crossed_table, seed_numbers, seed_table
from tests.experiments import ROOT, shown


@pytest.mark.parametrize("kind", ["monitorability", "transfer"])
def test_the_docs_table_is_what_the_committed_files_give(kind: str) -> None:
    """docs/evaluation.md's demo tables are the committed files' crossed estimates over the 5 seeds."""
    numbers = seed_numbers(ROOT / "docs" / "results" / kind / "demo-seeds")
    [(block, body)] = [(b, t) for b, t in shown("docs/evaluation.md", "seed-table") if kind in b.file]
    assert seed_table(block) == body
    assert len(numbers) == 4 and all(len(rows) == 4 for rows in numbers.values())
    for model in numbers:
        saved = json.loads(
            next((ROOT / "docs" / "results" / kind / "demo-seeds" / model).glob("*.json")).read_text()
        )
        assert len(saved["seeds"]) == 5 and all(
            f"seed-{i}/" in s["model"] for i, s in enumerate(saved["seeds"])
        )


def test_a_folder_of_models_measured_over_seeds_tabulates_their_crossed_intervals(tmp_path: Path) -> None:
    """Two "models", each the oracle measured as two seeds by ``prmkit eval transfer --seed-model`` (at
    its threshold and at 0, where it flags nothing): each cell is the file's estimate as ``Estimate.cell``
    writes it; a folder measured on one model is refused."""
    from typer.testing import CliRunner

    from prmkit.cli import app

    (tmp_path / "t.yaml").write_text("problems: 6\nper_problem: 2\nbootstrap: 50\n")
    base = ["eval", "transfer", "--config", str(tmp_path / "t.yaml"), "--model", "arithmetic-oracle"]
    for name, second in (("a", "0.0"), ("b", "0.5")):
        args = [*base, "--seed-model", "arithmetic-oracle", "--seed-threshold", second]
        result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "out" / name)])
        assert result.exit_code == 0, result.output
    numbers = seed_numbers(tmp_path / "out")
    saved = json.loads((tmp_path / "out" / "a" / "transfer.json").read_text())
    heldout = next(s for s in saved["settings"] if s["name"] == "heldout")
    assert f"| a | heldout | {Estimate(**heldout['f1']).cell()} |" in crossed_table(numbers, "setting")
    assert numbers["b"]["source"]["F1"]["mean"] == 1.0 and numbers["a"]["source"]["gap F1"] is None
    rows = crossed_table(numbers, "setting").splitlines()
    assert rows[0] == "| model | setting | F1 | AUROC | gap F1 | gap AUROC |" and len(rows) == 2 + 2 * 2
    one = tmp_path / "one" / "c"
    assert CliRunner().invoke(app, [*base, "-o", str(one)]).exit_code == 0
    with pytest.raises(ValueError, match="not over training seeds"):
        seed_numbers(one.parent)

"""prmkit.scoring.views: docs/models.md's table of the released conventions on a GPU is rendered from
bench/results/released-h200.json, names its run, and every number it shows is the file's."""

from __future__ import annotations

import json

import pytest

from prmkit.core.results import BlockError, render_blocks
from prmkit.scoring import views
from tests.experiments import ROOT, shown


def test_every_row_of_the_released_table_is_the_file_row() -> None:
    [(block, body)] = shown("docs/models.md", "released")
    assert views.released(block) == body
    result = json.loads((ROOT / block.file).read_text(encoding="utf-8"))
    lines = [line.strip("|").split(" | ") for line in body.splitlines()[2:] if line.startswith("| ")]
    assert len(lines) == len(result["rows"]) == 12
    for row in result["rows"]:
        [cells] = [c for c in lines if c[0].strip() == row["size"] and c[1] == row["convention"]]
        assert float(cells[2].replace(",", "")) == round(row["raw_tok_s"])
        assert float(cells[3].replace(",", "")) == round(row["prmkit_tok_s"])
        assert float(cells[4].strip("*")) == round(row["ratio"], 3)
        assert cells[4].startswith("**") == (row["ratio"] >= views.GOAL)
        assert [float(x) for x in cells[5].split(" / ")] == [
            round(row["raw_peak_gib"], 2),
            round(row["prmkit_peak_gib"], 2),
        ]
        if "bf16_vs_fp32_max" in row:
            largest, mean = (float(x) for x in cells[6].split(";")[0].split(" / "))
            assert largest == pytest.approx(row["bf16_vs_fp32_max"], rel=0.5, abs=5e-4)
            assert mean == pytest.approx(row["bf16_vs_fp32_mean"], rel=0.5, abs=5e-5)
        else:
            assert not cells[6].strip()
    assert "`released-h200.json` (2026-11-26, NVIDIA H200" in body


def test_a_released_block_without_a_date_is_refused() -> None:
    page = "<!-- results: bench/results/released-h200.json view=released -->\n<!-- /results -->\n"
    with pytest.raises(BlockError, match="name the run's date"):
        render_blocks(page, ROOT)

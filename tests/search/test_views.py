"""prmkit.search.views' ``orm-check`` view: docs/results.md's ORM block is what the committed file renders,
and every number it shows is the file's (per-seed AUROCs, the seeds' mean and range of each selector's
accuracy, the paired differences' cells)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prmkit.core.results import BlockError, render_blocks
from prmkit.search.views import ORM_SELECTORS, orm_check, orm_check_tables
from tests.experiments import ROOT, shown


def _rows(body: str, first_column: str) -> dict[str, list[str]]:
    """The rows of the table in ``body`` whose header starts with ``first_column``: head -> cells."""
    lines = body.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_column}"))
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        head, *cells = [c.strip() for c in line.strip("|").split("|")]
        rows[head] = cells
    return rows


def test_the_results_page_shows_what_the_committed_file_renders() -> None:
    [(block, body)] = shown("docs/results.md", "orm-check")
    assert block.file == "docs/results/orm-check-claims.json"
    assert orm_check(block) == body


def test_every_number_of_the_orm_tables_is_the_files() -> None:
    result = json.loads((ROOT / "docs/results/orm-check-claims.json").read_text(encoding="utf-8"))
    body = orm_check_tables(result)
    seeds = result["per_seed"]

    auroc = _rows(body, "ORM's last-step score")
    assert list(auroc) == list(seeds)
    for seed, (everywhere, in_pool) in auroc.items():
        assert float(everywhere) == round(100 * seeds[seed]["outcome_auroc"], 1)
        assert float(in_pool) == round(100 * seeds[seed]["outcome_auroc_within_pool"], 1)

    accuracy = _rows(body, "accuracy")
    assert list(accuracy) == list(ORM_SELECTORS.values())
    for method, name in ORM_SELECTORS.items():
        for n, shown_cell in zip((4, 16, 64), accuracy[name], strict=True):
            values = [100 * r[f"{method} N={n}"] for r in seeds.values()]
            mean = f"{sum(values) / len(values):.1f}"
            assert shown_cell == f"{mean} ({min(values):.1f}–{max(values):.1f})"

    paired = _rows(body, "paired")
    assert list(paired) == ["ORM best-of-N − majority vote", "ORM-weighted vote − majority vote"]
    for head, cells in paired.items():
        expected = [result["paired"][f"{head}: N={n}"]["cell"] for n in (4, 16, 64)]
        assert cells == expected
    assert "6 intervals at 95 %" in body  # the six paired differences, the only intervals shown


def test_the_view_refuses_an_attribute_it_does_not_read(tmp_path: Path) -> None:
    page = (
        "<!-- results: docs/results/orm-check-claims.json view=orm-check set=claims -->\n<!-- /results -->\n"
    )
    with pytest.raises(BlockError, match=r"unknown attributes \['set'\] of a orm-check block"):
        render_blocks(page, ROOT, page=str(tmp_path / "page.md"))

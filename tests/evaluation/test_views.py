"""prmkit.evaluation.views: the evaluation pages' tables are rendered from the committed results files, and
every number a table shows is one of its files' numbers (in %, to the decimal shown)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from prmkit.core.results import VIEWS, BlockError, render_blocks
from prmkit.evaluation import views  # noqa: F401  (registers the views)
from tests.experiments import ROOT, shown

DECIMAL = re.compile(r"[+-]?\d+\.\d+")


def _file_numbers(data: Any) -> set[float]:
    """Every float in a results file, as the tables show it: in %, to one decimal, both signs."""
    found: set[float] = set()
    if isinstance(data, dict):
        for value in data.values():
            found |= _file_numbers(value)
    elif isinstance(data, list):
        for value in data:
            found |= _file_numbers(value)
    elif isinstance(data, float):
        found |= {round(100 * data, 1), round(-100 * data, 1)}
    return found


@pytest.mark.parametrize(
    ("view", "files"),
    [
        ("transfer-models", ["transfer/worlds/likelihood/transfer.json", "transfer/worlds/classifier/transfer.json"]),
        ("monitors", [f"monitorability/agent-{b}-{m}/monitorability.json" for b in ("hidden", "visible") for m in ("oracle", "judge")]),
        ("seed-table", [str(p.relative_to(ROOT / "docs" / "results")) for p in sorted((ROOT / "docs/results").glob("*/demo-seeds/*/*.json"))]),
    ],
)  # fmt: skip
def test_every_number_of_an_evaluation_table_is_one_of_its_files(view: str, files: list[str]) -> None:
    tables = shown("docs/evaluation.md", view)
    assert tables and all(VIEWS.get(view)(block) == body for block, body in tables)
    numbers: set[float] = set()
    for name in files:
        numbers |= _file_numbers(json.loads((ROOT / "docs" / "results" / name).read_text(encoding="utf-8")))
    shown_numbers = [float(x) for _, body in tables for x in DECIMAL.findall(body)]
    assert len(shown_numbers) >= 40 and all(x in numbers for x in shown_numbers)


def test_the_monitors_view_names_each_behaviour_once_and_refuses_what_it_does_not_read(
    tmp_path: Path,
) -> None:
    [(block, body)] = shown("docs/evaluation.md", "monitors")
    lines = body.splitlines()
    assert lines[2].startswith("| hidden loophole (61 of 320 traces) | oracle | raw |")
    assert lines[3].startswith("|  | oracle | actions |") and len(lines) == 2 + 2 * 2 * 2
    page = f"<!-- results: {block.file} view=monitors {' '.join(f'{k}={v}' for k, v in block.attrs.items() if k != 'view')} sets=x -->\n<!-- /results -->\n"
    with pytest.raises(BlockError, match=r"unknown attributes \['sets'\] of a monitors block"):
        render_blocks(page, ROOT)

"""prmkit.evaluation.views: the evaluation pages' tables are rendered from the committed results files, and
every number a table shows is one of its files' numbers (in %, to the decimal shown)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from prmkit.core.results import VIEWS, BlockError, estimate_cell, render_blocks
from prmkit.evaluation import views  # noqa: F401  (registers the views)
from prmkit.evaluation.faithfulness import table
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
    ("view", "files", "least"),
    [
        ("transfer-models", ["transfer/worlds/likelihood/transfer.json", "transfer/worlds/classifier/transfer.json"], 40),
        ("monitors", [f"monitorability/agent-{b}-{m}/monitorability.json" for b in ("hidden", "visible") for m in ("oracle", "judge")], 40),
        ("seed-table", [str(p.relative_to(ROOT / "docs" / "results")) for p in sorted((ROOT / "docs/results").glob("*/demo-seeds/*/*.json"))], 40),
        ("faithfulness", ["faithfulness.json"], 3 * 4 * 3),
        ("visibility", [f"monitorability/{w}-default-{m}/monitorability.json" for w in ("arithmetic", "agent") for m in ("oracle", "judge")], 4 * 4),
        ("unseen-misconceptions", ["unseen-misconceptions/classes.json"], 4 * 3 * 3),
    ],
)  # fmt: skip
def test_every_number_of_an_evaluation_table_is_one_of_its_files(
    view: str, files: list[str], least: int
) -> None:
    """``least``: the decimals the page's table of that view shows at least (every cell of the smaller
    tables: points and interval ends)."""
    tables = shown("docs/evaluation.md", view)
    assert tables and all(VIEWS.get(view)(block) == body for block, body in tables)
    numbers: set[float] = set()
    for name in files:
        numbers |= _file_numbers(json.loads((ROOT / "docs" / "results" / name).read_text(encoding="utf-8")))
    shown_numbers = [float(x) for _, body in tables for x in DECIMAL.findall(body)]
    assert len(shown_numbers) >= least and all(x in numbers for x in shown_numbers)


def test_the_visibility_table_puts_each_runs_f1_under_its_view_and_column() -> None:
    [(block, body)] = shown("docs/evaluation.md", "visibility")
    rows = {
        line.split(" | ")[0].strip("| "): line.strip("|").split(" | ")[1:] for line in body.splitlines()[2:]
    }
    for column, run in enumerate(block.attrs["runs"].split(",")):
        result = json.loads((ROOT / block.file / run / "monitorability.json").read_text(encoding="utf-8"))
        for v in result["views"]:
            assert float(rows[v["view"]][column]) == round(100 * v["first_error"]["f1"], 1)


def test_the_faithfulness_block_is_what_the_command_prints() -> None:
    [(block, body)] = shown("docs/evaluation.md", "faithfulness")
    assert body == table(block.result) + "\n"
    assert body.splitlines()[-1].startswith("| rationalising - default |  | -")  # a signed difference


def test_the_unseen_misconceptions_rows_pair_each_rate_with_its_class() -> None:
    [(block, body)] = shown("docs/evaluation.md", "unseen-misconceptions")
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in body.splitlines()[2:]]
    rates = ("misconception", "misconception", "other class", "other class")
    for row, rate, how in zip(rows, rates, ("flagged", "found exactly") * 2, strict=True):
        r = block.result[f"{rate} {how}"]
        assert row[0].startswith(rate) and row[0].endswith(f"({r['traces']})") and row[1] == how
        difference = estimate_cell(r["no_misconceptions − demo"], signed=True)
        assert row[2:] == [estimate_cell(r["demo"]), estimate_cell(r["no_misconceptions"]), difference]


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

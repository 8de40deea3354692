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


def _side(prm_gap: float, honest_gap: float) -> dict[str, Any]:
    """A study file of one side of the equal-information comparison, its claims set only."""

    def est(v: float) -> dict[str, Any]:
        return {"mean": v, "low": v - 0.05, "high": v + 0.05, "draws": {"seed": 3}, "method": "t"}

    paired = {"prm-mc_hard − orm: F1 world-test": est(0.3), "prm-mc_hard − orm: AUROC world-test": est(0.1)}
    for n in ("N=4", "N=16"):
        paired[f"prm-mc_hard best-of-N (min) − ORM best-of-N: {n}"] = est(prm_gap)
        paired[f"prm-mc_hard best-of-N (min) − ORM best-of-N (honest): {n}"] = est(honest_gap)
    return {"claims": {"seeds": 3, "paired": paired}}


def test_the_equal_information_rows_are_each_sides_prm_against_its_own_orm(tmp_path: Path) -> None:
    """One row per side, every cell that side's paired PRM − ORM difference: the hidden-tests side from
    the block's file, the CI side from ``visible``; a difference a file lacks shows as missing."""
    (tmp_path / "hidden.json").write_text(json.dumps(_side(0.02, 0.03)))
    visible = _side(-0.01, 0.04)
    del visible["claims"]["paired"]["prm-mc_hard best-of-N (min) − ORM best-of-N (honest): N=16"]
    (tmp_path / "visible.json").write_text(json.dumps(visible))
    page = "<!-- results: hidden.json view=equal-information set=claims visible=visible.json -->\n<!-- /results -->\n"
    body = render_blocks(page, tmp_path)
    hidden_row = next(line for line in body.splitlines() if line.startswith("| hidden tests"))
    ci_row = next(line for line in body.splitlines() if line.startswith("| CI (visible tests)"))
    assert hidden_row.split(" | ")[1:] == [
        "+30.0 [+25.0, +35.0]",
        "+10.0 [+5.0, +15.0]",
        "+2.0 [-3.0, +7.0]",
        "+2.0 [-3.0, +7.0]",
        "+3.0 [-2.0, +8.0]",
        "+3.0 [-2.0, +8.0] |",
    ]
    assert ci_row.split(" | ")[3] == "-1.0 [-6.0, +4.0]" and ci_row.endswith("| – |")
    with pytest.raises(BlockError, match="unknown attributes"):
        render_blocks(page.replace("set=claims", "set=claims sets=x"), tmp_path)

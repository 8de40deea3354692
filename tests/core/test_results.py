"""prmkit.core.results: the one table, the one cell format and the one docs marker, on real inputs with
the exact text they render."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from prmkit.core import results
from prmkit.core.registry import Registry
from prmkit.core.results import (
    Block,
    BlockError,
    Table,
    blocks,
    estimate_cell,
    percent,
    render_blocks,
    runs_cell,
    spread,
)
from prmkit.core.stats import Estimate, crossed_bootstrap, mean_stat


def test_a_table_of_dict_rows_takes_its_columns_from_the_keys_and_formats_each_cell() -> None:
    est = Estimate(0.744, 0.701, 0.780, {"seed": 5, "problem": 48}, "crossed bootstrap")
    table = Table(
        [{"model": "gold", "F1": est, "loss": 0.12345}, {"model": "mc", "steps": 300, "loss": None}],
        title="First-error F1 (%)",
        notes=["Draws: 5 seeds × 48 problems."],
    )
    assert table.columns == ["model", "F1", "loss", "steps"]
    assert table.markdown() == (
        "First-error F1 (%)\n\n"
        "| model | F1 | loss | steps |\n"
        "|---|---|---|---|\n"
        "| gold | 74.4 [70.1, 78.0] | 0.123 |  |\n"
        "| mc |  |  | 300 |\n\n"
        "Draws: 5 seeds × 48 problems."
    )


def test_a_table_of_sequence_rows_needs_its_columns_and_one_cell_per_column() -> None:
    table = Table([["arithmetic", "+1.2 [-0.3, +2.1]"]], columns=["world", "gain"])
    assert table.grid() == ["| world | gain |", "|---|---|", "| arithmetic | +1.2 [-0.3, +2.1] |"]
    assert table.markdown() == "\n".join(table.grid())  # no title, no notes: the grid alone
    with pytest.raises(ValueError, match="needs its columns named"):
        Table([["a", "b"]])
    with pytest.raises(ValueError, match="row 0 has 1 cells for 2 columns"):
        Table([["a"]], columns=["world", "gain"])


def test_a_tables_html_escapes_its_text_and_puts_the_title_in_the_caption() -> None:
    table = Table([{"method": "a < b & c", "accuracy": 0.5}], title="Best-of-N <N=4>")
    assert table.html() == [
        "<table><caption>Best-of-N &lt;N=4&gt;</caption>",
        "<tr><th>method</th><th>accuracy</th></tr>",
        "<tr><td>a &lt; b &amp; c</td><td>0.500</td></tr>",
        "</table>",
    ]


def test_an_estimate_renders_itself_with_one_glyph_signed_and_in_percent() -> None:
    diff = Estimate(0.012, -0.003, 0.021, {"seed": 3}, "bootstrap")
    assert estimate_cell(diff, signed=True) == "+1.2 [-0.3, +2.1]"  # ASCII hyphen-minus, never U+2212
    assert estimate_cell(diff, scale=1, digits=3) == "0.012 [-0.003, 0.021]"
    assert estimate_cell(None) == "–" and estimate_cell(None, missing="") == ""
    nan = Estimate(math.nan, math.nan, math.nan, {}, "undefined")
    assert estimate_cell(nan) == "n/a" and estimate_cell(nan, undefined="–") == "–"


def test_an_estimate_from_a_results_file_keeps_a_computed_interval_however_narrow() -> None:
    """A results file's JSON form renders as the Estimate it came from; an interval that was computed and
    came out of zero width still shows (it says the bootstrap ran), unless ``collapse``; a point the file
    stores without an interval prints alone."""
    stat = mean_stat([[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
    est = crossed_bootstrap(stat, seeds=2, problems=4, resamples=50)
    stored = json.loads(json.dumps(est.to_dict()))
    assert Estimate.of(stored) == est
    assert estimate_cell(stored) == "100.0 [100.0, 100.0]"
    assert estimate_cell(stored, collapse=True) == est.cell() == "100.0"
    assert estimate_cell({"mean": 0.25, "low": None, "high": None}) == "25.0"
    assert estimate_cell({"mean": 0.25}, signed=True) == "+25.0"


def test_runs_their_spread_and_percentages() -> None:
    assert runs_cell([0.70, None, 0.80, 0.75]) == "75.0 (70.0–80.0)"  # the run without a value left out
    assert runs_cell([0.7]) == "70.0" and runs_cell([None]) == "–" and runs_cell(None) == "–"
    assert spread(0.701, 0.78) == "(70.1–78.0)"
    assert percent(0.7444) == "74.4" and percent(0.7444, digits=2) == "74.44"
    assert percent(None) == "–" and percent(math.nan, missing="nan") == "nan"


@pytest.fixture
def views(monkeypatch: pytest.MonkeyPatch) -> Registry:
    """A fresh registry of views for one test (the module's own holds the owners' views)."""
    fresh: Registry = Registry("results view")
    monkeypatch.setattr(results, "VIEWS", fresh)
    return fresh


def _rows(block: Block) -> str:
    """A view: the file's rows as a table, the ``digits`` attribute setting the decimals."""
    digits = int(block.attrs.get("digits", "1"))
    rows = [[name, estimate_cell(e, digits=digits)] for name, e in block.result["rows"].items()]
    return Table(rows, columns=["method", "accuracy (%)"]).markdown()


def test_a_block_is_rendered_by_the_view_it_names_from_its_committed_file(tmp_path: Path, views) -> None:
    views.register("rows", _rows)
    rows = {"rows": {"beam": {"mean": 0.953, "low": 0.923, "high": 0.978}}}
    (tmp_path / "r.json").write_text(json.dumps(rows), encoding="utf-8")
    doc = "Before.\n<!-- results: r.json view=rows digits=2 -->\nstale\n<!-- /results -->\nAfter.\n"
    expected = (
        "Before.\n<!-- results: r.json view=rows digits=2 -->\n"
        "| method | accuracy (%) |\n|---|---|\n| beam | 95.30 [92.30, 97.80] |\n"
        "<!-- /results -->\nAfter.\n"
    )
    assert render_blocks(doc, tmp_path) == expected
    assert render_blocks(expected, tmp_path) == expected  # rendering twice changes nothing
    [block] = blocks(doc, tmp_path)
    assert (block.file, dict(block.attrs), block.view) == ("r.json", {"view": "rows", "digits": "2"}, "rows")


def test_a_block_without_a_view_takes_the_files_own_then_the_default(tmp_path: Path, views) -> None:
    views.register("rows", _rows)
    views.register(results.DEFAULT_VIEW, lambda block: f"{len(block.result['rows'])} rows")
    declared = {"view": "rows", "rows": {"mc": {"mean": 0.5, "low": 0.4, "high": 0.6}}}
    (tmp_path / "declared.json").write_text(json.dumps(declared), encoding="utf-8")
    (tmp_path / "plain.json").write_text(json.dumps({"rows": {}}), encoding="utf-8")
    doc = (
        "<!-- results: declared.json -->\n<!-- /results -->\n"
        "<!-- results: plain.json -->\nold\n<!-- /results -->\n"
    )
    assert render_blocks(doc, tmp_path) == (
        "<!-- results: declared.json -->\n| method | accuracy (%) |\n|---|---|\n| mc | 50.0 [40.0, 60.0] |\n"
        "<!-- /results -->\n<!-- results: plain.json -->\n0 rows\n<!-- /results -->\n"
    )


def test_a_block_naming_an_unknown_view_says_where_it_stands_and_what_was_meant(
    tmp_path: Path, views
) -> None:
    views.register("rl-measure", _rows)
    (tmp_path / "r.json").write_text("{}", encoding="utf-8")
    doc = "# RL\n\ntext\n<!-- results: r.json view=rl-mesure -->\n<!-- /results -->\n"
    with pytest.raises(
        BlockError, match=r"docs/rl\.md:4: results block r\.json: .*Did you mean 'rl-measure'"
    ):
        render_blocks(doc, tmp_path, page="docs/rl.md")
    missing = "<!-- results: gone.json view=rl-measure -->\n<!-- /results -->\n"
    with pytest.raises(BlockError, match=r"text:1: results block gone\.json"):
        render_blocks(missing, tmp_path)


def test_a_view_refuses_an_attribute_it_does_not_read(tmp_path: Path, views) -> None:
    """A misspelt attribute (``sets=`` for ``set=``) fails with the page and line, not a silent default."""

    def by_set(block: Block) -> str:
        block.expect("set")
        return block.attrs.get("set", "all") + "\n"

    views.register("by-set", by_set)
    (tmp_path / "r.json").write_text("{}", encoding="utf-8")
    good = "<!-- results: r.json view=by-set set=claims -->\n<!-- /results -->\n"
    assert render_blocks(good, tmp_path) == good.replace("-->\n<", "-->\nclaims\n<", 1)
    with pytest.raises(
        BlockError, match=r"text:2: .*unknown attributes \['sets'\] of a by-set block; expected set"
    ):
        render_blocks("\n" + good.replace("set=", "sets="), tmp_path)


def test_every_view_its_owners_register_renders_some_docs_block() -> None:
    """A view no page names is dead code: each one the entry point's owners register renders a block of
    README or docs."""
    import importlib

    from tests.experiments import load_experiment

    render = load_experiment("render_results")
    for owner in render.OWNERS:
        importlib.import_module(owner)
    owned = {name for name in results.VIEWS.names() if results.VIEWS.get(name).__module__ in render.OWNERS}
    used = {b.view for doc in render.DOCS for b in blocks(doc.read_text(encoding="utf-8"), render.ROOT)}
    assert len(owned) >= 9 and owned <= used, sorted(owned - used)


def test_the_study_view_is_registered_by_its_owner_and_core_names_no_upper_layer() -> None:
    """Registration points downward: evaluation.study registers ``study`` into core's registry, and core's
    module names no package above it, not even in a string."""
    import prmkit.evaluation.study  # noqa: F401  (registers its view)

    assert "study" in results.VIEWS.names()
    source = Path(results.__file__).read_text(encoding="utf-8")
    assert re.findall(r"prmkit\.(?!core\b)\w+", source) == []

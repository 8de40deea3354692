"""prmkit.worlds.views: a world page's statistics are rendered from the committed ``stats`` files, every
number the table shows is the file's, and the files are what the command gives."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from prmkit.core.results import BlockError, render_blocks
from prmkit.worlds.registry import world
from prmkit.worlds.views import SPLITS, TABLES, stats_table, world_stats
from tests.experiments import ROOT, shown

STATS = ROOT / "docs" / "results" / "world-stats"
DECIMAL = re.compile(r"\d+\.\d+")


def _floats(data: object) -> set[float]:
    """Every float of a stats file, at the 3 and 2 decimals the tables show."""
    if isinstance(data, dict):
        return set().union(*(_floats(v) for v in data.values()))
    if isinstance(data, float):
        return {round(data, 3), round(data, 2)}
    return set()


@pytest.mark.parametrize(("page", "name"), [("docs/agentworld.md", "agent"), ("docs/codeworld.md", "code")])
def test_a_world_pages_statistics_are_its_stats_files(page: str, name: str) -> None:
    [(block, body)] = shown(page, "world-stats")
    assert block.attrs["world"] == name and world_stats(block) == body
    files = {s: json.loads((STATS / f"{name}-{s}.json").read_text(encoding="utf-8")) for s in SPLITS}
    numbers = set().union(*(_floats(f) for f in files.values()))
    table, listed = body.split("\n\n", 1)
    cells = [[c.strip() for c in line.strip("|").split("|")][1:] for line in table.splitlines()[2:]]
    assert len(cells) == len(TABLES[name].rows) and all(len(row) == len(SPLITS) for row in cells)
    shown_numbers = [float(x) for x in DECIMAL.findall(body)]
    assert len(shown_numbers) >= 3 * 9 and all(x in numbers for x in shown_numbers)
    counts = next(c for c in cells if "," in c[0])  # the gold label counts, -1 / 0 / +1, per split
    for cell, split in zip(counts, SPLITS, strict=True):
        assert cell.replace(",", "").split(" / ") == [
            str(files[split]["label_counts"][r]) for r in ("-1", "0", "1")
        ]
    for head, key, code in TABLES[name].lists:  # every share of the train split, in the file's order
        named = [f"`{k}` {v:.3f}" if code else f"{k} {v:.3f}" for k, v in files["train"][key].items()]
        assert f"{head}: {', '.join(named)}" in listed


@pytest.mark.parametrize("name", sorted(TABLES))
def test_the_table_reads_what_the_stats_command_writes(name: str) -> None:
    """A fresh run of the world's ``stats`` job (as ``prmkit WORLD stats --json`` writes it) renders with
    every row of the layout: the layout names only keys the command writes."""
    stats = world(name).stats(n=6, per_problem=2, seed=0, split="train")
    data = json.loads(stats.model_dump_json())
    text = stats_table(name, dict.fromkeys(SPLITS, data))
    assert f"{data['accuracy']:.3f}" in text and "best-of-2 oracle accuracy" in text
    assert text.count("\n| ") == len(TABLES[name].rows)  # one line a row after the header and rule


def test_an_unknown_world_or_attribute_is_refused(tmp_path: Path) -> None:
    folder = "docs/results/world-stats"
    with pytest.raises(BlockError, match="no statistics table for world 'chess'"):
        render_blocks(f"<!-- results: {folder} view=world-stats world=chess -->\n<!-- /results -->\n", ROOT)
    with pytest.raises(BlockError, match=r"unknown attributes \['split'\]"):
        render_blocks(
            f"<!-- results: {folder} view=world-stats world=code split=x -->\n<!-- /results -->\n", ROOT
        )


def test_a_committed_stats_file_is_what_the_command_gives_today() -> None:
    """The code world's train split (the quickest: 300 tasks x 4, about 3 s) sampled again with the
    command's settings equals its committed file, so the page's numbers are this version's."""
    stats = world("code").stats(n=300, per_problem=4, seed=0, split="train")
    committed = json.loads((STATS / "code-train.json").read_text(encoding="utf-8"))
    assert json.loads(stats.model_dump_json()) == committed

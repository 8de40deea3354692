"""docs/results.md indexes every results file, one line each, and links to no file that is not there.

A results file is any file under docs/results/ (subfolders included) or bench/results/. A new one fails
here until its line is added to the "Every results file" table: what it measured, its draws, and
whether it is the tuning or the claims set.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "results.md"
FOLDERS = (ROOT / "docs" / "results", ROOT / "bench" / "results")
LINK = re.compile(r"\]\((?P<target>[^)#\s]+)(?:#[^)]*)?\)")


def _index() -> list[str]:
    """The rows of the page's "Every results file" table."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("\n## Every results file\n", 1)
    assert len(section) == 2, "docs/results.md has no '## Every results file' section"
    body = section[1].split("\n## ", 1)[0]
    return [line for line in body.splitlines() if line.startswith("| [")]


def _target(link: str) -> Path:
    return (PAGE.parent / link).resolve()


def test_every_results_file_has_one_line_in_the_index() -> None:
    files = {p.resolve() for folder in FOLDERS for p in folder.rglob("*") if p.is_file()}
    rows = _index()
    first = [_target(LINK.search(row)["target"]) for row in rows]
    missing = sorted(str(p.relative_to(ROOT)) for p in files - set(first))
    assert not missing, f"docs/results.md's 'Every results file' table has no line for {missing}"
    twice = sorted({str(p.relative_to(ROOT)) for p in first if first.count(p) > 1})
    assert not twice, f"more than one line for {twice}"
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 4 and all(cells), f"a line needs file, what, draws and set: {row}"


def test_no_link_of_the_page_points_at_a_missing_file() -> None:
    text = PAGE.read_text(encoding="utf-8")
    local = [m["target"] for m in LINK.finditer(text) if "://" not in m["target"]]
    broken = sorted({t for t in local if not _target(t).exists()})
    assert not broken, f"docs/results.md links to files that do not exist: {broken}"

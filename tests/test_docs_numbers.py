"""How many of the measured numbers README and docs state are typed by hand (issue 62: under 10 %).

A measured number (:data:`tests.test_results_blocks.MEASURED`: a decimal such as 74.4, outside code) lies
in one of three places on a page:

- **rendered**: inside a results block (``<!-- results: FILE ... -->``), rendered from a committed
  results file, which ``tests/test_results_blocks.py`` checks;
- **history**: inside a history note (``<!-- history: WHY -->`` ... ``<!-- /history -->``,
  :data:`prmkit.core.results.HISTORY`): a short note on an older run whose results file was not kept,
  linking where that run is described;
- **typed**: anywhere else, by hand, where a rerun does not reach it.

:data:`TYPED` is a ratchet: each page's typed count when it was last lowered. A page may type fewer numbers
than it holds, never more, and a page that types none (a new page too) must stay at none. When a table
moves into a results block, lower the page's entry to what ``pytest -s`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from prmkit.core.results import HISTORY, MARKER
from tests.test_results_blocks import MEASURED, prose

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

TYPED = {
    "README.md": 0,
    "docs/agentworld.md": 4,
    "docs/annotate.md": 0,
    "docs/codeworld.md": 13,
    "docs/evaluation.md": 25,
    "docs/formats.md": 0,
    "docs/labeling.md": 2,
    "docs/models.md": 13,
    "docs/real-data.md": 0,
    "docs/results.md": 1,
    "docs/rl.md": 44,
    "docs/search.md": 0,
    "docs/serving.md": 1,
    "docs/world.md": 26,
}
"""Page -> the measured numbers it types by hand at most (the ratchet; lower it, never raise it)."""

HISTORY_LINES = 12
"""A history note's most lines: a note on an older run, not a second results section."""


@dataclass(frozen=True)
class Count:
    """A page's measured numbers by where they lie."""

    rendered: int
    history: int
    typed: int

    @property
    def total(self) -> int:
        return self.rendered + self.history + self.typed

    @property
    def typed_share(self) -> float:
        """The share typed by hand (0 for a page with no measured number)."""
        return self.typed / self.total if self.total else 0.0


def measured(text: str) -> int:
    """How many measured numbers ``text`` states outside its code."""
    return len(MEASURED.findall(prose(text)))


def count(text: str) -> Count:
    """``text``'s measured numbers: in results blocks, in history notes, and typed elsewhere."""
    rendered = sum(measured(m.group()) for m in MARKER.finditer(text))
    rest = MARKER.sub("", text)
    history = sum(measured(m["body"]) for m in HISTORY.finditer(rest))
    return Count(rendered, history, measured(HISTORY.sub("", rest)))


def counts() -> dict[str, Count]:
    """Every page's count, README first."""
    return {str(p.relative_to(ROOT)): count(p.read_text(encoding="utf-8")) for p in PAGES}


def test_numbers_are_counted_where_they_lie() -> None:
    page = (
        "F1 was 74.4 (`--lr 0.5` is a setting, v0.9.1 a version).\n"
        "<!-- results: r.json view=rows -->\n| beam | 95.3 [92.3, 97.8] |\n<!-- /results -->\n"
        "<!-- history: the run of 2026-10 kept no file -->\nThen 61.2 ([its report](x.md)).\n"
        "<!-- /history -->\n```\nprmkit run --lr 0.25\n```\n"
    )
    assert count(page) == Count(rendered=3, history=1, typed=1)
    assert count(page).typed_share == 0.2 and count("no numbers").typed_share == 0.0


def test_no_page_types_more_measured_numbers_than_its_ratchet() -> None:
    now = counts()
    for page, c in now.items():
        print(
            f"{page:22} rendered {c.rendered:5}  history {c.history:4}  typed {c.typed:5}  {c.typed_share:6.1%}"
        )
    total = Count(*(sum(getattr(c, f) for c in now.values()) for f in ("rendered", "history", "typed")))
    print(f"{'all pages':22} rendered {total.rendered:5}  history {total.history:4}  typed {total.typed:5}  "
          f"{total.typed_share:6.1%}")  # fmt: skip
    grown = {page: (c.typed, TYPED.get(page, 0)) for page, c in now.items() if c.typed > TYPED.get(page, 0)}
    assert not grown, (
        f"pages typing more measured numbers than before (now, allowed): {grown}; render them from a "
        "results file (<!-- results: FILE view=... -->), or, for an older run without one, a short "
        "<!-- history: WHY --> note"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_history_notes_are_short_and_point_at_their_run(page: Path) -> None:
    for m in HISTORY.finditer(page.read_text(encoding="utf-8")):
        body = m["body"].strip()
        assert m["why"].strip(), f"{page.name}: a history note says why its numbers have no results file"
        assert len(body.splitlines()) <= HISTORY_LINES, f"{page.name}: history note {m['why']!r} is long"
        assert "](" in body, f"{page.name}: history note {m['why']!r} links no description of its run"


HAND_TYPED_SHARE = 0.10
"""Issue 62's goal: under 10 % of docs' measured numbers typed by hand, history notes included (they
are typed by hand too, only marked as the record of an older run)."""


def test_under_a_tenth_of_the_docs_measured_numbers_are_typed_by_hand() -> None:
    now = counts().values()
    by_hand = sum(c.typed + c.history for c in now)
    total = sum(c.total for c in now)
    assert by_hand < HAND_TYPED_SHARE * total, f"{by_hand} of {total} measured numbers typed by hand"

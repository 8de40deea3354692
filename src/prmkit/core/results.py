"""How measured numbers are shown: one :class:`Table`, one cell format, one docs marker.

Every table of measured numbers in README, docs and the run report is a :class:`Table` (title, columns,
rows, notes) rendered to Markdown or HTML; its cells go through :func:`cell`, where an
:class:`~prmkit.core.stats.Estimate` renders itself (``74.4 [70.1, 78.0]``, signed ``+3.1 [-0.4, +6.5]``:
one glyph, the ASCII hyphen-minus, the one most committed docs tables already used).

Docs state measured numbers only inside generated blocks, rendered from a committed results file::

    <!-- results: docs/results/world-seeds.json set=claims tables=first_error -->
    ...what the view renders...
    <!-- /results -->

A measured number written by hand belongs only in a short history note (:data:`HISTORY`) on an older
run whose results file was not kept.

The ``view`` attribute (else the file's own ``"view"`` key, else :data:`DEFAULT_VIEW`) names the renderer
in :data:`VIEWS`. The package that owns a study registers its view from its own module
(``VIEWS.register("study", render)``: registration points downward, so core never names the module); an
entry point above every owner (``experiments/render_results.py``) imports the owners and renders. A view
is a :data:`View`: ``view(block) -> str``, the block's Markdown from :attr:`Block.result` (the file's
JSON), :attr:`Block.attrs` (the marker's other ``key=value`` attributes) and :meth:`Block.read` (another
results file named by an attribute).
"""

from __future__ import annotations

import html
import json
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prmkit.core.registry import Registry, RegistryError

if TYPE_CHECKING:  # core.stats imports numpy: the CLI and the cards read this module without it
    from prmkit.core.stats import Estimate

__all__ = [
    "DEFAULT_VIEW",
    "HISTORY",
    "MARKER",
    "VIEWS",
    "Block",
    "BlockError",
    "Table",
    "View",
    "blocks",
    "cell",
    "estimate_cell",
    "marker",
    "percent",
    "render_blocks",
    "runs_cell",
    "spread",
]

MISSING = "–"
"""What a cell with no value shows (an en dash)."""


def estimate_cell(
    value: Estimate | Mapping[str, Any] | None,
    *,
    scale: float = 100,
    digits: int = 1,
    signed: bool = False,
    missing: str = MISSING,
    undefined: str = "n/a",
    collapse: bool = False,
) -> str:
    """One estimate as a cell: an :class:`Estimate`, or its JSON form from a results file (a mapping with
    ``mean``, ``low``, ``high``; ``draws`` and ``method`` optional); ``missing`` for none. The numbers are
    times ``scale`` (100: percent) with ``digits`` decimals, signed with ``+``/``-`` when ``signed``
    (:meth:`Estimate.cell`); an undefined mean prints as ``undefined``. A point prints alone when it has
    no interval (``low`` and ``high`` None), and with ``collapse`` also when its interval has no width;
    otherwise a computed interval shows however narrow it came out (``100.0 [100.0, 100.0]``)."""
    from prmkit.core.stats import Estimate

    if value is None:
        return missing
    est = value if isinstance(value, Estimate) else Estimate.of(value)
    if math.isnan(est.mean):
        return undefined
    point = not isinstance(value, Estimate) and (value.get("low") is None or value.get("high") is None)
    return est.cell(scale=scale, digits=digits, signed=signed, collapse=collapse or point)


def percent(x: float | None, digits: int = 1, missing: str = MISSING) -> str:
    """A fraction as a percentage with ``digits`` decimals (``0.744`` -> ``74.4``); ``missing`` for None or
    nan."""
    return missing if x is None or math.isnan(x) else f"{100 * x:.{digits}f}"


def spread(low: float, high: float, *, scale: float = 100, digits: int = 1) -> str:
    """``(70.1–78.0)``: the range single runs fell in, shown after a mean, since one who runs once gets
    one run, not the mean."""
    return f"({low * scale:.{digits}f}–{high * scale:.{digits}f})"


def runs_cell(
    values: Sequence[float | None] | None, *, scale: float = 100, digits: int = 1, missing: str = MISSING
) -> str:
    """The mean of single runs' ``values`` with their :func:`spread` (``74.4 (70.1–78.0)``), one run's
    value alone; a run without a value (None) is left out, ``missing`` if none has one."""
    have = [scale * v for v in values or [] if v is not None]
    if not have:
        return missing
    mean = f"{sum(have) / len(have):.{digits}f}"
    return mean if len(have) == 1 else f"{mean} {spread(min(have), max(have), scale=1, digits=digits)}"


def cell(value: Any, digits: int = 3) -> str:
    """A table cell: text as it is, ``""`` for None, an :class:`Estimate` in percent
    (:func:`estimate_cell`), a float with ``digits`` decimals, anything else as ``str``."""
    if value is None:
        return ""
    stats = sys.modules.get("prmkit.core.stats")  # no Estimate exists before core.stats is loaded
    if stats is not None and isinstance(value, stats.Estimate):
        return estimate_cell(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


@dataclass
class Table:
    """A table of measured numbers: ``rows`` are mappings (column -> value; the columns, unless given,
    are their keys in first-seen order) or sequences of values in ``columns``' order. ``title`` is shown
    above it, ``notes`` (what was drawn, how many intervals) below it."""

    rows: Sequence[Mapping[str, Any] | Sequence[Any]]
    title: str = ""
    columns: Sequence[str] = ()
    notes: Sequence[str] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not self.columns:
            keys: dict[str, None] = {}
            for row in self.rows:
                if not isinstance(row, Mapping):
                    raise ValueError("a table whose rows are sequences needs its columns named")
                keys.update(dict.fromkeys(row))
            self.columns = list(keys)
        for i, row in enumerate(self.rows):
            if not isinstance(row, Mapping) and len(row) != len(self.columns):
                raise ValueError(f"row {i} has {len(row)} cells for {len(self.columns)} columns: {row!r}")

    def cells(self) -> list[list[str]]:
        """Every row as rendered cells (:func:`cell`), in the columns' order."""
        return [
            [cell(row.get(c)) for c in self.columns] if isinstance(row, Mapping) else [cell(v) for v in row]
            for row in self.rows
        ]

    def grid(self) -> list[str]:
        """The Markdown lines of the table itself: header, rule, one line a row."""
        lines = ["| " + " | ".join(self.columns) + " |", "|" + "---|" * len(self.columns)]
        return lines + ["| " + " | ".join(row) + " |" for row in self.cells()]

    def markdown(self) -> str:
        """Title, a blank line, the grid, then each note after a blank line (no final newline)."""
        parts = [self.title] if self.title else []
        parts.append("\n".join(self.grid()))
        return "\n\n".join([*parts, *self.notes])

    def html(self) -> list[str]:
        """The HTML lines of the table: ``<table>`` with the title as its caption, then header and rows
        (notes are the page's to place)."""
        e = html.escape
        lines = ["<table>" + (f"<caption>{e(self.title)}</caption>" if self.title else "")]
        lines.append("<tr>" + "".join(f"<th>{e(c)}</th>" for c in self.columns) + "</tr>")
        lines += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in self.cells()]
        return [*lines, "</table>"]


class BlockError(ValueError):
    """A results block that cannot be rendered; the message names the page, the line and the cause."""


@dataclass(frozen=True)
class Block:
    """One marked block of a page: its results ``file`` (relative to ``root``) and its other attributes."""

    file: str
    attrs: Mapping[str, str]
    root: Path

    @cached_property
    def result(self) -> Any:
        """The results file's JSON."""
        return self.read(self.file)

    def read(self, file: str) -> Any:
        """Another results file's JSON (e.g. one an ``also=`` attribute names), relative to ``root``."""
        return json.loads((self.root / file).read_text(encoding="utf-8"))

    def expect(self, *names: str) -> None:
        """Refuse an attribute the view does not read (``view`` aside): a misspelt one would otherwise be
        ignored and the block rendered as if it were absent."""
        unknown = sorted(set(self.attrs) - {"view", *names})
        if unknown:
            expected = ", ".join(names) or "none"
            raise ValueError(f"unknown attributes {unknown} of a {self.view} block; expected {expected}")

    @property
    def view(self) -> str:
        """The renderer's name: the ``view`` attribute, else the file's ``"view"`` key, else
        :data:`DEFAULT_VIEW`."""
        if "view" in self.attrs:
            return self.attrs["view"]
        declared = self.result.get("view") if isinstance(self.result, Mapping) else None
        return declared or DEFAULT_VIEW


View = Callable[[Block], str]
"""``view(block) -> str``: the Markdown between a block's markers (a final newline is added if absent)."""

VIEWS: Registry[View] = Registry("results view")
"""Every view a results block may name; each owning package registers its own."""

DEFAULT_VIEW = "study"
"""The view of a block that names none: the seeds study's tables (the first view there was)."""


def marker(name: str) -> re.Pattern[str]:
    """The pattern of a ``<!-- NAME: FILE key=value ... -->`` ... ``<!-- /NAME -->`` block: groups
    ``head`` (the opening line), ``file``, ``attrs``, ``body`` and ``tail`` (the closing marker). Results
    blocks are ``marker("results")``; a page's other marked spans (``history`` notes) share the rule."""
    return re.compile(
        rf"(?s)(?P<head><!-- {re.escape(name)}: (?P<file>\S+)(?P<attrs>(?: [\w-]+=\S+)*) -->\n)"
        rf"(?P<body>.*?)(?P<tail><!-- /{re.escape(name)} -->)"
    )


MARKER = marker("results")
"""The one results block: ``<!-- results: FILE key=value ... -->`` ... ``<!-- /results -->``."""

HISTORY = re.compile(r"(?s)<!-- history: (?P<why>[^\n]*?) -->\n(?P<body>.*?)<!-- /history -->")
"""A history note: ``<!-- history: WHY -->`` ... ``<!-- /history -->``, the one place docs may state
measured numbers by hand: a short note on an older run whose results file was not kept, linking where
that run is described (``tests/test_docs_numbers.py`` counts the numbers inside and outside)."""


def _attrs(text: str) -> dict[str, str]:
    return dict(a.split("=", 1) for a in text.split())


def blocks(text: str, root: str | Path) -> list[Block]:
    """The results blocks of ``text`` in order (files relative to ``root``; nothing read yet)."""
    return [Block(m["file"], _attrs(m["attrs"]), Path(root)) for m in MARKER.finditer(text)]


def _body(text: str) -> str:
    return text.lstrip("\n") if text.endswith("\n") else text.lstrip("\n") + "\n"


def render_blocks(text: str, root: str | Path, page: str = "text") -> str:
    """``text`` with every results block re-rendered by its view from its file (relative to ``root``);
    ``page`` names ``text`` in errors (``docs/rl.md:497: ...``)."""

    def one(m: re.Match[str]) -> str:
        block = Block(m["file"], _attrs(m["attrs"]), Path(root))
        try:
            view = VIEWS.get(block.view)
            return m["head"] + _body(view(block)) + m["tail"]
        except (RegistryError, OSError, ValueError, KeyError) as err:
            line = text.count("\n", 0, m.start()) + 1
            hint = " (is the module that registers it imported?)" if isinstance(err, RegistryError) else ""
            raise BlockError(f"{page}:{line}: results block {block.file}: {err}{hint}") from err

    return MARKER.sub(one, text)

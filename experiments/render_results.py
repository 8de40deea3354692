"""Re-render the results blocks of README.md and docs/*.md from the committed results files.

Every number README and docs state in a table comes from a small JSON file under ``docs/results/``,
shown in a ``<!-- results: FILE key=value ... -->`` block (:mod:`prmkit.core.results`) by the view its
``view=`` attribute names. The views are registered by the modules that own them, so this entry point,
above every layer, imports each owner first (:data:`OWNERS`); ``tests/test_results_blocks.py`` fails
when a block differs from what its file renders. After a study is rerun and its file replaced:
``python experiments/render_results.py``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from prmkit.core.results import render_blocks

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

OWNERS = (
    "prmkit.evaluation.study",
    "prmkit.evaluation.views",
    "prmkit.formats.views",
    "prmkit.labeling.views",
    "prmkit.rl.study_block",
    "prmkit.rl.views",
    "prmkit.scoring.views",
    "prmkit.search.views",
    "prmkit.worlds.views",
    "prmkit.serving.views",
    "prmkit.training.views",
)
"""The modules that register a results view (``VIEWS.register(name, view)``): a new view's module joins
this list."""


def render(doc: Path) -> str:
    """``doc``'s text with every results block re-rendered by its view (every owner imported first)."""
    for owner in OWNERS:
        importlib.import_module(owner)
    return render_blocks(doc.read_text(encoding="utf-8"), ROOT, page=str(doc.relative_to(ROOT)))


if __name__ == "__main__":
    for doc in DOCS:
        new = render(doc)
        if new != doc.read_text(encoding="utf-8"):
            doc.write_text(new, encoding="utf-8")
            print(f"re-rendered {doc.relative_to(ROOT)}")

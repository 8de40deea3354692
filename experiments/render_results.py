"""Re-render the results blocks of README.md and docs/*.md from the committed results files.

Every number README and docs state in a table comes from a small JSON file under ``docs/results/``;
``tests/test_results_blocks.py`` fails when a block differs from what its file renders. After a study
is rerun and its file replaced: ``python experiments/render_results.py``.
"""

from __future__ import annotations

from pathlib import Path

from prmkit.evaluation.study import render_blocks

ROOT = Path(__file__).resolve().parents[1]

if __name__ == "__main__":
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        new = render_blocks(text, ROOT)
        if new != text:
            doc.write_text(new, encoding="utf-8")
            print(f"re-rendered {doc.relative_to(ROOT)}")

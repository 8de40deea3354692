"""Numbers README and docs state are read from results files committed in the repo."""

from __future__ import annotations

import re

from prmkit.core.results import MARKER
from tests.experiments import ROOT, load_experiment

RENDER = load_experiment("render_results")


def test_every_results_block_is_what_its_committed_file_renders() -> None:
    blocks = 0
    for doc in RENDER.DOCS:
        text = doc.read_text(encoding="utf-8")
        blocks += len(MARKER.findall(text))
        assert RENDER.render(doc) == text, f"{doc.name}: run python experiments/render_results.py"
    assert blocks >= 2  # README's claims and tuning tables at least


MEASURED = re.compile(r"(?<![\w.=])(?<!\w-)\d+\.\d+(?!\.?\d)(?![A-Za-wyz_])")
"""A measured number: a decimal such as 74.4, -2.8 (its digits), 0.67 at the end of a sentence or a
ratio such as 1.5x; not a version such as 0.9.1 or torch==2.13.0, nor part of a name such as
Qwen2.5-Math-1.5B or Llama-3.1, and nothing inside code: versions and settings are written as code."""


def prose(text: str) -> str:
    """``text`` without its code: fenced blocks (commands, programs) and inline code (versions, commands,
    settings) hold no measurements."""
    text = re.sub(r"(?ms)^[ \t]*```.*?^[ \t]*```[^\n]*$", "", text)  # fences open and close a line
    return re.sub(r"`[^`\n]*`", "", text)


def test_readme_states_no_measured_number_outside_its_results_blocks() -> None:
    text = prose(MARKER.sub("", (ROOT / "README.md").read_text(encoding="utf-8")))
    stray = [m.group() for m in MEASURED.finditer(text)]
    assert not stray, f"README states {stray}: put them in a results file and a results block"

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


MEASURED = re.compile(r"(?<![\w.=-])\d+\.\d+(?![\w.])")
"""A measured number: a decimal such as 74.4 (not a version such as 0.9.1 or torch==2.13.0, and nothing
inside code: versions and settings are written as code)."""


def test_readme_states_no_measured_number_outside_its_results_blocks() -> None:
    text = MARKER.sub("", (ROOT / "README.md").read_text(encoding="utf-8"))
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # commands and code, not measurements
    text = re.sub(r"`[^`\n]*`", "", text)  # inline code: versions, commands, settings
    stray = [m.group() for m in MEASURED.finditer(text)]
    assert not stray, f"README states {stray}: put them in a results file and a results block"

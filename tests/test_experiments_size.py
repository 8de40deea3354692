"""experiments/ keeps only thin scripts (issue 62): a study with its own loop, cache or statistics belongs
in the library and runs as ``prmkit run`` stages, so no script there grows past a page or two."""

from __future__ import annotations

from pathlib import Path

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
MAX_LINES = 300
CODE = (".py", ".yaml", ".yml", ".sh")
"""What counts as a script or its config; the results files the scripts wrote (``results/*.json``) are
data, not code."""


def test_no_experiment_script_is_over_300_lines() -> None:
    scripts = [p for p in EXPERIMENTS.rglob("*") if p.is_file() and p.suffix in CODE]
    assert len(scripts) > 10  # the folder is where this test looks
    sizes = {
        str(p.relative_to(EXPERIMENTS)): len(p.read_text(encoding="utf-8").splitlines()) for p in scripts
    }
    too_long = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not too_long, f"over {MAX_LINES} lines (move the study into the library as stages): {too_long}"

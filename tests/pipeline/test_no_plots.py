"""``evaluate.plots: false``: the evaluation measures the same numbers and writes the same JSON and CSV,
but draws no PNG, and neither the run report nor the process card links an image that is not there.
At its default the key is left out of the stage keys, so runs made before it existed stay cached."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from prmkit.cards.card import EVAL_DIR
from prmkit.pipeline import run
from prmkit.pipeline.recipe import EvaluateSection
from prmkit.pipeline.runner import RunResult

RECIPE = """
name: no plots
output_dir: {out}
problems: {{n: 8, per_problem: 2}}
labels: {{methods: []}}
train:
  pretrain: {{max_steps: 2, threads: 1, batch_size: 4, tiny: {{layers: 1, width: 16, heads: 2, positions: rope}}}}
  prm: {{max_steps: 2, threads: 1}}
  prm_sources: [gold]
  orm: null
evaluate: {{problems: 3, per_problem: 2, heldout_problems: 2, bootstrap: 20, beam_problems: 1,
           zero_shot: false}}
"""
"""A world recipe cut to a second a stage: one PRM, its evaluation (beam search included, so its plot is
left out too) and its card."""

IMAGE = re.compile(r"!\[[^\]]*\]\(([^)]+)\)")
"""A Markdown image link; group 1 is its path."""


def _folder(result: RunResult, stage: str) -> Path:
    """The folder stage ``stage`` of ``result`` wrote (or was found in)."""
    return Path(result.stages[stage]["dir"])


def _images(markdown: Path) -> list[Path]:
    """Every image ``markdown`` links, resolved against its folder."""
    return [markdown.parent / path for path in IMAGE.findall(markdown.read_text(encoding="utf-8"))]


def test_a_default_evaluate_section_keeps_its_stage_key() -> None:
    """``plots`` at its default is left out of the dump the evaluation stages are keyed by (QUIET)."""
    assert "plots" not in EvaluateSection().model_dump(mode="json")
    assert EvaluateSection(plots=False).model_dump(mode="json")["plots"] is False


@pytest.mark.slow
def test_no_plots_writes_the_same_numbers_and_links_no_missing_image(tmp_path: Path) -> None:
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(RECIPE.format(out=tmp_path / "run"))
    drawn = run(recipe)
    drawn_eval = _folder(drawn, "eval-prm-gold") / "eval"
    drawn_card = _folder(drawn, "card-prm-gold") / "model" / "README.md"
    assert list(drawn_eval.glob("*.png"))  # the plots are drawn by default...
    for markdown in (drawn.report_md, drawn_card):  # ...and the report and the card link them
        assert _images(markdown) and all(p.is_file() for p in _images(markdown))

    bare = run(recipe, {"evaluate.plots": False})  # the same folder: data and training stay cached
    assert bare.stages["prm-gold"]["cached"] and not bare.stages["eval-prm-gold"]["cached"]
    eval_dir = _folder(bare, "eval-prm-gold") / "eval"
    assert eval_dir != drawn_eval and list(eval_dir.parent.rglob("*.png")) == []

    one, other = (json.loads((d / "eval_summary.json").read_text()) for d in (drawn_eval, eval_dir))
    assert {k: v for k, v in one.items() if k != "files"} == {k: v for k, v in other.items() if k != "files"}
    unmade = {"first_error_plot", "bon_plot"}  # the summary names no plot it did not draw
    assert other["files"] == {k: v for k, v in one["files"].items() if k not in unmade} | {"audit_plots": {}}
    for same in ("bon.csv", "bon_per_problem.json", "processbench.json", "predictions.jsonl"):
        assert (eval_dir / same).read_bytes() == (drawn_eval / same).read_bytes(), same
    audit, drawn_audit = (json.loads((d / "audit.json").read_text()) for d in (eval_dir, drawn_eval))
    assert audit == drawn_audit | {"plots": {}}

    card = _folder(bare, "card-prm-gold") / "model"
    assert _images(card / "README.md") == [] and list((card / EVAL_DIR).rglob("*.png")) == []
    report = bare.report_md.read_text(encoding="utf-8")
    assert "## What this run shows" in report and "## Failure-mode audits" in report
    assert _images(bare.report_md) == []  # every image this run links is an evaluation's

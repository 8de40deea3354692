"""The labeller registry: one entry per method, read by the CLI, recipes, the pipeline's plan and the label
report; a third-party labeller is one entry point plus its module, and then works everywhere."""

from __future__ import annotations

from pathlib import Path

import typer
from typer.testing import CliRunner

from prmkit.formats.inputs import read_traces
from prmkit.labeling.labellers import LABELLERS, labeller, producer
from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.stages import data_for, plan
from tests.core.test_registry import _install, site  # noqa: F401 - the fixture

PLUGIN = '''
from pathlib import Path
from pydantic import BaseModel
from prmkit.core.dataset import write_traces
from prmkit.core.model import Label, Provenance
from prmkit.formats.inputs import read_traces
from prmkit.labeling.labellers import Labeller

class CopyConfig(BaseModel):
    """Copy gold's prefix view as labels of source 'model:copy' (a stand-in for a real method)."""
    input: Path
    output: Path
    seed: int = 0

def run(config):
    traces = read_traces(config.input)
    made = Provenance(method="model", actor="copy")
    for t in traces:
        for step, rating in zip(t.steps, t.ratings("gold:world:prefix")):
            step.labels.append(Label(rating=rating, provenance=made))
    write_traces(config.output, traces)
    return {"traces": len(traces)}

LABELLER = Labeller("copy", ("model:copy",), CopyConfig, run)
'''


def test_the_built_in_methods_and_what_they_make() -> None:
    assert LABELLERS.names() == ["binary_search", "consensus", "judge", "mc", "mcts", "progress"]
    assert [producer(s) for s in ("mc_hard", "mc_soft:x", "binary_search", "judge", "consensus", "gold")] == [
        "mc", "mc", "binary_search", "judge", "consensus", None,
    ]  # fmt: skip
    order = ["problems", "mc", "binary_search", "judge", "consensus"]
    assert [data_for(s, order) for s in ("mc_hard", "binary_search", "consensus", "gold")] == [
        "judge", "binary_search", "consensus", "judge",
    ]  # MC's labels travel on in the judge's file; a filter (consensus) carries only its own  # fmt: skip
    assert data_for("mc_hard", ["problems", "mc"]) == "mc" and data_for("gold", ["problems"]) == "problems"


def test_a_plugin_labeller_works_in_the_cli_a_recipe_and_the_pipeline(site: Path, tmp_path: Path) -> None:  # noqa: F811
    _install(site, "plugin-copy", "prmkit.labellers", {"copy": "plugin_copy:LABELLER"}, "plugin_copy", PLUGIN)
    try:
        LABELLERS.refresh()
        assert "copy" in LABELLERS.names() and producer("model:copy") == "copy"
        recipe = Recipe.model_validate(
            {
                "labels": {"methods": ["copy"]},
                "train": {"prm_sources": ["model:copy"]},
                "output_dir": str(tmp_path),
            }
        )
        stages = {s.name: s for s in plan(recipe)}
        assert stages["copy"].deps == ["problems"] and stages["prm-model-copy"].deps == ["pretrain", "copy"]
        # the CLI gets `prmkit label copy` with flags from the plugin's config
        from prmkit.cli.label import register

        app = typer.Typer()
        register(app)
        assert "--input" in CliRunner().invoke(app, ["label", "copy", "--help"]).output
        # the stage runs the plugin on the sampled traces
        from prmkit.core.dataset import write_traces
        from prmkit.worlds.arithmetic import generate_problems, gold_label, sample_traces

        (tmp_path / "problems").mkdir()
        write_traces(
            tmp_path / "problems" / "traces.jsonl", gold_label(sample_traces(generate_problems(3), 2))
        )
        (tmp_path / "copy").mkdir()
        summary = stages["copy"].run(recipe, tmp_path / "copy", {"problems": tmp_path / "problems"})
        labelled = read_traces(tmp_path / "copy" / "labels.jsonl")
        assert summary == {"traces": 6} and all(
            t.first_error("model:copy") == t.first_error("gold") for t in labelled
        )
        assert labeller("copy").produces == ("model:copy",)
    finally:
        import sys

        sys.path.remove(str(site))
        LABELLERS.refresh()
        sys.path.insert(0, str(site))
    assert "copy" not in LABELLERS.names()

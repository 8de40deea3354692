"""The real-setup recipe runs as shipped, with its backends swapped for local stand-ins.

A tiny causal LM folder plays the local Hugging Face backbone and ``prmkit serve-policy`` on loopback
plays the vLLM endpoint, so the code paths are the ones a real setup takes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prmkit.core.dataset import write_traces
from prmkit.formats.inputs import read_traces
from prmkit.modeling import TinyConfig
from prmkit.pipeline import load_recipe, run
from prmkit.pipeline.stages import plan
from prmkit.training import PretrainConfig, pretrain_lm
from prmkit.worlds.arithmetic import generate_problems, gold_label, sample_traces
from tests.policies.conftest import start_server
from tests.processes import stop

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_hf_endpoint_recipe_with_local_backbone_and_loopback_endpoint(tmp_path):
    data = tmp_path / "traces.jsonl"
    write_traces(data, gold_label(sample_traces(generate_problems(12, seed=3), 3, seed=3)))
    backbone = tmp_path / "backbone"  # width 32: the test checks the real setup's code paths, not the models
    pretrain_lm(data, backbone, PretrainConfig(epochs=1, tiny=TinyConfig(width=32, heads=2)))
    proc, url = start_server(
        ["--policy", "arithmetic", "--judge", "arithmetic", "--problems", str(data)], tmp_path / "srv.log"
    )
    try:
        overrides = {
            "output_dir": str(tmp_path / "run"),
            "problems.source": str(data),
            "labels.rollouts": 2,
            "labels.rollout_policy.url": url,
            "labels.rollout_policy.model": "world",
            "labels.rollout_policy.step_separator": "\n",
            "labels.rollout_policy.concurrency": 4,
            "labels.judge.judge_url": url,
            "labels.judge.judge_model": "world",
            "train.prm": {"base_model": str(backbone), "epochs": 1, "batch_size": 8},
            "train.orm": {"base_model": str(backbone), "epochs": 1, "batch_size": 8},
            "train.prm_sources": ["mc_hard"],
            "evaluate": {
                "problems": 6,
                "per_problem": 4,
                "heldout_problems": 3,
                "bootstrap": 20,
                "beam_problems": 0,
            },
        }
        recipe = load_recipe(REPO / "recipes" / "hf-endpoint.yaml", overrides)
        assert "pretrain" not in [s.name for s in plan(recipe)]
        result = run(recipe)
    finally:
        stop(proc)
    labelled = read_traces(next((tmp_path / "run" / "stages").glob("judge-*/labels.jsonl")))
    mc = [lab for t in labelled for s in t.steps for lab in s.labels if lab.provenance.method == "mc_hard"]
    judged = [lab for t in labelled for s in t.steps for lab in s.labels if lab.provenance.method == "judge"]
    assert mc and all(lab.provenance.actor == "endpoint:world" for lab in mc)
    assert judged and all("endpoint" in (lab.provenance.actor or "") for lab in judged)
    card = next((tmp_path / "run" / "stages").glob("card-prm-mc_hard-*/model/process_card.json")).read_text()
    assert str(backbone) in card  # the card names the backbone the head was put on
    report = result.report_md.read_text()
    assert "Problems and traces from `" in report and "the backbones the recipe names" in report
    assert "| prm-mc_hard |" in report and "## Labels against gold" not in report  # no gold for a user's file

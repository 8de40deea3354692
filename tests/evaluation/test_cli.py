"""The CLI twins run the same functions: eval processbench, eval bon, audit (on stored scores)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core.dataset import write_traces
from prmkit.evaluation.suite import world_traces
from prmkit.scoring import score

from .worldlike import prm_like

runner = CliRunner()


class PrmLike:
    name = "prm-like"

    def score(self, traces):
        return prm_like(list(traces))


def scored_world_file(tmp_path):
    traces = score(PrmLike(), world_traces(10, 8, seed=3, split="test"))
    path = tmp_path / "traces.jsonl"
    write_traces(path, traces)
    return path


def test_eval_processbench_cli(real_data, tmp_path):
    files = [str(real_data / "processbench" / f"{s}.json") for s in ("gsm8k", "math")]
    result = runner.invoke(
        app, ["eval", "processbench", *files, "--source", "human:processbench", "-o", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    saved = json.loads((tmp_path / "processbench.json").read_text())
    assert [s["name"] for s in saved["subsets"]] == ["gsm8k", "math"] and saved["f1"] == 1.0


def test_eval_processbench_cli_with_world_judge(tmp_path):
    path = tmp_path / "world.jsonl"
    write_traces(path, world_traces(6, 4, seed=2, split="test"))
    result = runner.invoke(
        app, ["eval", "processbench", str(path), "--judge", "arithmetic", "-o", str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output
    saved = json.loads((tmp_path / "out" / "processbench.json").read_text())
    assert saved["threshold_from"] == "not used" and saved["gold_source"] == "gold"
    assert 0.0 <= saved["f1"] <= 1.0


def test_eval_bon_and_audit_cli(tmp_path):
    path = scored_world_file(tmp_path)
    result = runner.invoke(
        app,
        [
            "eval",
            "bon",
            str(path),
            "--prm",
            "labels:model:prm-like",
            "--bootstrap",
            "100",
            "--draws",
            "4",
            "-o",
            str(tmp_path / "bon"),
        ],
    )
    assert result.exit_code == 0, result.output
    saved = json.loads((tmp_path / "bon" / "bon.json").read_text())
    assert saved["params"]["prm"] == "model:prm-like" and {r["n"] for r in saved["rows"]} == {1, 2, 4, 8}
    assert (tmp_path / "bon" / "bon.png").exists() and (tmp_path / "bon" / "bon.csv").exists()
    result = runner.invoke(
        app, ["audit", "labels:model:prm-like", str(path), "-o", str(tmp_path / "audit"), "--max-n", "8"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "audit" / "audit.json").read_text())
    assert report["collapse"]["collapsed"] is False and report["scorer"] == "model:prm-like"

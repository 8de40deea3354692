"""check_checkpoint: a folder that cannot load is refused with its place; a Hub id is left to transformers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from prmkit.core.errors import InputError
from prmkit.modeling.checkpoint import check_checkpoint, written_by_prmkit
from prmkit.testing import make_random_prm


@pytest.fixture(scope="module")
def prm(tmp_path_factory):
    return make_random_prm(tmp_path_factory.mktemp("prm") / "ckpt", layers=2, width=16, heads=2)


def test_a_good_folder_passes_and_says_prmkit_wrote_it(prm):
    assert check_checkpoint(prm) is not None
    assert written_by_prmkit(prm) is None  # weights, tokenizer and config only: the cards are prmkit.cards'
    (Path(prm) / "process_card.json").write_text("{}")
    assert written_by_prmkit(prm) == "process_card.json"
    (Path(prm) / "process_card.json").unlink()


def test_every_problem_of_a_folder_is_collected(prm, tmp_path):
    folder = tmp_path / "bad"
    shutil.copytree(prm, folder)
    (folder / "model.safetensors").unlink()
    config = json.loads((folder / "config.json").read_text())
    config["prmkit"]["head"] = "regression"
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "tokenizer.json").write_text("{")
    with pytest.raises(InputError) as err:
        check_checkpoint(folder)
    fields = sorted(issue.field for issue in err.value.issues)
    assert fields == ["(json)", "(weights)", "prmkit.head"]


def test_hub_ids_are_left_to_transformers_but_a_missing_local_path_is_not(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    assert check_checkpoint("Qwen/Qwen2.5-Math-PRM-7B") is None  # no network: only the shape is read
    for name in ("runs/prm", "prm", "./prm", "~/nowhere/prm"):
        with pytest.raises(InputError, match="expected a checkpoint folder, found no such path"):
            check_checkpoint(name)


def _resized(prm: Path, folder: Path, width: int) -> Path:
    """A copy of ``prm`` whose config.json claims ``width`` (its weights are width 16)."""
    shutil.copytree(prm, folder)
    config = json.loads((folder / "config.json").read_text())
    config["hidden_size"] = width
    (folder / "config.json").write_text(json.dumps(config))
    return folder


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> Path:
    from prmkit.core.dataset import write_traces
    from prmkit.worlds.arithmetic import generate_problems, gold_label, sample_traces

    path = tmp_path_factory.mktemp("traces") / "traces.jsonl"
    write_traces(path, gold_label(sample_traces(generate_problems(2, seed=3, split="test"), 1, seed=3)))
    return path


def test_a_config_past_its_weights_is_refused_before_allocating(prm, traces, tmp_path):
    """Issue 66, item 1: a 52 KB checkpoint whose config claims width 8,192 (2.2 GB of float32 weights)
    under a 2 GB address-space limit: refused in one line before transformers allocates the model
    (before the fix: an allocator ``RuntimeError`` traceback, or 5.5 GB taken first without a limit)."""
    import resource
    import subprocess
    import sys

    big = _resized(Path(prm), tmp_path / "wide", 8192)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))

    args = [sys.executable, "-m", "prmkit.cli", "score", big, traces, "-o", tmp_path / "o.jsonl"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300, preexec_fn=limit)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert "Traceback" not in out
    (line,) = [line for line in out.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: {big}/config.json: hidden_size: expected the sizes of the weights")
    assert "found 8192, which imply 2.2 GB of weights" in line and "13,106 parameters" in line


def test_an_absurd_width_is_refused_by_eval_processbench(prm, traces, tmp_path):
    from typer.testing import CliRunner

    from prmkit.cli import app

    big = _resized(Path(prm), tmp_path / "huge", 10**6)
    result = CliRunner().invoke(app, ["eval", "processbench", str(traces), "--model", str(big)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
    assert f"{big}/config.json: hidden_size: " in result.output
    assert "found 1000000, which imply" in result.output


def test_weights_past_the_free_memory_are_refused(prm, monkeypatch):
    from prmkit.modeling import loading
    from prmkit.scoring import load_scorer

    monkeypatch.setattr(loading, "available_memory", lambda device: 10_000)
    with pytest.raises(InputError) as err:
        load_scorer(prm, device="cpu")
    (issue,) = err.value.issues
    assert issue.field == "(memory)" and "10.0 KB free on cpu" in issue.expected
    assert "13,106 parameters at float32" in issue.found

"""The demo's zero-shot verifier, ``prmkit pretrain``'s LM, in every command that scores, as
``likelihood:LM`` (how the pipeline reads it). By its path alone it is refused with that spec as the fix
(its process card says ``kind: lm``), and a causal LM with no card with every way it could be read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.formats.inputs import read_traces
from prmkit.scoring import load_scorer
from prmkit.scoring.remote import RemoteScorer
from tests.serving.conftest import prmkit_serve

runner = CliRunner()


@pytest.fixture(scope="module")
def lm(tmp_path_factory, world_pool: Path) -> Path:
    out = tmp_path_factory.mktemp("pretrain") / "lm"
    result = runner.invoke(app, ["pretrain", str(world_pool), "-o", str(out), "--max-steps", "3", "--threads", "2",
                                 "--tiny-layers", "2", "--tiny-width", "32", "--tiny-heads", "2"])  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def ok(args: list) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def test_eval_bon_and_audit_read_the_pretrained_lm(lm: Path, world_pool: Path, tmp_path: Path) -> None:
    spec = f"likelihood:{lm}"
    ok(["eval", "bon", world_pool, "--prm", spec, "--bootstrap", 20, "--draws", 2, "-o", tmp_path / "bon"])
    assert json.loads((tmp_path / "bon" / "bon.json").read_text())["params"]["prm"] == spec
    ok(["audit", spec, world_pool, "-o", tmp_path / "audit", "--max-n", 4])
    report = json.loads((tmp_path / "audit" / "audit.json").read_text())
    assert report["scorer"] == spec


def test_the_pretrained_lm_by_its_path_alone_is_refused_with_the_spec_to_use(lm: Path, world_pool: Path):
    """An LM is a verifier only when read as one on purpose; the refusal gives the spec that reads it."""
    result = runner.invoke(app, ["eval", "bon", str(world_pool), "--prm", str(lm)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("error:")]
    assert "prmkit pretrain's language model" in line and f"likelihood:{lm}" in line


def test_serve_reads_the_pretrained_lm(lm: Path, world_pool: Path, tmp_path: Path) -> None:
    trace = read_traces(world_pool)[0]
    with prmkit_serve(f"likelihood:{lm}", log=tmp_path / "server.log") as url:
        (scores,) = RemoteScorer(url).score([trace])
    offline = load_scorer(f"likelihood:{lm}").score([trace])[0]
    assert scores == pytest.approx(offline, abs=1e-5) and len(scores) == len(trace.steps)


def test_a_causal_lm_without_a_card_is_refused_with_its_readings(lm: Path, world_pool: Path, tmp_path: Path):
    bare = tmp_path / "bare"
    bare.mkdir()
    for f in lm.iterdir():
        if f.is_file() and f.name not in ("process_card.json", "README.md"):
            (bare / f.name).write_bytes(f.read_bytes())
    result = runner.invoke(app, ["eval", "bon", str(world_pool), "--prm", str(bare)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("error:")]
    assert (
        "name the convention in the scorer" in line and "likelihood:PATH" in line and "rlhflow:PATH" in line
    )

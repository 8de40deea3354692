"""A checkpoint in Qwen2.5-Math-PRM's layout gives its own head's scores through every command that
scores, and one whose head is missing is refused by each, in one line.

The stand-in (tests/scoring/released.py) has the released weight names, ``architectures:
[Qwen2ForProcessRewardModel]`` and an ``auto_map`` to code that is not there; its head reads class 1 with
p = 0.99995 at every token, so any score near 0.5 would be a head made up at random. Its tokenizer is a
small one built here (with ``<extra_0>`` and ChatML turns), so this runs without ``make vocab``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.formats.inputs import read_traces
from prmkit.modeling import build_tokenizer
from prmkit.scoring.remote import RemoteScorer
from tests.scoring import released
from tests.scoring.real_tokenizers import QWEN_CHAT
from tests.serving.conftest import prmkit_serve

GSM8K = Path(__file__).resolve().parents[3] / "shared" / "data" / "real" / "processbench" / "gsm8k.json"
P = 0.99995
runner = CliRunner()


@pytest.fixture(scope="module")
def tokenizer(world_pool: Path):
    texts = [t.problem.text + " " + " ".join(s.text for s in t.steps) for t in read_traces(world_pool)]
    texts += [t.problem.text + " " + " ".join(s.text for s in t.steps) for t in read_traces(GSM8K)]
    tok = build_tokenizer(texts, vocab_size=2000, extra_tokens=["<extra_0>", "<|im_start|>", "<|im_end|>"])
    tok.chat_template = QWEN_CHAT
    return tok


@pytest.fixture(scope="module")
def qwen(tmp_path_factory, tokenizer) -> Path:
    return released.qwen_prm(tmp_path_factory.mktemp("qwen") / "prm", tokenizer, confident=True)


@pytest.fixture(scope="module")
def headless(tmp_path_factory, tokenizer) -> Path:
    return released.qwen_prm(tmp_path_factory.mktemp("qwen") / "no-head", tokenizer, head=False)


def ok(args: list) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def test_score_reads_the_released_head(qwen: Path, tmp_path: Path) -> None:
    out = ok(["score", qwen, GSM8K, "-o", tmp_path / "scored.jsonl"])
    assert "scored 10 of 10 traces" in out
    scores = [s.label(f"model:{qwen}").score for t in read_traces(tmp_path / "scored.jsonl") for s in t.steps]
    assert scores and all(s == pytest.approx(P, abs=1e-5) for s in scores)


def test_eval_processbench_reads_the_released_head(qwen: Path, tmp_path: Path) -> None:
    """At a threshold of 0.9999 the head passes every step: every trace predicted error-free."""
    ok(["eval", "processbench", GSM8K, "--model", qwen, "--threshold", 0.9999, "-o", tmp_path])
    predictions = [json.loads(line) for line in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == 10 and all(p["predicted"] == -1 for p in predictions)


def test_audit_and_eval_bon_read_the_released_head(qwen: Path, world_pool: Path, tmp_path: Path) -> None:
    ok(["audit", qwen, world_pool, "-o", tmp_path / "audit", "--max-n", 4, "--threshold", 0.9999])
    report = json.loads((tmp_path / "audit" / "audit.json").read_text())
    assert report["scorer"] == str(qwen) and report["threshold"] == 0.9999
    ok(["eval", "bon", world_pool, "--prm", qwen, "--bootstrap", 20, "--draws", 2, "-o", tmp_path / "bon"])
    assert json.loads((tmp_path / "bon" / "bon.json").read_text())["params"]["prm"] == str(qwen)


def test_search_reads_the_released_head(qwen: Path, world_pool: Path, tmp_path: Path) -> None:
    ok(["bon", world_pool, "--scorer", qwen, "--n", 2, "--limit", 2, "-o", tmp_path / "bon.jsonl"])
    rows = [json.loads(line) for line in (tmp_path / "bon.jsonl").read_text().splitlines()]
    assert rows and all(r["score"] == pytest.approx(P, abs=1e-5) for r in rows)


def test_serve_reads_the_released_head(qwen: Path, world_pool: Path, tmp_path: Path) -> None:
    """``prmkit serve`` in its own process, asked over loopback HTTP by prmkit's own client."""
    trace = read_traces(world_pool)[0]
    with prmkit_serve(str(qwen), log=tmp_path / "server.log") as url:
        (scores,) = RemoteScorer(url).score([trace])
    assert len(scores) == len(trace.steps) and all(s == pytest.approx(P, abs=1e-5) for s in scores)


@pytest.mark.parametrize(
    "command",
    [
        ["score", "{ckpt}", "{world}", "-o", "{tmp}/s.jsonl"],
        ["eval", "processbench", "{world}", "--model", "{ckpt}"],
        ["eval", "bon", "{world}", "--prm", "{ckpt}"],
        ["audit", "{ckpt}", "{world}", "-o", "{tmp}/audit"],
        ["bon", "{world}", "--scorer", "{ckpt}", "-o", "{tmp}/bon.jsonl"],
    ],
)
def test_a_missing_head_is_refused_by_every_command(
    command, headless: Path, world_pool: Path, tmp_path: Path
):
    args = [a.format(ckpt=headless, world=world_pool, tmp=tmp_path) for a in command]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    assert "score.0.bias, score.0.weight, score.2.bias, score.2.weight" in lines[0]
    assert "missing from the checkpoint (they would be random)" in lines[0]

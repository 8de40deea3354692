"""A PRM trained by TRL 1.13's own ``PRMTrainer`` scores the same through prmkit as in TRL's training layout.

TRL's ``tokenize_row`` puts nothing between the prompt and the first step; prmkit's ``trl`` convention
reads exactly that layout. The run: prmkit writes world traces as TRL stepwise supervision, TRL 1.13
(``.trl-1.13``, ``make trl-prm-env``; .venv's trl 1.16 no longer has PRMTrainer) trains a tiny token
classifier on them and scores each row as ``tokenize_row`` lays it out (tests/scoring/trl_prm_run.py),
and ``prmkit.scoring.load_scorer`` reads the saved folder (its convention detected, not named).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from prmkit.formats import read, write
from prmkit.modeling import TinyConfig, build_tokenizer, causal_lm, tiny_config
from prmkit.scoring import load_scorer
from prmkit.scoring.conventions import detect
from prmkit.worlds.arithmetic import generate_problems, gold_label, sample_traces

ROOT = Path(__file__).resolve().parents[2]
TRL = ROOT / ".trl-1.13"
SCRIPT = Path(__file__).with_name("trl_prm_run.py")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (TRL / "trl").exists(), reason="TRL 1.13 is missing: run `make trl-prm-env`"),
]


def test_a_trl_prm_reads_the_same_through_prmkit_as_in_trls_layout(tmp_path: Path) -> None:
    traces = gold_label(sample_traces(generate_problems(60, seed=11, split="train"), 2, seed=11))
    data = tmp_path / "stepwise.jsonl"
    write(data, traces, "trl", source="gold")
    texts = [t.problem.text for t in traces] + [s.text for t in traces for s in t.steps]
    tok = build_tokenizer(texts, vocab_size=300)
    torch.manual_seed(0)
    base = tmp_path / "base"
    causal_lm(tiny_config(tok, TinyConfig(layers=2, width=32, heads=2, max_length=512))).save_pretrained(base)
    tok.save_pretrained(base)

    out = tmp_path / "trl-prm"
    job = {"base": str(base), "data": str(data), "out": str(out), "steps": 40, "seed": 0}
    env = os.environ | {"PYTHONPATH": str(TRL), "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run([sys.executable, str(SCRIPT)], input=json.dumps(job), text=True,
                          capture_output=True, env=env, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((out / "trl_scores.json").read_text())
    assert result["trl"] == "1.13.0"
    losses = [e["loss"] for e in result["log"] if "loss" in e]
    assert len(losses) >= 2 and losses[-1] < losses[0]  # TRL really trained it

    from transformers import AutoConfig

    assert detect(out, AutoConfig.from_pretrained(out)) == "trl"  # read as TRL's, not named
    rows = read(data, "trl")  # the same rows, read back as traces
    ours = load_scorer(out).score(rows)
    assert len(ours) == len(result["scores"])
    for mine, theirs in zip(ours, result["scores"], strict=True):
        assert mine == pytest.approx(theirs, abs=1e-5)
    spread = [s for row in ours for s in row]
    assert max(spread) - min(spread) > 0.1  # a trained head, not a constant

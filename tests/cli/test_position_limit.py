"""A backbone's position limit under ``--max-length`` (found on the real-data path, issue 22 item 8).

A GPT-2-style backbone looks positions up in a learned table (``n_positions``): before the fix
``prmkit train prm --max-length`` past it ended in ``IndexError: index out of range in self`` at the
first long trace, and the checkpoint then declared a length it cannot read, so ``prmkit score`` ended the
same way. Now training refuses with the limit named, scoring applies the ``--overlong`` policy at the
table's size, and a RoPE backbone (no table) trains past its declared limit with a warning. The
``--convention likelihood`` test guards what already worked (transformers maps GPT-2's
``max_position_embeddings`` to ``n_positions``), so a zero-shot LM keeps the same rule.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.formats.inputs import read_traces

runner = CliRunner()
POSITIONS = 128
"""The backbones' declared limit: both world traces of ``world_file`` are longer (236 and 162 tokens
with ``_tokenizer``'s vocabulary; the first step of the shorter one ends at token 100)."""


def invoke(*args: str | Path):
    return runner.invoke(app, [str(a) for a in args])


def assert_clean(result, code: int) -> str:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.output


def _tokenizer(world_file: Path):
    from prmkit.modeling.tokenizer import build_tokenizer, trace_texts

    return build_tokenizer(list(trace_texts(read_traces(world_file))) * 5, vocab_size=300, extra_tokens=[])


@pytest.fixture(scope="module")
def gpt2_lm(world_file, tmp_path_factory) -> Path:
    """A GPT-2 causal LM folder with a 128-position learned table (``n_positions``)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = _tokenizer(world_file)
    config = GPT2Config(vocab_size=len(tok), n_embd=16, n_layer=1, n_head=2, n_positions=POSITIONS,
                        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)  # fmt: skip
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("gpt2") / "lm"
    GPT2LMHeadModel(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def gpt2_prm(world_file, tmp_path_factory) -> Path:
    """A prmkit PRM on that GPT-2 whose spec declares 1,024 tokens (as a hand-edited or older one may)."""
    import torch
    from transformers import GPT2Config

    from prmkit.modeling import PrmSpec, StepTemplate, build_tokenizer, token_classifier
    from prmkit.modeling.checkpoint import save_checkpoint
    from prmkit.modeling.tokenizer import trace_texts

    tok = build_tokenizer(list(trace_texts(read_traces(world_file))) * 5, vocab_size=300)
    spec = PrmSpec(tag_id=StepTemplate().tag_id(tok), max_length=1024)
    config = GPT2Config(vocab_size=len(tok), n_embd=16, n_layer=1, n_head=2, n_positions=POSITIONS,
                        pad_token_id=tok.pad_token_id)  # fmt: skip
    torch.manual_seed(0)
    model = token_classifier(config, 2, id2label=spec.id2label())
    return save_checkpoint(model, tok, spec, tmp_path_factory.mktemp("gpt2prm") / "prm")


def test_train_refuses_a_length_past_a_learned_position_table(world_file, gpt2_lm, tmp_path):
    args = ("train", "prm", world_file, "-o", tmp_path / "prm", "--base-model", gpt2_lm,
            "--max-length", 2 * POSITIONS, "--max-steps", 1)  # fmt: skip
    out = assert_clean(invoke(*args), 2)
    assert f"--max-length {2 * POSITIONS} is more than the base model reads" in out
    assert f"n_positions {POSITIONS}" in out and f"pass --max-length {POSITIONS} or less" in out
    assert not (tmp_path / "prm" / "config.json").exists()


def test_score_cuts_at_the_table_not_the_declared_length(world_file, gpt2_prm, tmp_path):
    out = assert_clean(invoke("score", gpt2_prm, world_file, "-o", tmp_path / "a.jsonl"), 2)
    assert f"more than the limit of {POSITIONS}" in out
    out = assert_clean(
        invoke("score", gpt2_prm, world_file, "-o", tmp_path / "b.jsonl", "--overlong", "skip"), 0
    )
    assert "scored 0 of 2 traces" in out and f"longer than {POSITIONS} tokens" in out


def test_likelihood_convention_reads_n_positions(world_file, gpt2_lm, tmp_path):
    args = ("score", gpt2_lm, world_file, "-o", tmp_path / "c.jsonl", "--convention", "likelihood")
    out = assert_clean(invoke(*args, "--overlong", "truncate"), 0)
    assert f"longer than {POSITIONS} tokens" in out and "1 trace(s) skipped, 1 truncated" in out
    traces = read_traces(tmp_path / "c.jsonl")
    scored = sorted(sum(s.label("model") is not None for s in t.steps) for t in traces)
    assert scored == [0, 2]  # the longer trace's first step ends past 128 tokens; the shorter keeps two


def test_train_warns_past_a_rope_backbones_declared_limit(world_file, tmp_path, caplog):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = _tokenizer(world_file)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=POSITIONS,
                         pad_token_id=tok.pad_token_id)  # fmt: skip
    torch.manual_seed(0)
    base = tmp_path / "llama"
    LlamaForCausalLM(config).save_pretrained(base)
    tok.save_pretrained(base)
    with caplog.at_level("WARNING", logger="prmkit.training.heads"):
        args = ("train", "prm", world_file, "-o", tmp_path / "prm", "--base-model", base,
                "--max-length", 512, "--max-steps", 1, "--dev-fraction", 0.5)  # fmt: skip
        assert_clean(invoke(*args), 0)
    assert f"--max-length 512 is past the {POSITIONS} positions {base}/config.json declares" in caplog.text
    assert json.loads((tmp_path / "prm" / "config.json").read_text())["prmkit"]["max_length"] == 512

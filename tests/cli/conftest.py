"""Fixtures for the CLI's hostile-input tests: a good trace file, a tiny checkpoint, a runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from prmkit.core.dataset import write_traces
from prmkit.core.model import Trace


@pytest.fixture(scope="session")
def world_file(tmp_path_factory) -> Path:
    """Two world problems, one gold-labelled trace each, with their reference answers (labelable)."""
    from prmkit.worlds.arithmetic import generate_problems, gold_label, sample_traces

    traces: list[Trace] = gold_label(sample_traces(generate_problems(2, seed=3, split="test"), 1, seed=3))
    path = tmp_path_factory.mktemp("world") / "traces.jsonl"
    write_traces(path, traces)
    return path


@pytest.fixture(scope="session")
def world_pool(tmp_path_factory) -> Path:
    """Four gold-labelled traces of each of five world problems: enough for best-of-N curves and audits."""
    from prmkit.worlds.arithmetic import generate_problems, gold_label, sample_traces

    path = tmp_path_factory.mktemp("pool") / "traces.jsonl"
    write_traces(path, gold_label(sample_traces(generate_problems(5, seed=7, split="test"), 4, seed=7)))
    return path


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory) -> Path:
    """A random tiny prmkit PRM (2 layers, width 16) with the model card training would write beside it
    (``prmkit.cards`` writes cards; ``make_random_prm`` saves weights, tokenizer and config only): loads in
    well under a second."""
    from transformers import AutoConfig

    from prmkit.cards import write_model_card
    from prmkit.modeling.spec import read_spec
    from prmkit.testing import make_random_prm

    folder = Path(make_random_prm(tmp_path_factory.mktemp("prm") / "ckpt", layers=2, width=16, heads=2))
    write_model_card(folder, read_spec(AutoConfig.from_pretrained(folder)), None)
    return folder

"""World traces written as ProcessBench and PRM800K files and read back keep their gold first errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from prmkit import formats
from prmkit.worlds.arithmetic import generate_problems, gold_label, sample_traces


@pytest.fixture(scope="module")
def gold_traces():
    traces = gold_label(sample_traces(generate_problems(60, seed=4, split="heldout"), 4, seed=0))
    firsts = [t.first_error("gold") for t in traces]
    assert any(f == -1 for f in firsts) and any(f >= 0 for f in firsts)  # both kinds are exercised
    return traces


def test_processbench_round_trip_keeps_gold_first_errors(gold_traces, tmp_path: Path) -> None:
    path = tmp_path / "world.json"
    report = formats.write(path, gold_traces, "processbench", source="gold")
    assert report.written == len(gold_traces) and not report.dropped
    back = formats.read(path, format="processbench")
    assert [t.first_error("human:processbench") for t in back] == [t.first_error("gold") for t in gold_traces]
    assert [t.answer_correct for t in back] == [t.answer_correct for t in gold_traces]
    assert [[s.text for s in t.steps] for t in back] == [[s.text for s in t.steps] for t in gold_traces]


def test_prm800k_round_trip_keeps_gold_ratings_and_first_errors(gold_traces, tmp_path: Path) -> None:
    path = tmp_path / "world.jsonl"
    report = formats.write(path, gold_traces, "prm800k", source="gold")
    assert report.written == len(gold_traces)
    back = formats.read(path, format="prm800k")
    (source,) = {s for t in back for s in t.sources()}
    assert [t.first_error(source) for t in back] == [t.first_error("gold") for t in gold_traces]
    # PRM800K holds the whole local view, neutral (0) steps included
    assert [t.ratings(source) for t in back] == [t.ratings("gold") for t in gold_traces]

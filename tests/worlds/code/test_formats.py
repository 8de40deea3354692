"""Code-world trajectories are the core model's agent steps, so the chat and AgentProcessBench writers
write them unchanged and their readers read them back."""

from __future__ import annotations

from pathlib import Path

from prmkit import formats
from prmkit.worlds.code import gold_label, sample_traces
from prmkit.worlds.registry import world


def _traces():
    problems = world("code").generate_problems(6, seed=0)
    return gold_label(sample_traces(problems, 2, seed=0))


def test_chat_round_trip_is_lossless(tmp_path: Path) -> None:
    traces = _traces()
    path = tmp_path / "log.jsonl"
    report = formats.write(path, traces, "chat")
    assert report.written == len(traces) and report.lost == []
    back = formats.read(path, format="chat")
    assert list(back) == traces
    again = tmp_path / "again.jsonl"
    formats.write(again, list(back), "chat")
    assert again.read_bytes() == path.read_bytes()


def test_agentprocessbench_round_trip_keeps_calls_observations_and_gold_ratings(tmp_path: Path) -> None:
    traces = _traces()
    path = tmp_path / "apb.jsonl"
    report = formats.write(path, traces, "agentprocessbench", source="gold")
    assert report.written == len(traces)
    back = formats.read(path, format="agentprocessbench")
    assert len(back) == len(traces)
    for original, read in zip(traces, back, strict=True):
        assert [s.text for s in read.steps] == [s.text for s in original.steps]
        assert [s.tool_calls for s in read.steps] == [s.tool_calls for s in original.steps]
        assert [[o.content for o in s.observations] for s in read.steps] == [
            [o.content for o in s.observations] for s in original.steps
        ]
        assert read.ratings(read.sources()[0]) == original.ratings("gold")
        assert read.problem.text == original.problem.text and read.problem.tools == original.problem.tools
        assert read.final_answer == original.final_answer

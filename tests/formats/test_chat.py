"""OpenAI-style chat logs (tests/data/chat), and what text-only writers say about agent steps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prmkit.core import InputError
from prmkit.core.model import Label, Observation, Problem, Provenance, Step, ToolCall, Trace
from prmkit.formats import convert, detect_format, read, write

LOG = Path(__file__).parents[1] / "data" / "chat" / "agent_log.jsonl"
TEXT_ONLY = {"prm800k": ".jsonl", "math_shepherd": ".jsonl", "processbench": ".json", "trl": ".jsonl"}


def _records() -> list[dict]:
    return [json.loads(line) for line in LOG.read_text(encoding="utf-8").splitlines()]


def _lines(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _trace() -> Trace:
    """A labelled trajectory made in prmkit: everything a chat log cannot hold goes in its prmkit block."""
    prov = Provenance(method="mc_hard", actor="policy", params={"rollouts": 8})
    return Trace(
        id="agent-1",
        problem=Problem(id="kb-1", text="What is 6 times the age of Ada?", answer="216", source="arithmetic"),
        steps=[
            Step(
                text="",
                kind="tool_call",
                tool_calls=[ToolCall(name="lookup", arguments='{"entity": "Ada"}', id="c1")],
                observations=[Observation(content="36", call_id="c1", name="lookup")],
                labels=[Label(rating=1, provenance=prov)],
            ),
            Step(
                text="6 * 36 = 216. <answer>216</answer>",
                labels=[Label(score=0.75, provenance=prov)],
                metadata={"world": {"error": None}},
            ),
        ],
        final_answer="216",
        answer_correct=True,
        generator="sim-agent",
        metadata={"world": {"seed": 3}},
    )


def test_a_log_round_trips_byte_exactly(tmp_path):
    traces = read(LOG)
    assert traces.format == "chat" and traces.detected and detect_format(LOG) == "chat"
    out = tmp_path / "log.jsonl"
    report = write(out, traces, "chat")
    assert report.written == 2
    assert out.read_bytes() == LOG.read_bytes()
    assert "\\u00cele-de-France" in LOG.read_text(encoding="utf-8")  # json.dumps defaults, as it was written


def test_messages_map_to_steps_and_details_are_kept():
    research, hello = read(LOG)
    assert research.problem.text == "What is the population of the capital of Île-de-France?"
    assert [t["function"]["name"] for t in research.problem.tools] == ["lookup", "calculator"]
    assert [(s.kind, len(s.tool_calls), len(s.observations)) for s in research.steps] == [
        ("tool_call", 1, 1),
        ("tool_call", 2, 2),
        ("reasoning", 0, 0),
    ]
    assert research.steps[0].text == "" and research.steps[0].metadata["chat"]["raw"] == {"content": None}
    assert [o.call_id for o in research.steps[1].observations] == ["call_2", "call_3"]
    assert research.metadata["chat"]["record"]["raw"] == {"run_id": "run-7"}
    assert not research.sources() and research.answer_correct is None
    assert hello.problem.tools == [] and hello.metadata["chat"]["record"] == {"absent": ["tools"]}


def test_a_compact_log_keeps_its_layout(tmp_path):
    path = tmp_path / "compact.jsonl"
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in _records()),
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    write(out, read(path), "chat")
    assert out.read_bytes() == path.read_bytes()


def test_prmkit_to_chat_to_prmkit_is_lossless(tmp_path):
    out = tmp_path / "log.jsonl"
    report = write(out, [_trace()], "chat")
    assert report.lost == []
    (rec,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [m["role"] for m in rec["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert rec["prmkit"]["id"] == "agent-1" and list(rec["prmkit"]["labels"]) == ["1", "3"]
    assert rec["prmkit"]["labels"]["3"][0]["score"] == 0.75
    assert rec["prmkit"]["steps"] == {"3": {"metadata": {"world": {"error": None}}}}
    (back,) = read(out)
    assert back == _trace()
    again = tmp_path / "again.jsonl"
    write(again, [back], "chat")
    assert again.read_bytes() == out.read_bytes()


def test_chat_to_agentprocessbench_and_back(tmp_path):
    apb, log = tmp_path / "apb.jsonl", tmp_path / "log.jsonl"
    report = convert(LOG, apb, to_format="agentprocessbench")
    assert report.written == 2 and report.notes == {"no_final_label": 2, "no_step_labels": 2}
    convert(apb, log, to_format="chat")
    original, back = read(LOG), read(log)
    assert [t.steps for t in back] == [t.steps for t in original]
    assert [t.problem.text for t in back] == [t.problem.text for t in original]
    assert not any(
        "run_id" in line for line in log.read_text(encoding="utf-8").splitlines()
    )  # lost, reported
    assert any("a chat log's extra keys" in line for line in report.lost)


BAD_CASES = [
    (
        lambda r: r["messages"][3].update(tool_call_id="call_9"),
        "messages[3].tool_call_id: expected the id of a tool call in an earlier assistant message, found 'call_9'",
    ),
    (
        lambda r: r["messages"][4]["tool_calls"][1]["function"].update(arguments=None),
        "messages[4].tool_calls[1].function.arguments: expected a JSON string (the arguments as text, "
        'e.g. \'{"q": "x"}\'), found None',
    ),
    (
        lambda r: r["messages"][1].update(role="developer"),
        "messages[1].role: expected one of system, user, assistant, tool, found 'developer'",
    ),
    (
        lambda r: r["messages"].insert(4, {"role": "system", "content": "Be brief."}),
        "messages[4].role: expected tool or user (a system message belongs before the first step), "
        "found 'system'",
    ),
    (
        lambda r: r.update(prmkit={"labels": {"4": [{"rating": 2, "provenance": {"method": "human"}}]}}),
        "prmkit.labels.4[0].rating: expected input should be -1, 0 or 1, found 2",
    ),
    (
        lambda r: r.update(prmkit={"labels": {"3": [{"rating": 1, "provenance": {"method": "human"}}]}}),
        "prmkit.labels.3: expected the index of an assistant message, found '3'",
    ),
    (
        lambda r: r.update(prmkit={"steps": {"4": {"kind": "thought"}}}),
        "prmkit.steps.4.kind: expected input should be 'reasoning', 'tool_call' or 'observation', found 'thought'",
    ),
    (
        lambda r: r.update(prmkit={"answer_correct": "yes"}),
        "prmkit.answer_correct: expected input should be a valid boolean, found 'yes'",
    ),
]


@pytest.mark.parametrize(("spoil", "message"), BAD_CASES)
def test_located_errors(tmp_path, spoil, message):
    records = _records()
    spoil(records[0])
    path = _lines(tmp_path / "bad.jsonl", records)
    with pytest.raises(InputError) as err:
        read(path, "chat")
    assert [str(i) for i in err.value.issues] == [f"{path}:1: {message}"]
    assert len(read(path, "chat", skip_invalid=True)) == 1


@pytest.mark.parametrize("target", sorted(TEXT_ONLY))
def test_text_only_writers_report_what_they_drop(tmp_path, target):
    out = tmp_path / f"out{TEXT_ONLY[target]}"
    report = write(out, [_trace()], target)
    assert report.written >= 1
    assert f"tool calls (1) and observations (1) of agent steps: {target} holds step text only" in "\n".join(
        report.lost
    )
    assert report.notes["agent_steps_flattened"] == 1
    plain = _trace().model_copy(update={"steps": [_trace().steps[1]]})
    plain.problem.tools = []
    assert not any("tool calls" in line for line in write(out, [plain], target).lost)

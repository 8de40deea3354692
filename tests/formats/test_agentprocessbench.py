"""AgentProcessBench records, hand-written in the benchmark's own shape (tests/data/agentprocessbench)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core import InputError
from prmkit.core.model import Label, Observation, Problem, Provenance, Step, ToolCall, Trace
from prmkit.formats import convert, detect_format, read, validate, write
from prmkit.formats.agentprocessbench import SOURCE

DATA = Path(__file__).parents[1] / "data" / "agentprocessbench"
FILES = sorted(DATA.glob("*.jsonl"))
runner = CliRunner()


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, records: list[dict]) -> Path:
    text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    path.write_text(text, encoding="utf-8")
    return path


def test_every_file_round_trips_byte_exactly(tmp_path):
    assert [p.name for p in FILES] == ["hotpotqa.jsonl", "tau2.jsonl"]
    for path in FILES:
        traces = read(path)
        assert traces.format == "agentprocessbench" and traces.detected
        out = tmp_path / path.name
        report = write(out, traces, "agentprocessbench")
        assert report.written == len(traces) and not report.dropped and not report.notes
        assert out.read_bytes() == path.read_bytes(), path.name
    assert "’" in FILES[0].read_text(encoding="utf-8")  # non-ASCII is written raw, as the benchmark does


def test_messages_map_to_steps_calls_and_observations():
    first, parallel = read(FILES[0])
    assert (first.id, first.problem.id, parallel.problem.id) == (
        "searchR1_hotpotqa-0",
        "searchR1_hotpotqa-q0",
        "searchR1_hotpotqa-q1",
    )
    assert first.problem.answer == "Marion, South Australia" and first.final_answer == "Adelaide"
    assert first.answer_correct is False and parallel.answer_correct is True
    assert first.problem.tools[0]["function"]["name"] == "search"
    assert [s.kind for s in first.steps] == ["tool_call"] * 3 + ["reasoning"]
    assert first.ratings(SOURCE) == [1, 1, 1, -1] and first.first_error(SOURCE) == 3
    call = first.steps[0].tool_calls[0]
    assert call.id == "chatcmpl-tool-a1" and call.parsed_arguments() == {
        "query_list": ["Australian city founded 1838 boarding school Prime Minister"]
    }
    assert first.steps[0].observations[0].call_id == "chatcmpl-tool-a1"
    assert first.steps[0].observations[0].name == "search"
    # two parallel calls, two tool results, a neutral label, reasoning_content kept beside the step
    step = parallel.steps[0]
    assert [c.id for c in step.tool_calls] == ["chatcmpl-tool-b1", "chatcmpl-tool-b2"]
    assert [o.call_id for o in step.observations] == ["chatcmpl-tool-b1", "chatcmpl-tool-b2"]
    assert step.metadata["chat"]["raw"] == {"reasoning_content": "Two searches can run in parallel."}
    assert parallel.ratings(SOURCE) == [1, 0, 1]
    prov = step.labels[0].provenance
    assert (prov.method, prov.actor, prov.version) == ("human", "agentprocessbench", "1")


def test_tau2_user_turns_are_observations_and_ground_truth_is_kept():
    (trace,) = read(FILES[1])
    assert [len(s.observations) for s in trace.steps] == [1, 1, 1, 1, 0]
    assert [o.role for s in trace.steps for o in s.observations] == ["user", "user", "tool", "tool"]
    assert trace.steps[0].text == "Hi! How can I help you today?"
    assert trace.steps[2].observations[0].name is None  # tau2 tool messages carry no name
    assert trace.steps[3].tool_calls[0].parsed_arguments() is None  # malformed JSON: the agent's error, kept
    assert trace.problem.answer is None
    assert (
        trace.problem.metadata["agentprocessbench"]["ground_truth"]["actions"][0]["name"]
        == "cancel_reservation"
    )
    assert trace.metadata["agentprocessbench"]["fields"]["stop_reason"] == "stop"
    assert trace.metadata["chat"]["prompt"] == [_records(FILES[1])[0]["messages"][0]]


def test_lossless_through_prmkit_files_and_chat(tmp_path):
    for path in FILES:
        native = tmp_path / f"{path.stem}.prmkit.jsonl"
        report = convert(path, native)
        assert report.to_format == "prmkit" and not report.lost
        assert list(read(native)) == list(read(path))
        back = tmp_path / f"{path.stem}.back.jsonl"
        convert(native, back, to_format="agentprocessbench")
        assert back.read_bytes() == path.read_bytes()
        log = tmp_path / f"{path.stem}.chat.jsonl"
        convert(path, log, to_format="chat")
        assert detect_format(log) == "chat" and list(read(log)) == list(read(path))
        again = tmp_path / f"{path.stem}.again.jsonl"
        convert(log, again, to_format="agentprocessbench")
        assert again.read_bytes() == path.read_bytes()


def test_cli_convert_between_agent_formats(tmp_path):
    log, native, back = tmp_path / "log.jsonl", tmp_path / "t.jsonl", tmp_path / "back.jsonl"
    result = runner.invoke(app, ["convert", str(FILES[0]), str(log), "--to", "chat"])
    assert result.exit_code == 0, result.output
    assert "read 2 record(s)" in result.output and "(agentprocessbench, detected)" in result.output
    result = runner.invoke(app, ["convert", str(log), str(native)])
    assert result.exit_code == 0 and "(chat, detected)" in result.output, result.output
    result = runner.invoke(app, ["convert", str(native), str(back), "--to", "agentprocessbench"])
    assert result.exit_code == 0, result.output
    assert back.read_bytes() == FILES[0].read_bytes()
    result = runner.invoke(app, ["validate", str(FILES[1])])
    assert result.exit_code == 0 and "valid agentprocessbench (detected), 1 record(s)" in result.output


def _agent_trace(correct: bool | None = True) -> Trace:
    """A trajectory built in prmkit (as the agent world writes one), not read from any file."""
    prov = Provenance(method="gold", actor="world")
    return Trace(
        id="agent-7",
        problem=Problem(
            id="kb-3", text="How old is the mayor of Oslo?", answer="52", tools=[{"type": "function"}]
        ),
        steps=[
            Step(
                text="Look up the mayor.",
                kind="tool_call",
                tool_calls=[ToolCall(name="lookup", arguments='{"q": "mayor of Oslo"}', id="c1")],
                observations=[Observation(content="Anne Lindboe", call_id="c1", name="lookup")],
                labels=[Label(rating=1, provenance=prov)],
            ),
            Step(text="She is 52. <answer>52</answer>", labels=[Label(score=0.2, provenance=prov)]),
        ],
        final_answer="52",
        answer_correct=correct,
    )


def test_a_trace_from_prmkit_gets_defaults(tmp_path):
    out = tmp_path / "apb.jsonl"
    report = write(out, [_agent_trace(), _agent_trace(None)], "agentprocessbench")
    assert report.written == 2 and report.notes == {"no_final_label": 1}
    assert any("Trace.id, Problem.id and generator" in line for line in report.lost)
    first, second = _records(out)
    assert list(first)[:4] == ["total_index", "query_index", "sample_index", "question"]
    assert (first["total_index"], second["query_index"], second["sample_index"]) == (0, 0, 1)
    assert first["messages"][0] == {"role": "user", "content": "How old is the mayor of Oslo?"}
    assert first["messages"][2] == {
        "role": "tool",
        "name": "lookup",
        "content": "Anne Lindboe",
        "tool_call_id": "c1",
    }
    assert first["step_labels"] == {"1": 1, "3": -1}  # the soft score 0.2 thresholded at 0.5
    assert first["final_label"] == 1 and "final_label" not in second
    assert first["ground_truth"] == {"target": ["52"]}
    back = read(out)
    assert [s.tool_calls for s in back[0].steps] == [s.tool_calls for s in _agent_trace().steps]
    assert back[0].problem.answer == "52" and back[1].answer_correct is None


BAD_CASES = [
    (
        lambda r: r["messages"][3].update(tool_call_id="chatcmpl-tool-zz"),
        "messages[3].tool_call_id: expected the id of a tool call in an earlier assistant message, "
        "found 'chatcmpl-tool-zz'",
    ),
    (
        lambda r: r["step_labels"].update({"1": 1}),
        "step_labels.1: expected the index of an assistant message, found 1 (a user message)",
    ),
    (
        lambda r: r["step_labels"].update({"12": 1}),
        "step_labels.12: expected the index of an assistant message, found 12 (9 messages)",
    ),
    (
        lambda r: r["step_labels"].update({"two": 1}),
        "step_labels.two: expected a message index written as a string, e.g. '2', found 'two'",
    ),
    (
        lambda r: r["step_labels"].update({"2": True}),
        "step_labels.2: expected a rating -1, 0 or 1, found True",
    ),
    (lambda r: r["step_labels"].update({"4": 2}), "step_labels.4: expected a rating -1, 0 or 1, found 2"),
    (
        lambda r: r["messages"][2]["tool_calls"][0]["function"].update(arguments={"query_list": ["x"]}),
        "messages[2].tool_calls[0].function.arguments: expected a JSON string (the arguments as text, "
        "e.g. '{\"q\": \"x\"}'), found {'query_list': ['x']}",
    ),
    (
        lambda r: r["messages"][5].update(role="observation"),
        "messages[5].role: expected one of system, user, assistant, tool, found 'observation'",
    ),
    (lambda r: r.update(final_label=0), "final_label: expected 1 or -1, found 0"),
]


@pytest.mark.parametrize(("spoil", "message"), BAD_CASES)
def test_located_errors(tmp_path, spoil, message):
    records = _records(FILES[0])
    spoil(records[0])
    path = _write(tmp_path / "bad.jsonl", records)
    with pytest.raises(InputError) as err:
        read(path, "agentprocessbench")
    assert [str(i) for i in err.value.issues] == [f"{path}:1: {message}"]
    result = read(path, "agentprocessbench", skip_invalid=True)
    assert [t.id for t in result] == ["searchR1_hotpotqa-1"] and result.skipped.total == 1


def test_every_error_of_a_file_is_reported(tmp_path):
    records = _records(FILES[0])
    records[0]["step_labels"]["3"] = 1
    records[1]["messages"][3]["tool_call_id"] = "nope"
    path = _write(tmp_path / "bad.jsonl", records)
    check = validate(path)
    assert check.format == "agentprocessbench" and [i.line for i in check.issues] == [1, 2]

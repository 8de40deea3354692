"""Agent steps in the core model: calls and observations kept losslessly, rendered for models one way."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from prmkit.core.dataset import read_native_traces, read_parquet, write_traces
from prmkit.core.model import Observation, Problem, Step, ToolCall, Trace
from prmkit.core.render import context_length, is_agentic, render_observation, step_inputs
from prmkit.labeling.jobs import prefix_key


def _trajectory() -> Trace:
    tools = [{"type": "function", "function": {"name": "calc", "parameters": {"type": "object"}}}]
    problem = Problem(id="p1", text="What is 2 + 3?", tools=tools)
    call = ToolCall(name="calc", arguments='{"expr": "2+3"}', id="c1")
    first = Step(
        text="I will add.",
        kind="tool_call",
        tool_calls=[call],
        observations=[Observation(content="5", call_id="c1", name="calc")],
    )
    return Trace(id="t1", problem=problem, steps=[first, Step(text="The answer is 5.")], final_answer="5")


def test_math_steps_read_as_their_text() -> None:
    steps = [Step(text="2 + 3 = 5"), Step(text="The answer is 5.")]
    assert step_inputs(steps) == ["2 + 3 = 5", "The answer is 5."]
    assert not is_agentic(steps)


def test_a_call_is_read_before_its_result_and_the_result_before_the_next_step() -> None:
    first, second = step_inputs(_trajectory().steps)
    assert first == 'I will add.\n<tool_call>\n{"name": "calc", "arguments": {"expr": "2+3"}}\n</tool_call>'
    assert "5" not in first.replace("2+3", "")  # the result is not in the step that asked for it
    assert second == "<tool_response>\n5\n</tool_response>\nThe answer is 5."


def test_malformed_arguments_are_kept_as_written() -> None:
    call = ToolCall(name="calc", arguments='{"expr": 2+}')
    assert call.parsed_arguments() is None
    assert '"arguments": {"expr": 2+}' in step_inputs([Step(text="", tool_calls=[call])])[0]
    assert ToolCall(name="calc", arguments="[1]").parsed_arguments() is None


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_trajectories_round_trip_through_native_files(tmp_path, suffix) -> None:
    trace = _trajectory()
    write_traces(tmp_path / f"t{suffix}", [trace])
    read = read_native_traces if suffix == ".jsonl" else read_parquet
    assert read(tmp_path / f"t{suffix}") == [trace]


def test_math_files_do_not_change() -> None:
    trace = Trace(id="t", problem=Problem(id="p", text="q"), steps=[Step(text="s")])
    assert "tool" not in trace.model_dump_json(exclude_defaults=True)
    assert "observations" not in trace.model_dump_json(exclude_defaults=True)


def test_an_observation_role_is_checked() -> None:
    with pytest.raises(ValidationError):
        Observation.model_validate({"content": "x", "role": "system"}, strict=True)


def test_prefix_keys_see_calls_and_results() -> None:
    steps = _trajectory().steps
    other = [s.model_copy(deep=True) for s in steps]
    other[0].observations[0].content = "6"
    assert prefix_key("p1", steps) != prefix_key("p1", other)
    math = [Step(text="a"), Step(text="b")]
    assert prefix_key("p1", math) == prefix_key("p1", [Step(text="a"), Step(text="b")])


def test_the_context_of_a_step_is_the_results_it_reads_first() -> None:
    results = [Observation(content="5\nrows: 2", call_id="c1"), Observation(content="", call_id="c2")]
    calls = [ToolCall(name="calc", arguments="{}", id="c3")]
    steps = [
        Step(text="Look up.", observations=results),
        Step(text="So 5.", tool_calls=calls),
        Step(text="Done."),
    ]
    first, second, third = step_inputs(steps)
    assert context_length(first) == 0
    head = "\n".join(render_observation(o) for o in results) + "\n"
    assert second.startswith(head) and context_length(second) == len(head)
    assert second[context_length(second) :].startswith("So 5.")
    assert context_length(third) == 0
    only_results = step_inputs([Step(text="", observations=results[:1]), Step(text="")])[1]
    assert context_length(only_results) == len(only_results)  # nothing written: all of it is context


@pytest.mark.parametrize(
    "text",
    [
        "2 + 3 = 5",
        "<tool_response>\n5 with no close",
        "I saw <tool_response>\n5\n</tool_response>\nlater",
        "",
    ],
)
def test_text_without_leading_closed_results_has_no_context(text: str) -> None:
    assert context_length(text) == 0

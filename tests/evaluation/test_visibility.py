"""Views of a trace (raw, summary, actions, answer): pure, step-aligned where they keep steps, and what
each one shows of a math step and of an agent step; the first-error metrics of a scorer under each."""

from __future__ import annotations

import pytest

from prmkit.core.model import Label, Observation, Problem, Provenance, Step, ToolCall, Trace
from prmkit.evaluation.config import VIEWS
from prmkit.evaluation.visibility import first_error_by_view, view, view_predictions
from prmkit.policies import load_judge
from prmkit.scoring import load_scorer
from prmkit.worlds.registry import world

GOLD = Provenance(method="gold")


def _math() -> Trace:
    texts = [
        "She gets 3 more, so 9 + 3 = 12 apples.",
        "She has 12 apples now.",
        "12 - 2 = 10, so the answer is 10.",
    ]
    steps = [Step(text=t, labels=[Label(rating=1, provenance=GOLD)]) for t in texts]
    return Trace(id="m", problem=Problem(id="p", text="?"), steps=steps, final_answer="10")


def _agent() -> Trace:
    call = ToolCall(name="lookup", arguments='{"entity": "Tolbin", "attribute": "population"}', id="call_0")
    steps = [
        Step(
            text="", kind="tool_call", tool_calls=[call], observations=[Observation(content='{"value": 412}')]
        ),
        Step(text="The population of Tolbin is 412. By hand: 412 + 3 = 415."),
        Step(text="The answer is 415."),
    ]
    problem = Problem(id="q", text="?", tools=[{"type": "function", "function": {"name": "lookup"}}])
    return Trace(id="a", problem=problem, steps=steps, final_answer="415")


def test_views_are_pure_and_keep_every_step_and_label_but_answer() -> None:
    trace = _math()
    before = trace.model_dump()
    for name in VIEWS:
        shown = view(trace, name)
        assert shown.metadata["view"] == name and shown.final_answer == "10"
        if name == "answer":
            assert shown.steps == []
        else:
            assert [s.labels for s in shown.steps] == [s.labels for s in trace.steps]
    assert trace.model_dump() == before


def test_a_math_steps_actions_are_its_equations_and_its_summary_its_result() -> None:
    assert [s.text for s in view(_math(), "actions").steps] == [
        "9 + 3 = 12.",
        "",
        "12 - 2 = 10. The answer is 10.",
    ]
    assert [s.text for s in view(_math(), "summary").steps] == [
        "Result: 12.",
        "Result: 12.",
        "The answer is 10.",
    ]
    assert [s.text for s in view(_math(), "raw").steps] == [s.text for s in _math().steps]


def test_an_agent_steps_actions_are_its_calls_their_results_and_its_answer() -> None:
    actions = view(_agent(), "actions").steps
    assert [s.text for s in actions] == [
        "",
        "",
        "The answer is 415.",
    ]  # arithmetic in the text is not an action
    assert actions[0].tool_calls == _agent().steps[0].tool_calls
    assert actions[0].observations == _agent().steps[0].observations
    summary = view(_agent(), "summary").steps
    assert [s.text for s in summary] == ["", "Result: 415.", "The answer is 415."]
    assert summary[0].tool_calls == _agent().steps[0].tool_calls


def test_an_unknown_view_suggests_the_closest() -> None:
    with pytest.raises(ValueError, match="Did you mean 'actions'"):
        view(_math(), "action")


def test_the_answer_view_leaves_nothing_to_flag() -> None:
    traces = world("arithmetic").traces(6, 2, 0, "test")
    read = view_predictions(traces, load_judge("arithmetic"), None, "answer")
    assert read.predictions == [(-1, "ok")] * len(traces) and read.flags() == [False] * len(traces)


def test_the_oracle_under_each_view_of_world_traces() -> None:
    """The checker reads equations: it loses only prose-only errors when shown a math trace's actions,
    and every step when shown results alone; with no step it finds no error."""
    arithmetic = world("arithmetic")
    traces = arithmetic.traces(20, 4, 1, "test")
    result = first_error_by_view(traces, load_scorer(arithmetic.oracle_name))
    assert result.threshold_from == "default" and set(result.views) == set(VIEWS)
    raw, summary, actions, answer = (result.views[v] for v in ("raw", "summary", "actions", "answer"))
    assert raw.f1 == 1.0 and raw.auroc == 1.0
    assert 0.9 <= actions.f1 <= 1.0
    assert summary.acc_correct == 0.0  # "Result: 12." is no computation it can check
    assert answer.acc_correct == 1.0 and answer.acc_error == 0.0 and answer.auroc is None

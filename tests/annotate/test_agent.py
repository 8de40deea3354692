"""Agent trajectories in the annotation app (issue 23, item 4): tool calls pretty-printed or marked
malformed, observations collapsed and shown only as text, the problem's tools listed, ratings per
assistant message, nothing of a step's metadata shown, and the export keeping every call and result."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from prmkit.annotate import auth, work
from prmkit.annotate.app import create_app
from prmkit.annotate.assign import assign_items
from prmkit.annotate.export import export, export_traces
from prmkit.annotate.render import SUMMARY_CHARS, observation_summary, tool_call, tool_list
from prmkit.annotate.store import Store
from prmkit.core.model import Observation, ToolCall
from prmkit.formats.inputs import read_traces

from .conftest import HOSTILE_OBSERVATION, TOOLS, agent_trace, make_trace

# --- how calls, results and tools are shown ---------------------------------------------------------


def test_arguments_are_pretty_printed_keeping_keys_duplicates_and_numbers_as_written() -> None:
    view = tool_call(ToolCall(name="f", arguments='{"b":1.10,"a":[1e400,{"x":null}],"b":"\\u00e9\\ud800"}'))
    assert view.problem is None
    assert view.arguments == (
        '{\n  "b": 1.10,\n  "a": [\n    1e400,\n    {\n      "x": null\n    }\n  ],\n  "b": "\\u00e9\\ud800"\n}'
    )
    assert json.loads(view.arguments)["a"][1] == {"x": None}  # still JSON
    assert tool_call(ToolCall(name="f", arguments='{"q": "é ü"}')).arguments == '{\n  "q": "é ü"\n}'
    assert tool_call(ToolCall(name="f", arguments="{}")).arguments == "{}"


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ('{"expression": "2*3"', "not JSON (Expecting ',' delimiter"),
        ("", "not JSON (Expecting value"),
        ('{"x": NaN}', "not JSON (NaN is not JSON)"),
        ("[1, 2]", "a JSON list, not an object"),
        ('"text"', "a JSON string, not an object"),
        ("42", "a JSON number, not an object"),
        ("[" * 100_000, "not JSON"),
    ],
)
def test_malformed_arguments_are_shown_verbatim_with_the_reason(arguments: str, problem: str) -> None:
    view = tool_call(ToolCall(name="calculator", arguments=arguments, id="c9"))
    assert view.arguments == arguments and view.problem is not None and view.problem.startswith(problem)
    assert (view.name, view.id) == ("calculator", "c9")


def test_observation_summaries_name_the_tool_and_cut_the_text() -> None:
    calls = [ToolCall(name="search", id="c1"), ToolCall(name="calculator", id="c2")]
    long = Observation(content="word  \n " * 60, call_id="c2")
    line = observation_summary(long, calls)
    assert line.startswith("calculator: word word") and line.endswith("…") and "\n" not in line
    assert len(line) == len("calculator: ") + SUMMARY_CHARS
    named = Observation(content="4205300", call_id="c1", name="lookup")
    assert observation_summary(named, calls) == "lookup: 4205300"  # the log's own name wins
    assert observation_summary(Observation(content="ok?", role="user"), calls) == "user: ok?"
    assert observation_summary(Observation(content=" ", call_id="zz"), calls) == "tool: (empty)"


def test_tools_are_listed_from_nested_flat_and_odd_schemas() -> None:
    views = tool_list([*TOOLS, {"function": "not a dict", "name": 7}, {}])
    assert [(v.name, v.parameters) for v in views] == [
        ("search", "query"),
        ("calculator", "expression, [precision]"),
        ("(unnamed tool)", ""),
        ("(unnamed tool)", ""),
    ]
    assert views[0].description == "Look a fact up in the encyclopedia."


# --- the page and the API ---------------------------------------------------------------------------


@pytest.fixture
def agent_store(tmp_path) -> Iterator[tuple[Store, str]]:
    """A store with one agent trajectory and one math trace for alice; returns it and her token."""
    store = Store(f"sqlite:///{tmp_path / 'labels.db'}")
    work.load_items(store, [agent_trace(), make_trace("m0", ["So $3 \\times 1 = 3$.", "The answer is 3."])])
    token = auth.add_user(store, "alice")
    assign_items(store, ["alice"])
    yield store, token
    store.close()


def _pages(store: Store, token: str) -> tuple[TestClient, dict[str, str], dict[str, int]]:
    """Log alice in with her token; the annotator page of each trace, and each trace's assignment id."""
    client = TestClient(create_app(store))
    form = client.get("/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)[1]
    client.post("/login", data={"token": token, "csrf": csrf, "next": "/"}, follow_redirects=False)
    alice = auth.User("alice", "annotator")
    ids = {
        work.assignment_state(store, alice, a["id"])["trace"].id: a["id"] for a in work.queue(store, alice)
    }
    return client, {tid: client.get(f"/annotate/{aid}").text for tid, aid in ids.items()}, ids


def test_the_page_shows_calls_results_collapsed_and_tools_as_text(agent_store) -> None:
    _, pages, _ = _pages(*agent_store)
    page = pages["agent-0"]
    assert "Trajectory, one assistant message per step" in page
    assert page.count('class="step"') == 5  # one rated step per assistant message; results are not steps
    assert page.count('class="rate bad"') == 5
    # calls: pretty arguments; the malformed one verbatim and marked
    assert '<code class="call-name">search</code>' in page
    assert "{\n  &#34;query&#34;: &#34;population of Paris&#34;\n}" in page
    malformed = re.search(r'<li class="call malformed" id="call-2-0">(.*?)</li>', page, re.S)[1]
    assert "malformed" in malformed and "{&#34;expression&#34;: &#34;2*2102650&#34;</pre>" in malformed
    assert page.count("call malformed") == 1
    # results: <details> closed, summary names the tool (found by call id), content escaped, no TeX
    hostile = re.search(r'<details class="obs tool" id="obs-1-0">(.*?)</details>', page, re.S)[1]
    assert '<summary><span class="tag">result</span> search: &lt;script&gt;window.pwned' in hostile
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;Population: $x$ = 2,102,650 &lt;img" in hostile
    assert "<script>window" not in page and "<img" not in page and 'class="math"' not in hostile
    assert not re.search(r"<details[^>]* open", page)
    assert '<details class="obs user" id="obs-3-1">' in page and "answers call c4" in page
    # the problem's tools, collapsed, as text; no step or call metadata anywhere
    tools = re.search(r'<details class="tools" id="tools">(.*?)</details>', pages["agent-0"], re.S)[1]
    assert (
        "Tools the agent may call (2)" in tools
        and "<code>calculator(expression, [precision])</code>" in tools
    )
    assert "Evaluate an arithmetic expression &lt;exactly&gt;." in tools
    assert "malformed_arguments" not in page and "error_kind" not in page


def test_a_math_trace_has_no_agent_markup(agent_store) -> None:
    _, pages, _ = _pages(*agent_store)
    page = pages["m0"]
    assert "Solution, step by step" in page and '<span class="math">3 × 1 = 3</span>' in page
    for marker in ('class="calls"', 'class="observations"', 'id="tools"', "<kbd>o</kbd>"):
        assert marker not in page, marker
    # byte for byte as before the agent markup: each step's controls follow its text at once
    assert len(re.findall(r'<div class="step-text">[^\n]*</div>\n        <div class="controls"', page)) == 2


def test_the_api_gives_calls_and_results_without_metadata(agent_store) -> None:
    store, token = agent_store
    client, _, ids = _pages(store, token)
    got = client.get(
        f"/api/assignments/{ids['agent-0']}", headers={"Authorization": f"Bearer {token}"}
    ).json()
    assert got["steps"][1] == "" and got["tools"] == TOOLS
    assert got["tool_calls"][2] == [
        {"name": "calculator", "arguments": '{"expression": "2*2102650"', "id": "c3"}
    ]
    assert got["observations"][1] == [
        {"content": HOSTILE_OBSERVATION, "role": "tool", "call_id": "c2", "name": None}
    ]
    assert got["tool_calls"][4] == [] and "metadata" not in json.dumps(got)


# --- export ----------------------------------------------------------------------------------------


def test_export_keeps_calls_results_and_tools_unchanged(agent_store, tmp_path) -> None:
    store, _ = agent_store
    alice = auth.User("alice", "annotator")
    aid = next(a["id"] for a in work.queue(store, alice) if a["n_steps"] == 5)
    for step, r in enumerate([1, 1, -1, 1, 1]):
        work.rate(store, alice, aid, step, r, time_ms=100)
    work.finish(store, alice, aid, "found_error")
    original = agent_trace()
    got = {t.id: t for t in export_traces(store)}["agent-0"]
    assert got.ratings("human:alice") == [1, 1, -1, 1, 1]
    assert got.problem == original.problem
    for before, after in zip(original.steps, got.steps, strict=True):
        assert after.model_dump(exclude={"labels"}) == before.model_dump(exclude={"labels"})
    out = tmp_path / "labels.jsonl"
    export(f"sqlite:///{tmp_path / 'labels.db'}", out)
    (read,) = [t for t in read_traces(out) if t.id == "agent-0"]
    assert read == got  # and through the file: byte-for-byte arguments, results, tools, labels
    with pytest.raises(ValueError, match=r"found 1 agent trajectories .* with --format prmkit"):
        export(f"sqlite:///{tmp_path / 'labels.db'}", tmp_path / "prm800k.jsonl", format="prm800k")
    assert not (tmp_path / "prm800k.jsonl").exists()


def test_label_studio_tasks_show_an_agent_s_calls_and_results():
    from prmkit.annotate.labelstudio import task_from_trace
    from prmkit.core.render import step_inputs

    trace = agent_trace()
    steps = task_from_trace(trace, 1)["data"]["steps"]
    assert [s["text"] for s in steps] == step_inputs(trace.steps)
    assert "<tool_call>" in steps[0]["text"] and "<tool_response>" in steps[1]["text"]

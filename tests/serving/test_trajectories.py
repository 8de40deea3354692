"""The reward server scores an agent's trajectory sent as OpenAI chat messages, over real HTTP."""

from __future__ import annotations

import httpx

from prmkit.formats.chat import write_messages
from prmkit.serving.reward_server import ServerConfig, create_app
from prmkit.worlds.agent import generate_problems, sample_traces
from tests.serving.conftest import HashScorer, run_server


def _trajectory():
    traces = sample_traces(generate_problems(3, seed=5), 2, seed=0)
    return next(t for t in traces if len(t.steps) >= 3)


def test_messages_score_like_the_trajectory_offline() -> None:
    trace = _trajectory()
    messages, index = write_messages(trace)
    tools = trace.problem.tools
    plain = trace.model_copy(update={"problem": trace.problem.model_copy(update={"metadata": {}})})
    (offline,) = HashScorer().score([plain])
    with run_server(create_app(HashScorer(), ServerConfig())) as url:
        r = httpx.post(f"{url}/score", json={"traces": [{"messages": messages, "tools": tools}]})
        assert r.status_code == 200, r.text
        (result,) = r.json()["results"]
        assert result["step_scores"] == offline and len(result["step_scores"]) == len(index)
        # the same steps with their calls dropped read differently: the calls are scored, not just text
        bare = [{k: v for k, v in m.items() if k != "tool_calls"} for m in messages if m["role"] != "tool"]
        r = httpx.post(f"{url}/score", json={"traces": [{"messages": bare}]})
        assert r.status_code == 200 and r.json()["results"][0]["step_scores"] != offline


def test_bad_messages_are_a_located_422_never_a_500() -> None:
    trace = _trajectory()
    messages, _ = write_messages(trace)
    orphan = [*messages, {"role": "tool", "content": "{}", "tool_call_id": "nope"}]
    wrong_role = [*messages[:2], {"role": "robot", "content": "hi"}]
    bad_args = [*messages[:1], {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "lookup", "arguments": {"entity": "x"}}}]}]  # fmt: skip
    with run_server(create_app(HashScorer(), ServerConfig())) as url:
        for body, where in (
            ({"messages": orphan}, f"traces[0].messages[{len(messages)}].tool_call_id"),
            ({"messages": wrong_role}, "traces[0].messages[2].role"),
            ({"messages": bad_args}, "traces[0].messages[1].tool_calls[0].function.arguments"),
        ):
            r = httpx.post(f"{url}/score", json={"traces": [body]})
            assert r.status_code == 422, r.text
            assert where in r.json()["detail"], r.json()["detail"]
        both = {"messages": messages, "steps": ["a"]}
        r = httpx.post(f"{url}/score", json={"traces": [both]})
        assert r.status_code == 422 and "exactly one of" in r.json()["detail"]
        r = httpx.post(f"{url}/score", json={"traces": [{"steps": ["a"], "tools": []}]})
        assert r.status_code == 422 and "'tools' go with 'messages'" in r.json()["detail"]
        r = httpx.post(f"{url}/score", json={"traces": [{"messages": [[1]]}]})
        assert r.status_code == 422

"""The environment answers every call, right or wrong, with a short JSON observation; it never raises."""

from __future__ import annotations

import json

import pytest

from prmkit.core.model import Problem, ToolCall
from prmkit.worlds.agent import execute
from prmkit.worlds.agent.tools import evaluate


def run(problem: Problem, name: str, arguments: str) -> dict:
    obs = execute(problem, ToolCall(name=name, arguments=arguments, id="call_7"))
    assert obs.call_id == "call_7" and obs.name == name and obs.role == "tool"
    assert len(obs.content) < 60
    return json.loads(obs.content)


def test_lookups(problem: Problem) -> None:
    assert run(problem, "lookup", '{"entity": "Varen", "attribute": "mayor"}') == {"value": "Ama Osk"}
    assert run(problem, "lookup", '{"entity": "Ama Osk", "attribute": "age"}') == {"value": 52}
    assert run(problem, "lookup", '{"entity": "Nowhere", "attribute": "age"}') == {
        "error": "unknown entity: Nowhere"
    }
    assert "no attribute" in run(problem, "lookup", '{"entity": "Varen", "attribute": "type"}')["error"]
    assert "needs entity" in run(problem, "lookup", '{"entity": "Varen"}')["error"]


def test_calculator_grader_and_mistakes(problem: Problem) -> None:
    assert run(problem, "calculator", '{"expression": "(52 + 412) * 3"}') == {"result": 1392}
    assert run(problem, "calculator", '{"expression": "2 ** 999"}') == {
        "error": "not an arithmetic expression"
    }
    assert run(problem, "grader_reference", "{}") == {"answer": 1392}
    assert run(problem, "search", "{}") == {"error": "unknown tool: search"}
    assert run(problem, "lookup", '{"entity": "Varen"') == {"error": "arguments are not valid JSON"}


@pytest.mark.parametrize(
    ("expression", "value"),
    [("1 + 2 * 3", 7), ("-4 - -4", 0), ("__import__('os')", None), ("1 / 2", None), ("1.5 + 1", None),
     ("9" * 30 + " * " + "9" * 30, None), ("x + 1", None), ("", None)],
)  # fmt: skip
def test_evaluate_walks_only_integer_arithmetic(expression: str, value: int | None) -> None:
    assert evaluate(expression) == value


def test_a_problem_without_a_task_is_named() -> None:
    with pytest.raises(ValueError, match=r"problem p: metadata\.task\.kb"):
        execute(Problem(id="p", text="1 + 1?"), ToolCall(name="lookup", arguments="{}"))


def test_expressions_parse_one_at_a_time_across_threads() -> None:
    """Labellers roll out on threads; CPython 3.11's parser can raise a spurious SystemError when threads
    parse at once (python/cpython#106905), so the tools parse under one lock and agree with one thread."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    from prmkit.worlds import checks
    from prmkit.worlds.agent.tools import evaluate

    expressions = [f"{i} + {i * 7} * 3 - 12" for i in range(400)]
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(evaluate, expressions)) == [evaluate(e) for e in expressions]
    with ThreadPoolExecutor(1) as pool:
        with checks._PARSING:  # held elsewhere: a parse waits for it
            pending = pool.submit(evaluate, "1 + 1")
            time.sleep(0.2)
            assert not pending.done()
        assert pending.result(timeout=5) == 2

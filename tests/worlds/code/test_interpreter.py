"""prmkit's interpreter of the code world's Python subset: arithmetic, control flow, the node budget,
clear refusals, and no ``exec`` / ``eval`` / ``compile`` anywhere in it."""

from __future__ import annotations

import ast
import inspect

import pytest

from prmkit.worlds.code import interpreter
from prmkit.worlds.code.interpreter import MAX_NODES, ProgramError, RunError, load, outputs


def fn(*body: str) -> str:
    return "def f(n):\n" + "".join(f"    {line}\n" for line in body)


@pytest.mark.parametrize(
    ("body", "n", "value"),
    [
        (["return (n * 3 + 4) // 2 - n % 3"], 5, 7),
        (["return -n + 10"], 4, 6),
        (["return 1 if n > 2 and not n == 5 else 0"], 3, 1),
        (["return 1 < n <= 4"], 4, 1),
        (["x = 2", "x += n", "x *= 3", "return x"], 4, 18),
        (
            [
                "if n % 2 == 0:",
                "    return 0",
                "elif n > 5:",
                "    return 2",
                "else:",
                "    pass",
                "return 1",
            ],
            7,
            2,
        ),
    ],
)
def test_integer_arithmetic_and_branches(body: list[str], n: int, value: int) -> None:
    assert load(fn(*body)).call(n) == value


def test_for_over_range_and_while() -> None:
    total = fn("t = 0", "for i in range(1, n + 1):", "    t = t + i", "return t")
    stepped = fn("t = 0", "for i in range(n, 0, -2):", "    t = t + i", "return t")
    digits = fn("t = 0", "while n > 0:", "    t = t + n % 10", "    n = n // 10", "return t")
    early = fn("for i in range(10):", "    if i * i > n:", "        return i", "return -1")
    assert [load(total).call(4), load(stepped).call(5), load(digits).call(987), load(early).call(10)] == [
        10, 9, 24, 4,
    ]  # fmt: skip


def test_the_node_budget_stops_a_loop_that_never_ends() -> None:
    forever = fn("while n >= 0:", "    n = n // 10", "return n")
    with pytest.raises(RunError, match=f"step limit: over {MAX_NODES} nodes"):
        load(forever).call(5)
    assert outputs(forever, (5,))[0].startswith("step limit")
    long_for = fn("t = 0", "for i in range(10 ** 6):", "    t = t + 1", "return t")
    with pytest.raises(ProgramError, match="Pow"):
        load(long_for)
    counted = fn("t = 0", "for i in range(n):", "    t = t + 1", "return t")
    assert load(counted).call(100) == 100
    with pytest.raises(RunError, match="step limit"):
        load(counted).call(100_000)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("import os\n", "line 1: unsupported syntax: anything but exactly one function definition"),
        (fn("return n ** 2"), "line 2: unsupported syntax: the operator Pow"),
        (fn("print(n)", "return n"), "line 2: unsupported syntax: the statement Expr"),
        (fn("return [n][0]"), "line 2: unsupported syntax: the expression Subscript"),
        (fn("return 'n'"), "line 2: unsupported syntax: the expression Constant"),
        (fn("return n / 2"), "line 2: unsupported syntax: the operator Div"),
        (fn("for i in [1, 2]:", "    n = i", "return n"), "line 2: unsupported syntax: a for loop over anything"),
        (fn("while n:", "    n = 0", "else:", "    n = 1", "return n"), "line 2: unsupported syntax: a loop with an else"),
        ("def f(n):\n    return n\ndef g(n):\n    return n\n", "unsupported syntax: anything but exactly one"),
        ("def f(n=1):\n    return n\n", "line 1: unsupported syntax: decorators, defaults"),
        (fn("for i in range(1, n)", "    n = i", "return n"), "line 2: SyntaxError"),
    ],
)  # fmt: skip
def test_unsupported_syntax_is_refused_naming_the_line(source: str, message: str) -> None:
    with pytest.raises(ProgramError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        load(source)
    assert outputs(source, (1, 2)) == (str(err.value), str(err.value))  # every test fails with it


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (["return n // 0"], "ZeroDivisionError"),
        (["return m"], "NameError: name 'm' is not defined"),
        (["t = 10", "for i in range(20):", "    t = t * 1000", "return t"], "integer too large"),
        (["if n > 100:", "    return 1"], "f() ended without a return"),
    ],
)
def test_a_failing_call_is_a_run_error_with_a_message(body: list[str], message: str) -> None:
    with pytest.raises(RunError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load(fn(*body)).call(1)


def test_the_interpreter_never_hands_code_to_python() -> None:
    tree = ast.parse(inspect.getsource(interpreter))
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert not called & {"exec", "eval", "compile", "__import__"}

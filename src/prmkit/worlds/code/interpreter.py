"""prmkit's own interpreter of a small Python subset: the code world's programs run here, never in Python.

A program is one ``def`` of positional parameters whose body uses only what the generator (and the
simulated agent's edits) write: integer arithmetic (``+ - * // %``, unary ``-``), comparisons (chained
too), ``and`` / ``or`` / ``not``, ``x if c else y``, local assignment (``=``, ``+=`` ...), ``if`` /
``elif`` / ``else``, ``for NAME in range(...)``, ``while``, ``return`` and ``pass``. Anything else is
refused when the program is loaded, with the line and what is not supported
(:class:`ProgramError`): a test of such a program fails with that message, as a real test run
reports a syntax error.

Nothing is handed to ``exec``, ``eval`` or ``compile``: :func:`load` walks the ``ast`` once and builds a
closure per node, and running the program calls those closures. Every executed statement spends its
number of nodes from a budget (:data:`MAX_NODES` per call), so no program loops forever: a call that
spends it fails with "step limit", which is how a ``while`` that never ends shows in a test. Integers
are bounded too (:data:`MAX_MAGNITUDE`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from prmkit.worlds.checks import parse_python

MAX_NODES = 5_000
"""How many AST nodes one call may evaluate (a statement spends its own size, a loop turn one more)."""
MAX_MAGNITUDE = 10**12
"""The largest integer a program may compute; beyond it a call fails (no program of the world needs it)."""

Env = dict[str, Any]
Expr = Callable[[Env], Any]
Stmt = Callable[[Env, "Budget"], "Return | None"]


class ProgramError(ValueError):
    """A program that does not parse or uses syntax outside the subset: one line, with its place."""


class RunError(RuntimeError):
    """A call that failed while running (an unknown name, division by zero, the step limit)."""


@dataclass
class Return:
    """A ``return`` travelling out of the loops and ``if``s around it."""

    value: Any


class Budget:
    """The nodes a call may still evaluate."""

    def __init__(self, nodes: int):
        self.left = nodes

    def spend(self, cost: int) -> None:
        self.left -= cost
        if self.left < 0:
            raise RunError(f"step limit: over {MAX_NODES} nodes (a loop that never ends?)")


def _refuse(node: ast.AST, what: str) -> ProgramError:
    line = getattr(node, "lineno", None)
    where = f"line {line}: " if line is not None else ""
    return ProgramError(
        f"{where}unsupported syntax: {what} (the interpreter runs int arithmetic, comparisons, if, "
        "for over range, while, assignment and return)"
    )


def _checked(value: Any) -> Any:
    if type(value) is int and abs(value) > MAX_MAGNITUDE:
        raise RunError(f"integer too large: {value}")
    return value


def _floordiv(a: Any, b: Any) -> Any:
    if b == 0:
        raise RunError("ZeroDivisionError: integer division by zero")
    return a // b


def _mod(a: Any, b: Any) -> Any:
    if b == 0:
        raise RunError("ZeroDivisionError: integer modulo by zero")
    return a % b


BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: _floordiv,
    ast.Mod: _mod,
}
COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
}


def _name(node: ast.Name) -> Expr:
    name = node.id

    def get(env: Env) -> Any:
        try:
            return env[name]
        except KeyError:
            raise RunError(f"NameError: name {name!r} is not defined") from None

    return get


def _binop(node: ast.BinOp) -> Expr:
    op = BINARY.get(type(node.op))
    if op is None:
        raise _refuse(node, f"the operator {type(node.op).__name__}")
    left, right = expr(node.left), expr(node.right)
    return lambda env: _checked(op(left(env), right(env)))


def _compare(node: ast.Compare) -> Expr:
    ops = []
    for o in node.ops:
        if type(o) not in COMPARE:
            raise _refuse(node, f"the comparison {type(o).__name__}")
        ops.append(COMPARE[type(o)])
    parts = [expr(node.left), *(expr(c) for c in node.comparators)]

    def compare(env: Env) -> bool:
        left = parts[0](env)
        for op, part in zip(ops, parts[1:], strict=True):
            right = part(env)
            if not op(left, right):
                return False
            left = right
        return True

    return compare


def _boolop(node: ast.BoolOp) -> Expr:
    values = [expr(v) for v in node.values]
    if isinstance(node.op, ast.And):
        return lambda env: all(v(env) for v in values)
    return lambda env: any(v(env) for v in values)


def expr(node: ast.expr) -> Expr:
    """The closure that evaluates ``node``; a :class:`ProgramError` for anything outside the subset."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, bool):
        value = node.value
        return lambda env: value
    if isinstance(node, ast.Name):
        return _name(node)
    if isinstance(node, ast.BinOp):
        return _binop(node)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.Not):
        inner = expr(node.operand)
        return (lambda env: -inner(env)) if isinstance(node.op, ast.USub) else (lambda env: not inner(env))
    if isinstance(node, ast.Compare):
        return _compare(node)
    if isinstance(node, ast.BoolOp):
        return _boolop(node)
    if isinstance(node, ast.IfExp):
        test, body, orelse = expr(node.test), expr(node.body), expr(node.orelse)
        return lambda env: body(env) if test(env) else orelse(env)
    raise _refuse(node, f"the expression {type(node).__name__}")


def size(node: ast.AST) -> int:
    """The number of nodes a statement evaluates once (its own and its expressions', not its body's)."""
    if isinstance(node, ast.If | ast.While):
        return 1 + sum(1 for _ in ast.walk(node.test))
    if isinstance(node, ast.For):
        return 1 + sum(1 for _ in ast.walk(node.iter))
    return sum(1 for _ in ast.walk(node))


def block(nodes: list[ast.stmt]) -> Stmt:
    """The closure that runs a list of statements in order, stopping at a ``return``."""
    stmts = [stmt(n) for n in nodes]

    def run(env: Env, budget: Budget) -> Return | None:
        for s in stmts:
            out = s(env, budget)
            if out is not None:
                return out
        return None

    return run


def _assign(node: ast.Assign | ast.AugAssign) -> Stmt:
    target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
    target = node.target if isinstance(node, ast.AugAssign) else target
    if not isinstance(target, ast.Name):
        raise _refuse(node, "assignment to anything but one local name")
    name, value, cost = target.id, expr(node.value), size(node)
    if isinstance(node, ast.AugAssign):
        op = BINARY.get(type(node.op))
        if op is None:
            raise _refuse(node, f"the operator {type(node.op).__name__}=")
        get, operand = _name(ast.Name(id=name)), value

        def value(env: Env) -> Any:
            return _checked(op(get(env), operand(env)))

    def assign(env: Env, budget: Budget) -> None:
        budget.spend(cost)
        env[name] = value(env)

    return assign


def _range(node: ast.For) -> Callable[[Env], range]:
    call = node.iter
    ok = isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "range"
    if not ok or call.keywords or not 1 <= len(call.args) <= 3:  # type: ignore[union-attr]
        raise _refuse(node, "a for loop over anything but range(...) of one to three arguments")
    args = [expr(a) for a in call.args]  # type: ignore[union-attr]

    def make(env: Env) -> range:
        values = [a(env) for a in args]
        if len(values) == 3 and values[2] == 0:
            raise RunError("ValueError: range() arg 3 must not be zero")
        return range(*values)

    return make


def _loop(node: ast.For | ast.While) -> Stmt:
    if node.orelse:
        raise _refuse(node, "a loop with an else")
    body, cost = block(node.body), size(node)
    if isinstance(node, ast.For):
        if not isinstance(node.target, ast.Name):
            raise _refuse(node, "a for loop target that is not one name")
        name, values = node.target.id, _range(node)

        def for_loop(env: Env, budget: Budget) -> Return | None:
            budget.spend(cost)
            for value in values(env):
                budget.spend(1)
                env[name] = value
                out = body(env, budget)
                if out is not None:
                    return out
            return None

        return for_loop
    test = expr(node.test)

    def while_loop(env: Env, budget: Budget) -> Return | None:
        budget.spend(cost)
        while test(env):
            budget.spend(cost)
            out = body(env, budget)
            if out is not None:
                return out
        return None

    return while_loop


def stmt(node: ast.stmt) -> Stmt:
    """The closure that runs one statement; a :class:`ProgramError` for anything outside the subset."""
    cost = size(node)
    if isinstance(node, ast.Assign | ast.AugAssign):
        return _assign(node)
    if isinstance(node, ast.If):
        test, body, orelse = expr(node.test), block(node.body), block(node.orelse)

        def branch(env: Env, budget: Budget) -> Return | None:
            budget.spend(cost)
            return body(env, budget) if test(env) else orelse(env, budget)

        return branch
    if isinstance(node, ast.For | ast.While):
        return _loop(node)
    if isinstance(node, ast.Return) and node.value is not None:
        value = expr(node.value)

        def ret(env: Env, budget: Budget) -> Return:
            budget.spend(cost)
            return Return(value(env))

        return ret
    if isinstance(node, ast.Pass):
        return lambda env, budget: None
    raise _refuse(node, f"the statement {type(node).__name__}")


@dataclass(frozen=True)
class Program:
    """A loaded program: its one function, ready to call."""

    name: str
    params: tuple[str, ...]
    body: Stmt
    tree: ast.FunctionDef

    def call(self, *args: int, nodes: int = MAX_NODES) -> Any:
        """The function's value at ``args``; a :class:`RunError` when the call fails or runs too long."""
        if len(args) != len(self.params):
            raise RunError(f"TypeError: {self.name}() takes {len(self.params)} arguments, {len(args)} given")
        out = self.body(dict(zip(self.params, args, strict=True)), Budget(nodes))
        if out is None:
            raise RunError(f"{self.name}() ended without a return")
        return out.value


def load(source: str) -> Program:
    """Parse and check ``source`` (one ``def``); a :class:`ProgramError` names the line and the problem."""
    try:
        tree = parse_python(source)
    except SyntaxError as err:
        raise ProgramError(f"line {err.lineno}: SyntaxError: {err.msg}") from None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        raise _refuse(tree.body[0] if tree.body else tree, "anything but exactly one function definition")
    fn = tree.body[0]
    a = fn.args
    if fn.decorator_list or a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
        raise _refuse(fn, "decorators, defaults or starred parameters")
    return Program(fn.name, tuple(p.arg for p in a.args), block(fn.body), fn)


@lru_cache(maxsize=8192)
def cached(source: str) -> Program | ProgramError:
    """:func:`load`, remembered (a problem's traces run the same few programs again and again)."""
    try:
        return load(source)
    except ProgramError as err:
        return err


@lru_cache(maxsize=65536)
def outputs(source: str, inputs: tuple[int, ...]) -> tuple[int | str, ...]:
    """The program's value at each input (one argument each), or the error's message as text."""
    program = cached(source)
    if isinstance(program, ProgramError):
        return tuple(str(program) for _ in inputs)
    out: list[int | str] = []
    for x in inputs:
        try:
            value = program.call(x)
            out.append(int(value) if type(value) is bool else value)
        except RunError as err:
            out.append(str(err))
    return tuple(out)

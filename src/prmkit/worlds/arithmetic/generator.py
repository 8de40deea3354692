"""Seeded GSM8K-like word problems built from a small computation graph.

A problem is a chain: a start quantity ``q0``, then operations ``s_k = s_{k-1} op q_{k+1}`` (``s_{-1}``
is ``q0``). Every operation is a table fact (see :class:`~prmkit.worlds.arithmetic.config.WorldConfig`). The graph
is stored in ``Problem.metadata["graph"]`` in a general form (each operation names its operands as
``"q<i>"`` given quantities or ``"s<j>"`` earlier results), so the checker can judge any trace.

Determinism: each problem's random stream is ``random.Random`` seeded with an integer derived by
BLAKE2 from ``(seed, split, index)``; nothing depends on ``hash()`` or set order, so the same seed gives
the same problems on any machine. Train and test partition the space of graphs by a hash of the
graph's numbers, so the two never share a graph whatever ``n`` is.
"""

from __future__ import annotations

import random
from typing import Any

from prmkit.core.model import Problem
from prmkit.worlds.arithmetic import templates as T
from prmkit.worlds.arithmetic.config import WORLD_VERSION, WorldConfig
from prmkit.worlds.splits import draw_in_split, problem_rng

OPS = ("+", "-", "*", "/")
PROBLEM_SEED_TAG = "world-1"
"""Goes into every problem's seed. world-2 changed the policy, not the problems, so it keeps world-1's tag:
the same seed gives the same problems in both (bump it with the version when problems change)."""


def apply_op(op: str, a: int, b: int) -> int:
    """The exact result of a table fact (division is exact by construction)."""
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    return a // b


def _feasible(r: int, n: int) -> list[tuple[str, list[int]]]:
    """The operations that keep ``r op b`` a table fact, each with its allowed second operands.

    Operands are at least 2 (no ``+ 1``, ``* 1``: trivial facts teach a checker nothing).
    """
    out: list[tuple[str, list[int]]] = []
    if r <= n:
        out.append(("+", list(range(2, n + 1))))
        out.append(("*", list(range(2, n + 1))))
    if 3 <= r <= 2 * n:
        out.append(("-", list(range(max(2, r - n), min(n, r - 1) + 1))))
    divisors = [b for b in range(2, n + 1) if r % b == 0 and r // b <= n]
    if divisors:
        out.append(("/", divisors))
    return out


def _chain(rng: random.Random, n_ops: int, n: int) -> tuple[int, list[tuple[str, int, int]]]:
    """A start value and ``n_ops`` (op, operand, result) triples, each a table fact."""
    start = rng.randint(2, n)
    r, ops = start, []
    for _ in range(n_ops):
        op, choices = rng.choice(_feasible(r, n))
        b = rng.choice(choices)
        r = apply_op(op, r, b)
        ops.append((op, b, r))
    return start, ops


def _signature(chain: tuple[int, list[tuple[str, int, int]]]) -> str:
    """What splits train from test: the chain's numbers and operations."""
    start, ops = chain
    return f"{start}|" + "|".join(f"{op}{b}" for op, b, _ in ops)


def _pick(rng: random.Random, options: tuple[str, ...], variety: int) -> str:
    return rng.choice(T.level(options, variety))


def _text(rng: random.Random, graph: dict[str, Any], variety: int) -> str:
    """The problem's words: start, one sentence per operation, maybe a distractor, the question."""
    slots = {"name": graph["name"], "P": graph["pronoun"].capitalize(), "p": graph["pronoun"]}
    slots.update(item=graph["item"], other=graph["other"])
    quantities = graph["quantities"]
    sentences = [_pick(rng, T.START, variety).format(v=quantities[0], **slots)]
    for k, op in enumerate(graph["ops"]):
        sentences.append(_pick(rng, T.PROBLEM_OP[op["op"]], variety).format(v=quantities[k + 1], **slots))
    if graph["distractor"] is not None:
        where = rng.randint(1, len(sentences))
        sentence = _pick(rng, T.DISTRACTOR, variety).format(v=quantities[graph["distractor"]], **slots)
        sentences.insert(where, sentence)
    sentences.append(_pick(rng, T.QUESTION, variety).format(**slots))
    return " ".join(sentences)


def _graph(
    rng: random.Random, start: int, ops: list[tuple[str, int, int]], config: WorldConfig
) -> dict[str, Any]:
    pool = T.POOL_SIZE[config.phrasing_variety]
    (name, pronoun), (other, _) = rng.sample(T.NAMES[:pool], 2)
    quantities = [start] + [b for _, b, _ in ops]
    distractor = None
    if rng.random() < config.distractor_prob:
        quantities.append(rng.randint(2, config.max_value))
        distractor = len(quantities) - 1
    graph_ops = [
        {"op": op, "args": ["q0" if k == 0 else f"s{k - 1}", f"q{k + 1}"], "result": r}
        for k, (op, _, r) in enumerate(ops)
    ]
    return {
        "version": WORLD_VERSION,
        "quantities": quantities,
        "ops": graph_ops,
        "distractor": distractor,
        "name": name,
        "pronoun": pronoun,
        "other": other,
        "item": rng.choice(T.ITEMS[:pool]),
        "variety": config.phrasing_variety,
        "max_value": config.max_value,
    }


def generate_problem(
    index: int, seed: int = 0, config: WorldConfig | None = None, split: str = "train"
) -> Problem:
    """Problem number ``index`` of a split (independent of how many others are generated): a chain of
    table facts in words, its computation graph in ``metadata["graph"]``."""
    config = config or WorldConfig()
    rng = problem_rng(PROBLEM_SEED_TAG, seed, split, index)
    lo, hi = config.ops_range(split)
    start, ops = draw_in_split(
        split, config.test_fraction, lambda: _chain(rng, rng.randint(lo, hi), config.max_value), _signature
    )
    graph = _graph(rng, start, ops, config)
    graph["split"] = split
    return Problem(
        id=f"world-{split}-{seed}-{index:06d}",
        text=_text(rng, graph, config.phrasing_variety),
        answer=str(ops[-1][2]),
        source="world",
        metadata={"graph": graph, "world_version": WORLD_VERSION},
    )


def generate_problems(
    n: int, seed: int = 0, config: WorldConfig | None = None, split: str = "train"
) -> list[Problem]:
    """``n`` problems of ``split`` ("train", "test" or "heldout"); the same seed gives the same problems."""
    config = config or WorldConfig()
    return [generate_problem(i, seed, config, split) for i in range(n)]

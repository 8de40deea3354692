"""Seeded agent tasks, each with its own made-up knowledge base.

Every problem gets a fresh KB of towns, companies and people whose names are built from syllables
(``Varen``, ``Brimor Labs``, ``Ama Osk``) and whose numbers are drawn anew, so nothing can be memorised:
a step is right or wrong only against the observations in its context. The question is one sentence,
evaluated left to right: ``What is the age of the mayor of Varen plus the population of Tolbin?``

``Problem.metadata["task"]`` holds what the tools and the checker need: the KB, the terms (each a list
of ``[entity, attribute]`` hops, the person's true name in a second hop), their values, the operations,
the intermediate results and the answer.

Determinism: problem ``i`` of a split draws from ``random.Random`` seeded by a BLAKE2 digest of
``(AGENT_WORLD_VERSION, seed, split, i)``; nothing depends on ``hash()`` or set order. Train and test
partition the task space by a digest of the question, so they never share one whatever ``n`` is.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from prmkit.core.model import Problem
from prmkit.worlds.agent.config import AGENT_WORLD_VERSION, AgentWorldConfig
from prmkit.worlds.agent.text import apply
from prmkit.worlds.agent.tools import TOOLS
from prmkit.worlds.splits import draw_in_split, problem_rng

SYLLABLES = (
    "va", "ren", "tol", "bin", "dun", "mor", "kel", "sar", "bri", "ost", "lum", "fen", "gra", "hal",
    "zet", "mir", "pon", "dra", "cul", "wes", "ama", "osk", "tiv", "rod", "nel", "quo", "bas", "ilm",
)  # fmt: skip
NUMERIC = {
    "town": {"population": (100, 999), "area": (10, 99)},
    "company": {"employees": (10, 500), "offices": (2, 30)},
    "person": {"age": (20, 89), "height": (150, 199)},
}
"""Numeric attributes by entity type, with their (lowest, highest) values."""
LINKS = {"town": "mayor", "company": "founder"}
"""The attribute of a town / company that names a person (the first hop of a two-hop term)."""
OP_WORDS = {"+": "plus", "-": "minus", "*": "times"}


class _Names:
    """Unique made-up names within one KB."""

    def __init__(self, rng: random.Random):
        self.rng, self.used = rng, set()

    def _word(self, parts: int) -> str:
        return "".join(self.rng.choice(SYLLABLES) for _ in range(parts)).capitalize()

    def new(self, kind: str) -> str:
        while True:
            if kind == "town":
                name = self._word(2)
            elif kind == "company":
                name = f"{self._word(2)} Labs"
            else:
                name = f"{self._word(1)} {self._word(1)}"
            if name not in self.used:
                self.used.add(name)
                return name


def _entity(rng: random.Random, names: _Names, kb: dict[str, dict[str, Any]], kind: str) -> str:
    """Add a town or company and its linked person to ``kb``; return its name."""
    name, person = names.new(kind), names.new("person")
    kb[name] = {"type": kind, **{a: rng.randint(*r) for a, r in NUMERIC[kind].items()}, LINKS[kind]: person}
    kb[person] = {"type": "person", **{a: rng.randint(*r) for a, r in NUMERIC["person"].items()}}
    return name


def _op(rng: random.Random, running: int, value: int) -> str:
    """An operation that keeps the running value positive and moderate."""
    options = ["+"]
    if running > value:
        options.append("-")
    if min(running, value) <= 99 and running * value <= 100_000:
        options.append("*")
    return rng.choice(options)


def _draw(rng: random.Random, config: AgentWorldConfig, split: str) -> dict[str, Any]:
    lo, hi, max_lookups = config.terms_range(split)
    n_terms = rng.randint(lo, hi)
    names, kb = _Names(rng), {}
    terms, phrases, lookups = [], [], 0
    for i in range(n_terms):
        kind = rng.choice(("town", "company"))
        host = _entity(rng, names, kb, kind)
        budget_left = max_lookups - lookups - (n_terms - i - 1)
        if budget_left >= 2 and rng.random() < config.hop_prob:
            link, person = LINKS[kind], kb[host][LINKS[kind]]
            attribute = rng.choice(tuple(NUMERIC["person"]))
            hops = [[host, link], [person, attribute]]
            phrases.append(f"the {attribute} of the {link} of {host}")
        else:
            attribute = rng.choice(tuple(NUMERIC[kind]))
            hops = [[host, attribute]]
            phrases.append(f"the {attribute} of {host}")
        lookups += len(hops)
        terms.append({"hops": hops, "value": kb[hops[-1][0]][hops[-1][1]]})
    for _ in range(config.distractors):
        _entity(rng, names, kb, rng.choice(("town", "company")))
    running, ops, results = terms[0]["value"], [], []
    for term in terms[1:]:
        op = _op(rng, running, term["value"])
        running = apply(op, running, term["value"])
        ops.append(op)
        results.append(running)
    words = [f"{phrases[0]} {OP_WORDS[ops[0]]} {phrases[1]}"]
    words += [f"then {OP_WORDS[op]} {p}" for op, p in zip(ops[1:], phrases[2:], strict=True)]
    question = f"What is {', '.join(words)}?"
    return {"kb": kb, "terms": terms, "ops": ops, "results": results, "answer": running, "question": question}


def _question(task: dict[str, Any]) -> str:
    """What splits train from test: the question's words."""
    return task["question"]


def generate_problem(
    index: int, seed: int = 0, config: AgentWorldConfig | None = None, split: str = "train"
) -> Problem:
    """Problem number ``index`` of a split (independent of how many others are generated): a question over
    a fresh knowledge base, the task in ``metadata["task"]`` and the tools in ``Problem.tools``."""
    config = config or AgentWorldConfig()
    rng = problem_rng(AGENT_WORLD_VERSION, seed, split, index)
    task = draw_in_split(split, config.test_fraction, lambda: _draw(rng, config, split), _question)
    question = task.pop("question")
    task.update(version=AGENT_WORLD_VERSION, split=split)
    return Problem(
        id=f"agentworld-{split}-{seed}-{index:06d}",
        text=question,
        answer=str(task["answer"]),
        source=AGENT_WORLD_VERSION,
        tools=copy.deepcopy(TOOLS),
        metadata={"task": task},
    )


def generate_problems(
    n: int, seed: int = 0, split: str = "train", config: AgentWorldConfig | None = None
) -> list[Problem]:
    """``n`` problems of ``split`` ("train", "test" or "heldout"); the same seed gives the same problems."""
    config = config or AgentWorldConfig()
    return [generate_problem(i, seed, config, split) for i in range(n)]

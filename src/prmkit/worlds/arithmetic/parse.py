"""Rebuild a world problem's computation graph from its words.

Clients that speak text (OpenRLHF's ``/get_reward``, a policy's prompt) send the problem without the
``metadata.graph`` the generator stored, so the gold checker could not judge them. The world's sentences
come from a closed set of templates (``templates.py``), so the graph can be read back exactly: the start
quantity, one (operation, quantity) per sentence in order, and a distractor's quantity. The problem is
found inside whatever instruction text a trainer wraps around it (:func:`find_problem`); text that
holds no problem made of those sentences gives None: the checker then says it judges world problems only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from prmkit.worlds.arithmetic import templates as T
from prmkit.worlds.arithmetic.config import WORLD_VERSION
from prmkit.worlds.arithmetic.generator import apply_op

_SLOTS = {
    "{name}": r"[A-Z][a-z]+",
    "{other}": r"[A-Z][a-z]+",
    "{P}": r"(?:She|He)",
    "{p}": r"(?:she|he)",
    "{item}": r"[a-z]+",
    "{v}": r"(?P<v>\d+)",
}


def _regex(template: str) -> re.Pattern[str]:
    out = re.escape(template)
    for slot, pattern in _SLOTS.items():
        out = out.replace(re.escape(slot), pattern)
    return re.compile(out)


@cache
def _sentence_kinds() -> list[tuple[str, re.Pattern[str]]]:
    """(kind, regex) for every template of every variety level; kind is start, distractor, question or
    an operation sign."""
    kinds = [("start", t) for t in T.START] + [("distractor", t) for t in T.DISTRACTOR]
    kinds += [("question", t) for t in T.QUESTION]
    kinds += [(op, t) for op, templates in T.PROBLEM_OP.items() for t in templates]
    return [(kind, _regex(t)) for kind, t in kinds]


def _sentence_at(text: str, at: int) -> tuple[str, int | None, int] | None:
    """(kind, quantity, end) of the world sentence that starts at ``at`` in ``text``, if one does."""
    for kind, regex in _sentence_kinds():
        m = regex.match(text, at)
        if m:
            return kind, int(m["v"]) if "v" in regex.groupindex else None, m.end()
    return None


OPENERS = frozenset(".?!:;\"'([{*>\n")
"""What may stand before a world problem's first sentence (spaces apart): nothing, the end of a
sentence, a label (``Question:``), a quote, a bracket or a line break. So ``Suppose Tom has 3 apples.``
is not read as ``Tom has 3 apples.`` cut out of a longer sentence."""


_SPACE = re.compile(r"\s*")


def _opens(text: str, at: int) -> bool:
    """Whether a sentence may start at ``at``: only spaces between it and the text's start or an opener."""
    while at > 0 and text[at - 1] in " \t":
        at -= 1
    return at == 0 or text[at - 1] in OPENERS


@dataclass(frozen=True)
class Run:
    """World sentences in a row in a text (only whitespace between them), up to a question."""

    start: int
    end: int
    sentences: list[tuple[str, int | None]]
    """(kind, quantity) of each sentence: kind is start, distractor, question or an operation sign."""


def _runs(text: str) -> list[Run]:
    """Every run of world sentences in ``text``, each cut after its question. Every template starts
    with a capital letter, so only those where a sentence may start are tried."""
    runs: list[Run] = []
    for m in re.finditer(r"[A-Z]", text):
        if (runs and m.start() < runs[-1].end) or not _opens(text, m.start()):
            continue
        sentences: list[tuple[str, int | None]] = []
        at = end = m.start()
        while (found := _sentence_at(text, at)) is not None:
            kind, v, end = found
            sentences.append((kind, v))
            if kind == "question":
                break
            spaces = _SPACE.match(text, end)
            at = spaces.end() if spaces else end
        if sentences:
            runs.append(Run(m.start(), end, sentences))
    return runs


def _graph(sentences: list[tuple[str, int | None]]) -> dict[str, Any] | None:
    """The computation graph of one run's sentences, or None where they are not a whole world problem
    (a start quantity, at least one operation, the question last)."""
    start, ops, distractor = None, [], None
    for kind, v in sentences:
        if kind == "start" and start is not None:  # "{other} has 5 apples." reads like a start
            kind = "distractor"  # (the generator puts the distractor after the start, never before)
        if kind == "start":
            start = v
        elif kind == "distractor" and distractor is None:
            distractor = v
        elif kind in T.PROBLEM_OP and start is not None:
            ops.append((kind, v))
        elif kind != "question":
            return None
    if start is None or not ops or sentences[-1][0] != "question":
        return None
    quantities = [start] + [v for _, v in ops] + ([distractor] if distractor is not None else [])
    graph_ops, value = [], start
    for k, (op, v) in enumerate(ops):
        try:
            value = apply_op(op, value, v)
        except (ValueError, ZeroDivisionError):
            return None
        graph_ops.append({"op": op, "args": ["q0" if k == 0 else f"s{k - 1}", f"q{k + 1}"], "result": value})
    return {
        "version": WORLD_VERSION,
        "quantities": quantities,
        "ops": graph_ops,
        "distractor": len(quantities) - 1 if distractor is not None else None,
        "from_text": True,
    }


def find_problem(text: str) -> tuple[str, dict[str, Any]] | None:
    """The world problem inside ``text`` and its graph, or None when the text holds none.

    Trainers wrap the problem in instructions (verl's MATH rows append "Let's think step by step and
    output the final answer within \\boxed{}.", OpenRLHF's input templates put ``User:`` before it), so
    the problem is looked for, not required to be the whole text. Strictly: its sentences must stand
    intact and in a row (whitespace only between them, the first where a sentence may start, the
    question last); a world sentence cut out of a longer one, or with other words between, is no match.

    Raises:
        ValueError: the text holds two different world problems, so which to judge is a guess.
    """
    found: dict[str, dict[str, Any]] = {}
    for run in _runs(text):
        graph = _graph(run.sentences)
        if graph is not None:
            found.setdefault(text[run.start : run.end], graph)
    if len(found) > 1:
        shown = "; ".join(repr(t[:80]) for t in found)
        raise ValueError(
            f"the text holds {len(found)} different world problems ({shown}); send the one to judge, "
            "with instructions around it if you like, but no second problem (a few-shot example)"
        )
    return next(iter(found.items()), None)


def graph_from_text(text: str) -> dict[str, Any] | None:
    """The computation graph of the world problem in ``text`` (the generator's layout: ``quantities``
    with a distractor last, ``ops`` naming their operands), or None when the text holds none; the
    problem may be wrapped in instructions (:func:`find_problem`, which raises on two problems)."""
    found = find_problem(text)
    return None if found is None else found[1]

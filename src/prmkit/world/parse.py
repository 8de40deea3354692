"""Rebuild a world problem's computation graph from its words.

Clients that speak text (OpenRLHF's ``/get_reward``, a policy's prompt) send the problem without the
``metadata.graph`` the generator stored, so the gold checker could not judge them. The world's sentences
come from a closed set of templates (``templates.py``), so the graph can be read back exactly: the start
quantity, one (operation, quantity) per sentence in order, and a distractor's quantity. Text that is not
made of those sentences gives None: the checker then says it judges world problems only.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from prmkit.world import templates as T
from prmkit.world.config import WORLD_VERSION
from prmkit.world.generator import apply_op

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


def _kind(sentence: str) -> tuple[str, int | None] | None:
    for kind, regex in _sentence_kinds():
        m = regex.fullmatch(sentence)
        if m:
            return kind, int(m["v"]) if "v" in regex.groupindex else None
    return None


def graph_from_text(text: str) -> dict[str, Any] | None:
    """The computation graph of a world problem's text (the generator's layout: ``quantities`` with a
    distractor last, ``ops`` naming their operands), or None when the text is not a world problem."""
    sentences = re.findall(r"[^.?]+[.?]", text.strip())
    if not sentences or "".join(sentences).replace(" ", "") != text.strip().replace(" ", ""):
        return None
    start, ops, distractor = None, [], None
    for sentence in (s.strip() for s in sentences):
        found = _kind(sentence)
        if found is None:
            return None
        kind, v = found
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
    if start is None or not ops or not sentences[-1].strip().endswith("?"):
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

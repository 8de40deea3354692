"""Math shown legibly without a JavaScript math engine, and without ever trusting the text.

No KaTeX bundle ships with prmkit (nothing may be fetched at run time, and there is no build step), so
TeX between ``$...$``, ``$$...$$``, ``\\(...\\)`` or ``\\[...\\]`` is rewritten into readable text:
common macros to Unicode (``\\times`` -> ×, ``\\le`` -> ≤), ``\\frac{a}{b}`` -> (a)/(b), superscripts and
subscripts to ``<sup>``/``<sub>``. Safety comes first: the whole text is HTML-escaped *before* any
rewriting, and the rewriting only ever adds the tags named here, so problem or step text can never
inject markup or script.

Agent steps: a step's tool calls (:func:`tool_call`), the one-line summaries of what came back
(:func:`observation_summary`) and the problem's tools (:func:`tool_list`) are plain text that the
templates autoescape. None of it goes through :func:`math_html`: arguments and observations are what
tools and users wrote, hostile text, shown exactly as text (a ``$x$`` in a web page stays ``$x$``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from prmkit.core.model import Observation, ToolCall

_DOLLAR = "\x00D\x00"
_MATH = re.compile(r"\$\$(.+?)\$\$|\$(?=\S)([^$]+?)(?<=\S)\$(?!\d)|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
"""Display ``$$..$$``, ``\\(..\\)``, ``\\[..\\]`` and inline ``$..$`` by pandoc's rule, so prices stay text:
the opening ``$`` has a non-space right after it, the closing one a non-space right before it and no
digit right after it, and no ``$`` lies between. ``$50 and $10`` is text ("$10" opens no closing pair,
the first ``$`` has a space before its only candidate); ``$x$ costs $5`` is math, then text."""
_SYMBOLS = {
    "times": "×",
    "cdot": "·",
    "div": "÷",
    "leq": "≤",
    "le": "≤",
    "geq": "≥",
    "ge": "≥",
    "neq": "≠",
    "ne": "≠",
    "pm": "±",
    "mp": "∓",
    "approx": "≈",
    "equiv": "≡",
    "infty": "∞",
    "sum": "∑",
    "prod": "∏",
    "int": "∫",
    "sqrt": "√",
    "to": "→",
    "rightarrow": "→",
    "Rightarrow": "⇒",
    "implies": "⇒",
    "in": "∈",
    "pi": "π",
    "theta": "θ",
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "Delta": "Δ",
    "lambda": "λ",
    "mu": "μ",
    "sigma": "σ",
    "phi": "φ",
    "omega": "ω",
    "circ": "∘",
    "angle": "∠",
    "dots": "…",
    "ldots": "…",
    "cdots": "⋯",
    "quad": " ",
    "qquad": "  ",
    "left": "",
    "right": "",
    "displaystyle": "",
    "%": "%",
    ",": " ",
    ";": " ",
    "!": "",
    "{": "{",
    "}": "}",
}
_MACRO = re.compile(r"\\([A-Za-z]+|[%,;!{}])")
_FRAC = re.compile(r"\\d?frac\{([^{}]*)\}\{([^{}]*)\}")
_WRAP = re.compile(r"\\(?:text|textbf|mathrm|mathbf|operatorname|mbox)\{([^{}]*)\}")
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_SQRT = re.compile(r"\\sqrt\{([^{}]*)\}")
_SUP = re.compile(r"\^\{([^{}]*)\}|\^([^\s<&])")
_SUB = re.compile(r"_\{([^{}]*)\}|_([^\s<&])")


def _tex(escaped: str) -> str:
    """Rewrite one escaped TeX fragment; innermost braces first so nesting unwinds step by step."""
    s = escaped
    for _ in range(8):
        before = s
        s = _FRAC.sub(lambda m: f"({m[1]})/({m[2]})", s)
        s = _WRAP.sub(lambda m: m[1], s)
        s = _BOXED.sub(lambda m: f'<span class="boxed">{m[1]}</span>', s)
        s = _SQRT.sub(lambda m: f"√({m[1]})", s)
        if s == before:
            break
    s = _SUP.sub(lambda m: f"<sup>{m[1] if m[1] is not None else m[2]}</sup>", s)
    s = _SUB.sub(lambda m: f"<sub>{m[1] if m[1] is not None else m[2]}</sub>", s)
    return _MACRO.sub(lambda m: _SYMBOLS.get(m[1], m[1]), s)


def math_html(text: str | None) -> Markup:
    """Escaped text with its TeX made readable, as HTML safe to put in a page."""
    if not text:
        return Markup("")
    escaped = str(escape(text.replace("\\$", _DOLLAR)))
    out, last = [], 0
    for m in _MATH.finditer(escaped):
        out.append(escaped[last : m.start()])
        body = next(g for g in m.groups() if g is not None)
        out.append(f'<span class="math">{_tex(body)}</span>')
        last = m.end()
    out.append(escaped[last:])
    return Markup("".join(out).replace(_DOLLAR, "$").replace("\n", "<br>"))


# --- agent steps ------------------------------------------------------------------------------------

SUMMARY_CHARS = 80
"""How much of an observation its one-line summary shows before the annotator opens it."""


@dataclass(frozen=True)
class CallView:
    """A tool call as the page shows it: ``arguments`` pretty-printed, or verbatim with ``problem``."""

    name: str
    id: str | None
    arguments: str
    problem: str | None = None
    """Why the arguments are shown as written ("not JSON (...)", "a JSON list, not an object"); None
    when they are a JSON object. A malformed call is the agent's error, for the annotator to judge."""


class _Number(str):
    """A JSON number kept as written: re-serialising ``1.10`` or ``1e400`` as a float would change it."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # json.loads takes NaN and Infinity; the OpenAI API does not


def _pretty(value: Any, depth: int = 0) -> str:
    """JSON text with two-space indents; keys in their order, duplicates kept, numbers as written."""
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, _Number):
        return str(value)
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        # a lone surrogate ("\ud800" in the arguments) cannot be sent as UTF-8: keep it escaped
        return json.dumps(value) if any("\ud800" <= ch <= "\udfff" for ch in text) else text
    if isinstance(value, tuple):  # an object, as its (key, value) pairs
        if not value:
            return "{}"
        rows = [f"{inner}{_pretty(k)}: {_pretty(v, depth + 1)}" for k, v in value]
        return "{\n" + ",\n".join(rows) + f"\n{pad}}}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(f"{inner}{_pretty(v, depth + 1)}" for v in value) + f"\n{pad}]"
    return json.dumps(value)  # true, false, null


def tool_call(call: ToolCall) -> CallView:
    """How one call is shown. Arguments that parse as a JSON object are pretty-printed (every key, in its
    order, numbers as written); anything else is shown byte for byte, with what is wrong with it."""
    try:
        parsed = json.loads(
            call.arguments,
            object_pairs_hook=tuple,
            parse_float=_Number,
            parse_int=_Number,
            parse_constant=_no_constant,
        )
    except (ValueError, RecursionError) as err:
        return CallView(call.name, call.id, call.arguments, f"not JSON ({err})")
    if not isinstance(parsed, tuple):
        kind = {list: "list", str: "string", _Number: "number"}.get(type(parsed), "constant")
        return CallView(call.name, call.id, call.arguments, f"a JSON {kind}, not an object")
    return CallView(call.name, call.id, _pretty(parsed))


def observation_summary(observation: Observation, calls: Sequence[ToolCall] = ()) -> str:
    """One line: who answered (the tool's name, found by call id when the log omits it, or "user") and
    the first :data:`SUMMARY_CHARS` characters of what came back, whitespace folded."""
    if observation.role == "user":
        who = "user"
    else:
        by_id = {c.id: c.name for c in calls if c.id is not None}
        who = observation.name or by_id.get(observation.call_id) or "tool"
    text = " ".join(observation.content.split())
    if len(text) > SUMMARY_CHARS:
        text = text[: SUMMARY_CHARS - 1].rstrip() + "…"
    return f"{who}: {text}" if text else f"{who}: (empty)"


@dataclass(frozen=True)
class ToolView:
    """One tool of the problem, as the collapsed panel lists it."""

    name: str
    description: str
    parameters: str
    """``query, [limit]``: the parameter names, optional ones in brackets."""


def _tool_view(schema: dict[str, Any]) -> ToolView:
    fn = schema.get("function") if isinstance(schema.get("function"), dict) else schema
    name, description = fn.get("name"), fn.get("description")
    params = fn.get("parameters") if isinstance(fn.get("parameters"), dict) else {}
    props = params.get("properties") if isinstance(params.get("properties"), dict) else {}
    required = params.get("required") if isinstance(params.get("required"), list) else []
    names = [p if p in required else f"[{p}]" for p in props]
    return ToolView(
        name if isinstance(name, str) else "(unnamed tool)",
        description if isinstance(description, str) else "",
        ", ".join(names),
    )


def tool_list(tools: Sequence[dict[str, Any]]) -> list[ToolView]:
    """The problem's tools, OpenAI's nested ``{"type": "function", "function": {...}}`` or flat."""
    return [_tool_view(t) for t in tools]

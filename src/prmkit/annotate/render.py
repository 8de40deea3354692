"""Math shown legibly without a JavaScript math engine, and without ever trusting the text.

No KaTeX bundle ships with prmkit (nothing may be fetched at run time, and there is no build step), so
TeX between ``$...$``, ``$$...$$``, ``\\(...\\)`` or ``\\[...\\]`` is rewritten into readable text:
common macros to Unicode (``\\times`` -> ×, ``\\le`` -> ≤), ``\\frac{a}{b}`` -> (a)/(b), superscripts and
subscripts to ``<sup>``/``<sub>``. Safety comes first: the whole text is HTML-escaped *before* any
rewriting, and the rewriting only ever adds the tags named here, so problem or step text can never
inject markup or script.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

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

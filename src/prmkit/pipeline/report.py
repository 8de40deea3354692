"""The run report: one document, in Markdown and HTML, that a person reads top to bottom.

Sections hold prose, tables (:class:`prmkit.core.results.Table`, the one table of measured numbers, its
rows dicts here) and images (PNG paths relative to the report); the same content renders to both formats,
so they never disagree.
"""

from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from prmkit.core.files import atomic_write
from prmkit.core.results import Table

__all__ = ["Report", "Section", "Table", "relpath", "to_html", "to_markdown", "write_report"]


@dataclass
class Section:
    title: str
    text: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    images: list[tuple[str, str]] = field(default_factory=list)
    """(path relative to the report, caption)"""
    commands: list[str] = field(default_factory=list)


@dataclass
class Report:
    title: str
    sections: list[Section] = field(default_factory=list)

    def section(self, title: str) -> Section:
        sec = Section(title)
        self.sections.append(sec)
        return sec


def to_markdown(report: Report) -> str:
    out = [f"# {report.title}", ""]
    for sec in report.sections:
        out += [f"## {sec.title}", ""]
        for para in sec.text:
            out += [para, ""]
        for table in sec.tables:
            if table.title:
                out += [f"*{table.title}*", ""]
            out += [*table.grid(), ""]
        for path, caption in sec.images:
            out += [f"![{caption}]({path})", ""]
        if sec.commands:
            out += ["```bash", *sec.commands, "```", ""]
    return "\n".join(out)


_CSS = """body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}
.table{overflow-x:auto;margin:1em 0}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}img{max-width:100%;border:1px solid #eee}
pre{background:#f6f6f6;padding:.8em;overflow-x:auto}caption{caption-side:top;font-style:italic;text-align:left}"""


def _inline(text: str) -> str:
    """Escaped text with the Markdown the report's prose uses (``**bold**``, ``*italic*``, ```code```)."""
    out = html.escape(text)
    out = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)
    out = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", out)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", out)


def to_html(report: Report) -> str:
    e = html.escape
    out = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{e(report.title)}</title>",
        f"<style>{_CSS}</style></head><body><h1>{e(report.title)}</h1>",
    ]
    for sec in report.sections:
        out.append(f"<h2>{e(sec.title)}</h2>")
        out += [f"<p>{_inline(p)}</p>" for p in sec.text]
        for table in sec.tables:  # in a scrolling div, so a wide table does not overflow the page
            first, *rest, last = table.html()
            out += [f"<div class='table'>{first}", *rest, f"{last}</div>"]
        for path, caption in sec.images:
            out.append(
                f"<figure><img src='{e(path)}' alt='{e(caption)}'><figcaption>{e(caption)}</figcaption></figure>"
            )
        if sec.commands:
            out.append("<pre>" + e("\n".join(sec.commands)) + "</pre>")
    out.append("</body></html>")
    return "\n".join(out)


def write_report(report: Report, out_dir: Path) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` into ``out_dir``; image paths are relative to it."""
    md, page = out_dir / "report.md", out_dir / "report.html"
    with atomic_write(md) as fh:
        fh.write(to_markdown(report))
    with atomic_write(page) as fh:
        fh.write(to_html(report))
    return md, page


def relpath(path: Path, start: Path) -> str:
    return os.path.relpath(path, start)

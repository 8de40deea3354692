"""CLI commands of the data area: ``convert``, ``inspect``, ``validate`` -> prmkit.formats (same names, same options).

Each command is generated from its command record by :func:`prmkit.cli.config.add_command`, its options
the fields of its config here (:class:`ConvertCommand`, :class:`InspectCommand`,
:class:`ValidateCommand`), each documented once; the run functions call :mod:`prmkit.formats`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from pydantic import Field
from rich.console import Console

from prmkit.cli.config import add_command
from prmkit.core.commands import Command, Layout
from prmkit.core.config import Config

report_console = Console(soft_wrap=True)
"""stdout, for the reports of ``inspect`` and ``validate`` (``> file`` captures them); errors and the
progress of ``convert`` stay on stderr (``prmkit.cli.common.console``)."""

FORMAT_HELP = "Format: prm800k, math_shepherd, processbench, trl, prmkit. Omitted: detected from the content."
FROM = {"from_format": "--from"}
READ_ERRORS = (
    "prmkit.core.errors:InputError",
    "prmkit.core.registry:UnknownNameError",
    FileNotFoundError,
    ValueError,
)
"""What a file or a format name the user gives can cause: one located line per issue, exit 2."""


class ConvertCommand(Config):
    """Convert a data file between formats and report what was dropped and why."""

    src: Path
    """Input file."""
    dst: Path
    """Output file (written atomically)."""
    from_format: str | None = Field(None, description=FORMAT_HELP)
    to_format: str | None = None
    """Output format; default processbench for .json, else prmkit."""
    neutral: str | None = None
    """PRM800K neutral 0 in binary formats: negative (TRL) or positive (Qwen, openr)."""
    trl_mode: str | None = None
    """TRL export: expand (TRL's own PRM800K expansion) or first_error (path up to its first error)."""
    source: str | None = None
    """Label source to export, e.g. human:processbench."""
    grade: bool = False
    """prmkit, ProcessBench, AgentProcessBench: fill a missing outcome (answer_correct,
    final_answer_correct, final_label) by checking the final answer against the problem's."""
    generator: str | None = None
    """ProcessBench: generator name written where a trace has none."""
    pairing: str | None = None
    """step_dpo: how pairs are formed; first-error (default, the only one): a trace's first error against
    the correct step of a trace sharing its prefix."""
    skip_invalid: bool = False
    """Skip bad input records and count them by reason."""


class InspectCommand(Config):
    """Show problems, traces, steps, labels by source and the first-error histogram of a data file."""

    file: Path
    """Data file in any supported format."""
    png: Path | None = None
    """Also write a first-error histogram PNG here."""
    from_format: str | None = Field(None, description=FORMAT_HELP)
    by: str = "source"
    """Group labels by 'source' (method:actor) or 'method'."""
    threshold: float | None = None
    """Score under which a score-only label counts as wrong for the first-error histogram; default: the
    threshold each source recorded (`prmkit score` records the checkpoint's), else 0.5."""


class ValidateCommand(Config):
    """Check every record of a file; exit 0 when valid, 2 with one located message per issue when not."""

    file: Path
    """Data file to check."""
    from_format: str | None = Field(None, description=FORMAT_HELP)


def run_convert(c: ConvertCommand) -> None:
    """``prmkit convert``: convert, and report on stderr what was written, dropped and why; an output
    with nothing in it is removed (it would pass for a successful one downstream) and is an error."""
    from prmkit.cli.common import console, fail
    from prmkit.formats import convert

    given = {"neutral": c.neutral, "mode": c.trl_mode, "source": c.source, "grade": c.grade or None,
             "generator": c.generator, "pairing": c.pairing}  # fmt: skip
    options = {k: v for k, v in given.items() if v is not None}
    report = convert(c.src, c.dst, c.from_format, c.to_format, skip_invalid=c.skip_invalid, **options)
    for line in report.lines():
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    empty = report.nothing_written()
    if empty is not None:
        Path(report.dst).unlink(missing_ok=True)
        fail(str(empty))


def run_inspect(c: InspectCommand) -> Any:
    """``prmkit inspect``: the file's report (:func:`prmkit.formats.inspect`)."""
    from prmkit.formats import inspect

    return inspect(c.file, png=c.png, format=c.from_format, by=c.by, threshold=c.threshold)


def show_inspect(report: Any, c: InspectCommand) -> Any:
    """The counts line, the labels-by-source table (20 sources at most) and the PNG written."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    how = "detected" if report.detected else "given"
    head = f"{report.path}: {report.format} ({how}); {report.problems} problems, {report.traces} traces, {report.steps} steps"
    table = Table(title="labels by source")
    for col in ("source", "+1", "0", "-1", "score", "unlabelled", "first error (index: traces)"):
        table.add_column(col)
    for src, dist in sorted(report.labels.items(), key=lambda kv: -sum(kv[1].values()))[:20]:
        hist = ", ".join(f"{k}: {v}" for k, v in sorted(report.first_error[src].items()))
        table.add_row(src, *(str(dist.get(k, 0)) for k in ("+1", "0", "-1", "score", "unlabelled")), hist)
    if len(report.labels) > 20:
        table.caption = f"{len(report.labels) - 20} more sources (use --by method to group)"
    shown = [Text(head), table] + ([Text(f"wrote {report.png}")] if report.png else [])
    return Group(*shown)


def run_validate(c: ValidateCommand) -> None:
    """``prmkit validate``: the file's verdict on stdout; a file with issues lists them, one located line
    each, and exits 2."""
    from prmkit.formats import validate

    report = validate(c.file, c.from_format)
    how = "detected" if c.from_format is None else "given"
    if report.valid:
        report_console.print(
            f"{report.path}: valid {report.format} ({how}), {report.records} record(s)", markup=False
        )
        return
    for issue in report.issues:
        report_console.print(str(issue), markup=False, highlight=False)
    report_console.print(
        f"{report.path}: {len(report.issues)} issue(s) ({report.format}, {how})", markup=False
    )
    raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Add this area's commands to the root app."""
    convert = Command("convert", ConvertCommand, run_convert, Layout(("src", "dst"), FROM | {"to_format": "--to"}),
                      errors=(*READ_ERRORS, TypeError))  # fmt: skip
    add_command(app, convert)
    add_command(app, Command("inspect", InspectCommand, run_inspect, Layout(("file",), FROM), show=show_inspect,
                             errors=READ_ERRORS))  # fmt: skip
    add_command(app, Command("validate", ValidateCommand, run_validate, Layout(("file",), FROM),
                             errors=("prmkit.core.registry:UnknownNameError", FileNotFoundError)))  # fmt: skip

"""CLI commands of the data area: ``convert``, ``inspect``, ``validate`` -> prmkit.formats (same names, same options)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

report_console = Console(soft_wrap=True)
"""stdout, for the reports of ``inspect`` and ``validate`` (``> file`` captures them); errors and the
progress of ``convert`` stay on stderr (``prmkit.cli.common.console``)."""

FORMAT_HELP = "Format: prm800k, math_shepherd, processbench, trl, prmkit. Omitted: detected from the content."


def _fail(err: Exception) -> None:
    """Print an input error as-is (one located line per issue, never wrapped) and exit 2."""
    from prmkit.cli.common import fail

    fail(str(err))


def convert(
    src: Path = typer.Argument(..., help="Input file."),
    dst: Path = typer.Argument(..., help="Output file (written atomically)."),
    from_format: str | None = typer.Option(None, "--from", help=FORMAT_HELP),
    to_format: str | None = typer.Option(
        None, "--to", help="Output format; default processbench for .json, else prmkit."
    ),
    neutral: str | None = typer.Option(
        None,
        "--neutral",
        help="PRM800K neutral 0 in binary formats: negative (TRL) or positive (Qwen, openr).",
    ),
    trl_mode: str | None = typer.Option(
        None,
        "--trl-mode",
        help="TRL export: expand (TRL's own PRM800K expansion) or first_error (path up to its first error).",
    ),
    source: str | None = typer.Option(
        None, "--source", help="Label source to export, e.g. human:processbench."
    ),
    grade: bool = typer.Option(
        False,
        "--grade",
        help="prmkit, ProcessBench, AgentProcessBench: fill a missing outcome (answer_correct, final_answer_correct, final_label) by checking the final answer against the problem's.",
    ),
    generator: str | None = typer.Option(
        None, "--generator", help="ProcessBench: generator name written where a trace has none."
    ),
    pairing: str | None = typer.Option(
        None,
        "--pairing",
        help="step_dpo: how pairs are formed; first-error (default, the only one): a trace's first error "
        "against the correct step of a trace sharing its prefix.",
    ),
    skip_invalid: bool = typer.Option(
        False, "--skip-invalid", help="Skip bad input records and count them by reason."
    ),
) -> None:
    """Convert a data file between formats and report what was dropped and why."""
    from prmkit.cli.common import console
    from prmkit.core.errors import InputError
    from prmkit.core.registry import UnknownNameError
    from prmkit.formats import convert as run

    given = {
        "neutral": neutral,
        "mode": trl_mode,
        "source": source,
        "grade": grade or None,
        "generator": generator,
        "pairing": pairing,
    }
    options = {k: v for k, v in given.items() if v is not None}
    try:
        report = run(src, dst, from_format, to_format, skip_invalid=skip_invalid, **options)
    except (InputError, UnknownNameError, FileNotFoundError, TypeError, ValueError) as err:
        _fail(err)
        return
    for line in report.lines():
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    empty = report.nothing_written()
    if empty is not None:
        Path(report.dst).unlink(missing_ok=True)  # an empty output would pass for a successful one downstream
        _fail(empty)


def inspect(
    file: Path = typer.Argument(..., help="Data file in any supported format."),
    png: Path | None = typer.Option(None, "--png", help="Also write a first-error histogram PNG here."),
    from_format: str | None = typer.Option(None, "--from", help=FORMAT_HELP),
    by: str = typer.Option("source", "--by", help="Group labels by 'source' (method:actor) or 'method'."),
    threshold: float | None = typer.Option(
        None,
        "--threshold",
        help="Score under which a score-only label counts as wrong for the first-error "
        "histogram; default: the threshold each source recorded (`prmkit score` records the checkpoint's), else 0.5.",
    ),
) -> None:
    """Show problems, traces, steps, labels by source and the first-error histogram of a data file."""
    from rich.table import Table

    from prmkit.core.errors import InputError
    from prmkit.core.registry import UnknownNameError
    from prmkit.formats import inspect as run

    try:
        report = run(file, png=png, format=from_format, by=by, threshold=threshold)
    except (InputError, UnknownNameError, FileNotFoundError, ValueError) as err:
        _fail(err)
        return
    how = "detected" if report.detected else "given"
    report_console.print(
        f"{report.path}: {report.format} ({how}); {report.problems} problems, {report.traces} traces, {report.steps} steps",
        markup=False,
        soft_wrap=True,
    )
    table = Table(title="labels by source")
    for col in ("source", "+1", "0", "-1", "score", "unlabelled", "first error (index: traces)"):
        table.add_column(col)
    for src, dist in sorted(report.labels.items(), key=lambda kv: -sum(kv[1].values()))[:20]:
        hist = ", ".join(f"{k}: {v}" for k, v in sorted(report.first_error[src].items()))
        table.add_row(src, *(str(dist.get(k, 0)) for k in ("+1", "0", "-1", "score", "unlabelled")), hist)
    if len(report.labels) > 20:
        table.caption = f"{len(report.labels) - 20} more sources (use --by method to group)"
    report_console.print(table)
    if report.png:
        report_console.print(f"wrote {report.png}", markup=False, soft_wrap=True)


def validate(
    file: Path = typer.Argument(..., help="Data file to check."),
    from_format: str | None = typer.Option(None, "--from", help=FORMAT_HELP),
) -> None:
    """Check every record of a file; exit 0 when valid, 2 with one located message per issue when not."""
    from prmkit.core.registry import UnknownNameError
    from prmkit.formats import validate as run

    try:
        report = run(file, from_format)
    except (UnknownNameError, FileNotFoundError) as err:
        _fail(err)
        return
    how = "detected" if from_format is None else "given"
    if report.valid:
        report_console.print(
            f"{report.path}: valid {report.format} ({how}), {report.records} record(s)",
            markup=False,
            soft_wrap=True,
        )
        return
    for issue in report.issues:
        report_console.print(str(issue), markup=False, highlight=False, soft_wrap=True)
    report_console.print(
        f"{report.path}: {len(report.issues)} issue(s) ({report.format}, {how})", markup=False, soft_wrap=True
    )
    raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Add this area's commands to the root app."""
    app.command("convert")(convert)
    app.command("inspect")(inspect)
    app.command("validate")(validate)

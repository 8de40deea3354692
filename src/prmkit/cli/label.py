"""CLI commands of the label area: ``prmkit label mc | binary_search | mcts | judge | consensus | report | merge``.

Each command is generated from its command record (a :class:`~prmkit.labeling.labellers.Labeller`, or the
plain record of ``report`` and ``merge``) by the one builder, :func:`prmkit.cli.config.add_command`:
one flag per field of its typed config (``prmkit.labeling.*Config``), the field's docstring as its help,
``--config RECIPE.yaml`` read first and flags overriding it. The command then calls the same public
function a Python user calls (``run_mc(MCConfig(...))``...).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from prmkit.cli.common import fail
from prmkit.cli.config import add_command
from prmkit.core.commands import Command, lead_summary

OUTPUT_FIELDS = ("output", "keep_rollouts")
"""Config fields naming files a command writes when it finishes."""
ITEMS_FAILED = 3
"""Exit status of a labelling job that finished with failed items (2: it could not run or was stopped):
its output and summary are written, finished work is kept, and the same command retries the failed."""


def check_outputs(cfg: Any) -> None:
    """Refuse an output path that cannot be written (a folder, read-only...) before the work, not after
    hours of rollouts; the input must be a file too."""
    from prmkit.core.files import check_input_file, check_output_path

    if isinstance(getattr(cfg, "input", None), Path):
        check_input_file(cfg.input)
    for field in OUTPUT_FIELDS:
        path = getattr(cfg, field, None)
        if isinstance(path, Path):
            check_output_path(path)


def _guarded(run: Callable[[Any], Any], job: bool = False) -> Callable[[Any], Any]:
    """``run`` behind the label commands' own checks: the files are checked before the work, and a
    ``job`` that finished with failed items prints its summary, then "N of M items failed; rerun to retry
    them" and exits :data:`ITEMS_FAILED`, so a script cannot take a partly labelled output for a whole
    one (it used to exit 0). The errors a user causes are the record's (one line each)."""

    def guarded(cfg: Any) -> Any:
        check_outputs(cfg)
        summary = run(cfg)
        if job and isinstance(summary, dict) and summary.get("failed"):
            _failed_items(summary)
        return summary

    return guarded


def _failed_items(summary: dict[str, Any]) -> None:
    """Print a job's summary and exit :data:`ITEMS_FAILED` with the one-line count of its failures."""
    import yaml

    typer.echo(yaml.safe_dump(summary, sort_keys=False).rstrip())
    where = f" (listed in {summary['failures_file']})" if summary.get("failures_file") else ""
    total = summary.get("items", "?")
    fail(f"{summary['failed']} of {total} items failed; rerun to retry them{where}", ITEMS_FAILED)


def register(app: typer.Typer) -> None:
    """Add ``prmkit label NAME`` for every registered labeller (plugins too), and ``label report``."""
    from prmkit.labeling.labellers import LABELLERS, USER_ERRORS, labeller
    from prmkit.labeling.merge import MergeConfig, run_merge
    from prmkit.labeling.report import ReportConfig, run_report

    group = typer.Typer(
        help="Automated step labels: one command per labeller ("
        + ", ".join(LABELLERS.names())
        + "), report, and merge (of a sharded job's outputs).",
        no_args_is_help=True,
    )
    for name in LABELLERS.names():
        method = labeller(name)
        add_command(group, method, run=_guarded(method.run, job=True))
    for name, config, run in (("report", ReportConfig, run_report), ("merge", MergeConfig, run_merge)):
        record = Command(name, config, run, help=lead_summary(config), errors=USER_ERRORS)
        add_command(group, record, run=_guarded(record.run))
    app.add_typer(group, name="label")

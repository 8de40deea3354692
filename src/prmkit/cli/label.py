"""CLI commands of the label area: ``prmkit label mc | binary_search | mcts | judge | consensus | report | merge``.

Each command is generated from its typed config (``prmkit.labeling.*Config``) by the one builder,
:func:`prmkit.cli.config.config_command`: one flag per field, the field's docstring as its help,
``--config RECIPE.yaml`` read first and flags overriding it. The command then calls the same public
function a Python user calls (``run_mc(MCConfig(...))``...).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from prmkit.cli.common import fail
from prmkit.cli.config import config_command
from prmkit.cli.config import named_summary as _help

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
    """``run`` with the labelling errors a user can cause (a changed job, a dead endpoint, a judge for
    world problems on other traces) as one line each; a ``job`` that finished with failed items prints
    its summary, then "N of M items failed; rerun to retry them" and exits :data:`ITEMS_FAILED`, so a
    script cannot take a partly labelled output for a whole one (it used to exit 0)."""

    def guarded(cfg: Any) -> Any:
        from prmkit.labeling.jobs import JobLockedError, JobMismatchError, JobStoppedError
        from prmkit.policies.http import EndpointError
        from prmkit.worlds.judge import NotAWorldProblemError

        check_outputs(cfg)
        try:
            summary = run(cfg)
        except (
            JobMismatchError,
            JobLockedError,
            JobStoppedError,
            EndpointError,
            NotAWorldProblemError,
        ) as err:
            fail(str(err))
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
    from prmkit.labeling.labellers import LABELLERS, labeller
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
        config_command(group, name, method.config, _guarded(method.run, job=True), help=_help(method.config))
    config_command(group, "report", ReportConfig, _guarded(run_report), help=_help(ReportConfig))
    config_command(group, "merge", MergeConfig, _guarded(run_merge), help=_help(MergeConfig))
    app.add_typer(group, name="label")

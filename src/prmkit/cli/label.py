"""CLI commands of the label area: ``prmkit label mc | binary_search | judge | consensus | report | merge``.

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


def _guarded(run: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``run`` with the labelling errors a user can cause (a changed job, a dead endpoint, a judge for
    world problems on other traces) as one line each."""

    def guarded(cfg: Any) -> Any:
        from prmkit.labeling.jobs import JobLockedError, JobMismatchError, JobStoppedError
        from prmkit.policies.http import EndpointError
        from prmkit.worlds.judge import NotAWorldProblemError

        check_outputs(cfg)
        try:
            return run(cfg)
        except (
            JobMismatchError,
            JobLockedError,
            JobStoppedError,
            EndpointError,
            NotAWorldProblemError,
        ) as err:
            fail(str(err))

    return guarded


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
        config_command(group, name, method.config, _guarded(method.run), help=_help(method.config))
    config_command(group, "report", ReportConfig, _guarded(run_report), help=_help(ReportConfig))
    config_command(group, "merge", MergeConfig, _guarded(run_merge), help=_help(MergeConfig))
    app.add_typer(group, name="label")

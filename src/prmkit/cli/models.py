"""CLI commands of the models area: ``prmkit pretrain``, ``prmkit train prm | orm``, ``prmkit score``.

Each command is generated from its command record by :func:`prmkit.cli.config.add_command`: one flag per
field of its typed config (nested ones as ``--tiny-layers``), the field's docstring as its help,
``--config RECIPE.yaml`` read first and flags overriding it. A training command's config is the library's
(``prmkit.training.*Config``, what a recipe's training section holds) with the paths it reads and writes
added (:class:`TrainPaths`: DATA and ``-o``), so one config says the whole command; the library function
gets the library's config (:func:`prmkit.core.commands.fields_of`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from pydantic import Field

from prmkit.cli.common import fail
from prmkit.cli.config import add_command
from prmkit.core.commands import Command, Layout, fields_of, summary_of
from prmkit.core.config import Config
from prmkit.scoring.config import DATA_HELP, ScoreConfig, run_score
from prmkit.training.config import OrmConfig, PretrainConfig, PrmConfig


class TrainPaths(Config):
    """What a training command reads and writes beside the training config: a recipe's training section
    stays reusable across data sets, while the command names them."""

    data: Path = Field(description=DATA_HELP)
    output: Path
    """Output folder."""


class PretrainCommand(PretrainConfig, TrainPaths):
    __doc__ = PretrainConfig.__doc__


class PrmCommand(PrmConfig, TrainPaths):
    __doc__ = PrmConfig.__doc__


class OrmCommand(OrmConfig, TrainPaths):
    __doc__ = OrmConfig.__doc__


TRAIN = Layout(("data",), {"output": ["-o", "--output"]})
TRAIN_ERRORS = ("prmkit.training.pretrain:CopyCheckError",)
"""A backbone refused by pretraining's copy check: one line."""


def _overlong(run: Any) -> Any:
    """``run`` with a trace longer than the model takes reported against the data file, in one line."""

    def checked(c: Any) -> Any:
        from prmkit.scoring.scorer import OverlongError

        try:
            return run(c)
        except OverlongError as err:
            fail(f"{c.data}: {err}")

    return checked


def run_pretrain(c: PretrainCommand) -> Any:
    from prmkit.training import pretrain_lm

    return pretrain_lm(c.data, c.output, fields_of(c, PretrainConfig))


def run_train_prm(c: PrmCommand) -> Any:
    from prmkit.training import train_prm

    return train_prm(c.data, c.output, fields_of(c, PrmConfig))


def run_train_orm(c: OrmCommand) -> Any:
    from prmkit.training import train_orm

    _check_outcomes(c.data)
    return train_orm(c.data, c.output, fields_of(c, OrmConfig))


def _check_outcomes(data: Path) -> None:
    """An ORM learns ``answer_correct``; a file whose format cannot carry it (Math-Shepherd, TRL) is refused
    in one line before the model loads, not with a traceback from an empty training set."""
    from prmkit.formats import detect_format
    from prmkit.formats.inputs import read_traces

    traces = read_traces(data)
    if any(t.answer_correct is not None for t in traces):
        return
    try:
        fmt = detect_format(data)
    except ValueError:
        fmt = "prmkit"
    fail(
        f"{data}: answer_correct: expected traces whose final answer is marked right or wrong (what an ORM "
        f"learns), found none in {len(traces)} {fmt} trace(s); train a PRM on it (`prmkit train prm`), or "
        "grade the answers where problems carry one: `prmkit convert DATA graded.jsonl --grade`"
    )


def show_score(done: dict[str, Any], c: ScoreConfig) -> str:
    """What ``prmkit score`` scored and where it wrote it, what the length policy left out, and what a
    reward server refused."""
    n, steps, counts = done["traces"], done["steps"], done["counts"]
    failed = done.get("failed", 0)
    lines = [
        f"scored {n - counts.skipped - failed} of {n} traces"
        f" ({steps - counts.steps_cut - done.get('failed_steps', 0)} of {steps} steps) -> {c.output}"
    ]
    if counts.line():
        lines.append(counts.line())
    if failed:
        first = done["failures"][0]
        lines.append(
            f"refused by the server, left unscored: {failed} trace(s), e.g. {first['trace']}: {first['reason']}"
            " (--fail-fast stops at the first)"
        )
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    """Add ``pretrain``, ``train prm | orm`` and ``score`` to the root app."""
    train = typer.Typer(help="Train a PRM or an ORM head on traces.", no_args_is_help=True)
    for name, config, run in (("prm", PrmCommand, run_train_prm), ("orm", OrmCommand, run_train_orm)):
        record = Command(name, config, run, TRAIN, help=summary_of(config), errors=TRAIN_ERRORS)
        add_command(train, record, run=_overlong(record.run))
    app.add_typer(train, name="train")
    pretrain = Command("pretrain", PretrainCommand, run_pretrain, TRAIN, errors=TRAIN_ERRORS)
    add_command(app, pretrain, run=_overlong(pretrain.run))
    score = Command("score", ScoreConfig, run_score,
                    Layout(("model", "data"), {"output": ["-o", "--output"]}, flat=("load",)), show=show_score)  # fmt: skip
    add_command(app, score, run=_overlong(score.run))

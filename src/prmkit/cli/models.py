"""CLI commands of the models area: ``prmkit pretrain``, ``prmkit train prm | orm``, ``prmkit score``.

Training flags are generated from the typed configs (``prmkit.training.*Config``): one flag per field
(nested ones as ``--tiny-layers``), the field's docstring as its help, ``--config RECIPE.yaml`` read
first and flags overriding it. Each command calls the public function of the same name.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import typer

from prmkit.cli.common import console, fail
from prmkit.cli.config import Layout, config_command
from prmkit.scoring.config import DATA_HELP

_KW = inspect.Parameter.KEYWORD_ONLY
TRAIN_ARGS = (
    inspect.Parameter("data", _KW, annotation=Path, default=typer.Argument(..., help=DATA_HELP)),
    inspect.Parameter(
        "output", _KW, annotation=Path, default=typer.Option(..., "-o", "--output", help="Output folder.")
    ),
)
"""What a training command reads and writes beside its config: DATA and ``-o`` (not config fields, so a
recipe's training section stays reusable across data sets)."""


def _command(group: typer.Typer, name: str, config_cls: type, run: Any) -> None:
    """Add ``name DATA -o DIR [flags]`` to ``group``; flags come from ``config_cls`` (nested: ``--tiny-layers``)."""

    def call(cfg: Any, data: Path, output: Path) -> Any:
        from prmkit.scoring.scorer import OverlongError
        from prmkit.training.pretrain import CopyCheckError

        try:
            return run(data, output, cfg)
        except OverlongError as err:
            fail(f"{data}: {err}")
        except CopyCheckError as err:
            fail(str(err))

    config_command(group, name, config_cls, call, Layout(), extra=TRAIN_ARGS)


def _pretrain(data: Path, output: Path, cfg: Any) -> Any:
    from prmkit.training import pretrain_lm

    return pretrain_lm(data, output, cfg)


def _prm(data: Path, output: Path, cfg: Any) -> Any:
    from prmkit.training import train_prm

    return train_prm(data, output, cfg)


def _orm(data: Path, output: Path, cfg: Any) -> Any:
    from prmkit.training import train_orm

    _check_outcomes(data)
    return train_orm(data, output, cfg)


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


def _score(cfg: Any) -> None:
    from prmkit.scoring import OverlongError
    from prmkit.scoring.config import run_score

    try:
        done = run_score(cfg)
    except OverlongError as err:
        fail(f"{cfg.data}: {err}")
    n, steps, counts = done["traces"], done["steps"], done["counts"]
    failed = done.get("failed", 0)
    console.print(
        f"scored {n - counts.skipped - failed} of {n} traces"
        f" ({steps - counts.steps_cut - done.get('failed_steps', 0)} of {steps} steps)"
        f" -> {cfg.output}"
    )
    if counts.line():
        console.print(counts.line(), markup=False, highlight=False, soft_wrap=True)
    if failed:
        first = done["failures"][0]
        console.print(
            f"refused by the server, left unscored: {failed} trace(s), e.g. {first['trace']}: {first['reason']}"
            " (--fail-fast stops at the first)",
            markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip


def register(app: typer.Typer) -> None:
    """Add ``pretrain``, ``train prm | orm`` and ``score`` to the root app."""
    from prmkit.training.config import OrmConfig, PretrainConfig, PrmConfig

    train = typer.Typer(help="Train a PRM or an ORM head on traces.", no_args_is_help=True)
    _command(train, "prm", PrmConfig, _prm)
    _command(train, "orm", OrmConfig, _orm)
    app.add_typer(train, name="train")
    _command(app, "pretrain", PretrainConfig, _pretrain)
    from prmkit.scoring.config import ScoreConfig

    layout = Layout(("model", "data"), {"output": ["-o", "--output"]}, flat=("load",))
    config_command(app, "score", ScoreConfig, _score, layout)

"""CLI command ``prmkit rl``: GRPO on a policy against an outcome check, a PRM or gold (prmkit.rl.train).

Flags come from :class:`prmkit.rl.config.RlConfig` through the one config-to-command builder
(:func:`prmkit.cli.config.config_command`: one flag per field, nested ones as ``--prompts-n``, the
field's docstring as its help); ``--config RECIPE.yaml`` is read first (its ``rl`` section when it has
one, e.g. ``recipes/rl.yaml``) and flags override it. ``-o`` is not a config field, so one recipe
serves every cell of an experiment.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import typer

OUTPUT = inspect.Parameter(
    "output",
    inspect.Parameter.KEYWORD_ONLY,
    annotation=Path,
    default=typer.Option(..., "-o", "--output", help="Output folder (the trained policy and its card)."),
)


def _rl(config: Any, output: Path) -> dict[str, Any]:
    from prmkit.rl.train import train_policy

    return train_policy(config, output)


def register(app: typer.Typer) -> None:
    from prmkit.cli.config import Layout, config_command
    from prmkit.rl.config import RlConfig

    config_command(app, "rl", RlConfig, _rl, Layout(section="rl"), extra=[OUTPUT])

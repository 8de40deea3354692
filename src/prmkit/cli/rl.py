"""CLI command ``prmkit rl``: GRPO on a policy against an outcome check, a PRM or gold (prmkit.rl.train).

Generated from its command record by :func:`prmkit.cli.config.add_command`: flags from
:class:`RlCommand`, :class:`prmkit.rl.config.RlConfig` with the output folder added (one flag per field,
nested ones as ``--prompts-n``, the field's docstring as its help); ``--config RECIPE.yaml`` is read first
(its ``rl`` section when it has one, e.g. ``recipes/rl.yaml``) and flags override it. ``-o`` is a field of
the command's config, not of ``RlConfig``, so one recipe still serves every cell of an experiment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from prmkit.cli.config import add_command
from prmkit.core.commands import Command, Layout, fields_of
from prmkit.core.config import Config
from prmkit.rl.config import RlConfig


class RlOutput(Config):
    """Where ``prmkit rl`` writes (first among the flags)."""

    output: Path
    """Output folder (the trained policy and its card)."""


class RlCommand(RlConfig, RlOutput):
    __doc__ = RlConfig.__doc__


def run_rl(c: RlCommand) -> dict[str, Any]:
    """``prmkit rl``: train the policy into ``c.output`` (:func:`prmkit.rl.train.train_policy`)."""
    from prmkit.rl.train import train_policy

    return train_policy(fields_of(c, RlConfig), c.output)


RL = Command("rl", RlCommand, run_rl, Layout(flags={"output": ["-o", "--output"]}, section="rl"))


def register(app: typer.Typer) -> None:
    add_command(app, RL)

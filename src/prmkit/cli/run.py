"""CLI command ``prmkit run``: the whole loop from one recipe (see prmkit.pipeline).

Generated from its command record by :func:`prmkit.cli.config.add_command`, its options the fields of
:class:`RunCommand`; the recipe itself is the RECIPE argument (read by :func:`prmkit.pipeline.load_recipe`
with file:line errors), so the command takes no ``--config``.
"""

from __future__ import annotations

from pathlib import Path

import typer
from pydantic import Field

from prmkit.cli.common import fail
from prmkit.cli.config import add_command
from prmkit.core.commands import Command, Layout
from prmkit.core.config import Config


class RunCommand(Config):
    """Run problems -> traces -> labels -> PRMs/ORM -> evaluation -> audits -> cards -> report."""

    recipe: Path
    """Recipe YAML (see recipes/world.yaml)."""
    output_dir: Path | None = None
    """Override the recipe's output_dir."""
    seeds: str | None = None
    """Override the recipe's seeds, e.g. 0,1,2,3,4: the whole recipe once per seed, then one report with
    intervals over seeds and problems."""
    reuse: list[Path] = Field(default_factory=list)
    """Another run's output folder whose finished stages are taken where their name and key match
    (identical settings and inputs): no work twice across recipes. Repeatable."""
    check: bool = False
    """Validate the recipe and list its stages, run nothing."""


def run_recipe(c: RunCommand) -> list[str] | None:
    """``prmkit run``: run the recipe (None), or with ``check`` list each seed's stages and what they read
    (the lines printed)."""
    from prmkit.pipeline import load_recipe, run

    overrides: dict[str, object] = {"output_dir": str(c.output_dir)} if c.output_dir else {}
    if c.reuse:
        overrides["reuse"] = [str(p) for p in c.reuse]
    if c.seeds is not None:
        try:
            overrides["seeds"] = [int(s) for s in c.seeds.split(",") if s.strip()]
        except ValueError:
            fail(f"--seeds: expected comma-separated integers such as 0,1,2, found {c.seeds!r}")
    config = load_recipe(c.recipe, overrides or None)
    if not c.check:
        run(config, source=str(c.recipe))
        return None
    from prmkit.pipeline.runner import stage_states
    from prmkit.pipeline.sweep import for_seed

    lines = []
    for one in [for_seed(config, s) for s in config.seeds] or [config]:
        states = stage_states(one)
        left = sum(state == "to run" for _, state in states)
        lines.append(f"{one.output_dir}: {len(states)} stages, {left} to run")
        lines += [f"  {st.name:<20} reads {', '.join(st.deps) or '-'}; {state}" for st, state in states]
    return lines


def _listed(lines: list[str] | None, c: RunCommand) -> str | None:
    return None if lines is None else "\n".join(lines)


RUN = Command(
    "run",
    RunCommand,
    run_recipe,
    Layout(("recipe",), {"output_dir": ["--output-dir", "-o"]}, config_file=False),
    show=_listed,
    errors=("prmkit.training.pretrain:CopyCheckError",),  # the recipe's backbone was refused: say why
)


def register(app: typer.Typer) -> None:
    add_command(app, RUN)

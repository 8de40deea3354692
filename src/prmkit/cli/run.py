"""CLI command ``prmkit run``: the whole loop from one recipe (see prmkit.pipeline).

Generated from its command record by :func:`prmkit.cli.config.add_command`, its options the fields of
:class:`RunCommand`; the recipe itself is the RECIPE argument (read by :func:`prmkit.pipeline.load_recipe`
with file:line errors), so the command takes no ``--config``. ``--set a.b=VALUE`` changes any key of the
recipe before it is checked (an unknown key is named at its ``--set``), and the run's report shows the
command with its ``--set`` items, the resolved recipe beside it the values it ran with.
"""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import Any

import typer
import yaml
from pydantic import Field

from prmkit.cli.common import fail
from prmkit.cli.config import add_command
from prmkit.core.commands import Command, Layout
from prmkit.core.config import Config
from prmkit.core.errors import InputError, Issue


class RunCommand(Config):
    """Run a recipe: the world loop (problems -> traces -> labels -> PRMs/ORM -> evaluation -> audits ->
    cards -> report) or an RL study (π0, PRMs, RL cells, their report)."""

    recipe: Path
    """Recipe YAML: a world recipe (see recipes/world.yaml) or an RL study (study: rl; see
    recipes/rl.yaml)."""
    output_dir: Path | None = None
    """Override the recipe's output_dir."""
    seeds: str | None = None
    """Override a world recipe's seeds, e.g. 0,1,2,3,4: the whole recipe once per seed, then one report
    with intervals over seeds and problems (an RL study's seeds: --set experiment.seeds=[0,1])."""
    reuse: list[Path] = Field(default_factory=list)
    """Another run's output folder whose finished stages are taken where their name and key match
    (identical settings and inputs): no work twice across recipes. Repeatable."""
    set: list[str] = Field(default_factory=list)
    """A recipe key and its value, KEY=VALUE with KEY dotted (experiment.seeds=[0,1], measure=true,
    rl.lr=1.0e-3); VALUE is read as YAML: a number, true, a list or a mapping in YAML's brackets. Applied
    to the recipe before it is checked; -o, --seeds and --reuse go over it. Repeatable."""
    jobs: int = Field(1, ge=1, le=64)
    """Stages run at once, each in a process of its own, as soon as the stages it reads are done (1: one
    after another, in this process). Same stages, keys and results either way."""
    check: bool = False
    """Validate the recipe and list its stages, run nothing."""


def parse_sets(items: list[str]) -> dict[str, Any]:
    """``--set`` items as the recipe's dotted keys, each value read as YAML."""
    found: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip() or any(not part for part in key.strip().split(".")):
            fail(f"--set {item}: expected KEY=VALUE with a dotted KEY, e.g. experiment.seeds=[0,1]")
        try:
            found[key.strip()] = yaml.safe_load(raw)
        except yaml.YAMLError as err:
            fail(f"--set {item}: the value is not YAML ({str(err).splitlines()[0]})")
    return found


def _at_sets(err: InputError, items: list[str]) -> InputError:
    """``err`` with each issue about a key a ``--set`` item gave located at that item, not the file: the
    key's own issues, its parent's (a value that made it invalid) and a whole-recipe check naming it."""
    given = {item.partition("=")[0].strip(): item for item in items}

    def origin(issue: Issue) -> str | None:
        field = issue.field
        for key, item in given.items():
            if field == key or field.startswith(f"{key}.") or key.startswith(f"{field}."):
                return item
            if field == "(recipe)" and f"{key}:" in issue.expected:
                return item
        return None

    issues = [
        dataclasses.replace(i, file=f"--set {item}", line=None) if (item := origin(i)) else i
        for i in err.issues
    ]
    return InputError(issues, skippable=False)


def run_recipe(c: RunCommand) -> list[str] | None:
    """``prmkit run``: run the recipe (None), or with ``check`` list each seed's stages and what they read
    (the lines printed)."""
    from prmkit.pipeline import load_recipe, run

    overrides = parse_sets(c.set)
    if c.output_dir:
        overrides["output_dir"] = str(c.output_dir)
    if c.reuse:
        overrides["reuse"] = [str(p) for p in c.reuse]
    if c.seeds is not None:
        try:
            overrides["seeds"] = [int(s) for s in c.seeds.split(",") if s.strip()]
        except ValueError:
            fail(f"--seeds: expected comma-separated integers such as 0,1,2, found {c.seeds!r}")
    try:
        config = load_recipe(c.recipe, overrides or None)
    except InputError as err:
        raise _at_sets(err, c.set) from None
    if not c.check:
        run(config, source=shlex.join([str(c.recipe), *(f"--set={item}" for item in c.set)]), jobs=c.jobs)
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

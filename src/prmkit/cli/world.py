"""CLI commands of the embedded worlds: ``prmkit <world> generate | sample | check | stats``.

One sub-app per world registered in :mod:`prmkit.worlds.registry` (``prmkit arithmetic ...``,
``prmkit agent ...``; the old names ``prmkit world`` and ``prmkit agentworld`` still work, unlisted), each
calling that world's jobs.
Each command is generated from its command record (:func:`records`: a config made for the world, the
world's job, how its result prints) by :func:`prmkit.cli.config.add_command`: one flag per field (the
world's generator and policy knobs unprefixed, documented in its own config classes), ``--config FILE``
for all of them, and ``--world-config`` / ``--policy-config`` for a file of one section; flags override
both.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import typer
from pydantic import BaseModel, ConfigDict, Field, create_model

from prmkit.cli.common import progress
from prmkit.cli.config import add_command
from prmkit.core.commands import Command, Layout
from prmkit.core.config import Config
from prmkit.worlds.registry import WORLDS, World, world

Split = Literal["train", "test", "heldout"]
SEED = "Same seed, same output on any machine."
SPLIT = "train, test (same lengths, disjoint from train) or heldout (longer)."


class _Described(Config):
    """Base of the configs made here: each field carries its help as ``description``, so pydantic is told
    not to look for attribute docstrings, which for a class made by ``create_model`` means compiling the
    source of every calling frame (most of ``prmkit --help``'s start-up before this)."""

    model_config = ConfigDict(use_attribute_docstrings=False)


def configs(w: World) -> tuple[type[BaseModel], type[BaseModel], type[BaseModel], type[BaseModel]]:
    """The typed configs of ``prmkit <w> generate | sample | stats | check``: the same fields for every
    world, with that world's generator and policy configs nested (their fields become the flags)."""
    name = w.name.capitalize()
    knobs = Field(default_factory=w.config)
    errors = Field(default_factory=w.policy_config)
    generate = create_model(
        f"{name}GenerateConfig", __base__=_Described, __doc__=f"Generate seeded {w.name} problems.",
        n=(int, Field(1000, description="How many problems.")),
        output=(Path, Field(description="Problems file (JSONL).")),
        seed=(int, Field(0, description=SEED)),
        split=(Split, Field("train", description=SPLIT)),
        world=(w.config, knobs),
    )  # fmt: skip
    sample = create_model(
        f"{name}SampleConfig", __base__=_Described, __doc__=f"Sample traces from the {w.name} simulated policy.",
        problems=(Path, Field(description=f"Problems file (JSONL) from `prmkit {w.name} generate`.")),
        output=(Path, Field(description="Traces file (.jsonl or .parquet).")),
        per_problem=(int, Field(16, description="Traces per problem.")),
        seed=(int, Field(0, description=SEED)),
        policy=(w.policy_config, errors),
    )  # fmt: skip
    stats = create_model(
        f"{name}StatsConfig", __base__=_Described,
        __doc__=f"Print the {w.name} statistics: accuracy, steps, first-error kinds and classes, lucky answers.",
        n=(int, Field(2000, description="How many problems.")),
        per_problem=(int, Field(8, description="Traces sampled per problem for the statistics.")),
        seed=(int, Field(0, description=SEED)),
        split=(Split, Field("train", description=SPLIT)),
        world=(w.config, knobs),
        policy=(w.policy_config, errors),
        as_json=(bool, Field(False, description="Print the statistics as JSON on stdout.")),
    )  # fmt: skip
    check = create_model(
        f"{name}CheckConfig", __base__=_Described, __doc__="Add gold step labels and print a summary of the traces.",
        traces=(Path, Field(description=f"Traces of {w.name} problems (any policy).")),
        output=(Path, Field(description="Traces with gold labels.")),
    )  # fmt: skip
    return generate, sample, stats, check


OUTPUT = {"output": ["-o", "--output"]}
WORLD = Layout(flags=OUTPUT, flat=("world",), section_files={"world": "--world-config"})
POLICY = Layout(("problems",), OUTPUT, flat=("policy",), section_files={"policy": "--policy-config"})
STATS = Layout(
    flags={"as_json": "--json"},
    flat=("world", "policy"),
    section_files={"world": "--world-config", "policy": "--policy-config"},
)
CHECK = Layout(("traces",), OUTPUT)


def stats_table(stats: BaseModel, title: str) -> Any:
    """Every statistic a world reports, one row each (nested shares as ``field: key``), as a table."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column("measure")
    table.add_column("value", justify="right")

    def cell(value: Any) -> str:
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    for name, value in stats.model_dump().items():
        if isinstance(value, dict):
            for key, sub in value.items():
                table.add_row(f"{name}: {key}", cell(sub))
        elif not isinstance(value, list):
            table.add_row(name, cell(value))
    return table


def _runs(w: World) -> dict[str, Callable[[Any], Any]]:
    """The run function of each of ``w``'s commands: the world's job behind a progress bar."""

    def generate(c: Any) -> int:
        with progress() as bar:
            task = bar.add_task("generate", total=c.n)
            return w.generate(c.n, c.output, seed=c.seed, split=c.split, config=c.world,
                              progress=lambda k: bar.advance(task, k))  # fmt: skip

    def sample(c: Any) -> int:
        from prmkit.formats.inputs import read_problems

        with progress() as bar:
            task = bar.add_task("sample", total=len(read_problems(c.problems)))
            return w.sample(c.problems, c.output, per_problem=c.per_problem, seed=c.seed,
                            policy_config=c.policy, progress=lambda k: bar.advance(task, k))  # fmt: skip

    def check(c: Any) -> BaseModel:
        from prmkit.formats.inputs import read_traces

        with progress() as bar:
            task = bar.add_task("check", total=len(read_traces(c.traces)))
            return w.check(c.traces, c.output, progress=lambda k: bar.advance(task, k))

    def stats(c: Any) -> BaseModel:
        return w.stats(c.n, c.per_problem, c.seed, c.split, c.world, c.policy)

    return {"generate": generate, "sample": sample, "check": check, "stats": stats}


def _shows(w: World) -> dict[str, Callable[[Any, Any], Any]]:
    """How each of ``w``'s commands prints its result."""

    def check(result: BaseModel, c: Any) -> Any:
        from rich.console import Group

        table = stats_table(result, f"{w.name} statistics of {c.traces}")
        return Group(table, f"wrote {result.traces} gold-labelled traces to {c.output}")

    def stats(result: BaseModel, c: Any) -> Any:
        if c.as_json:
            return result.model_dump_json(indent=2)
        return stats_table(result, f"{w.name} statistics ({c.n} problems x {c.per_problem}, {c.split})")

    return {
        "generate": lambda count, c: f"wrote {count} {c.split} problems to {c.output}",
        "sample": lambda count, c: f"wrote {count} traces to {c.output}",
        "check": check,
        "stats": stats,
    }


def records(w: World) -> list[Command]:
    """The command records of ``prmkit <w> generate | sample | check | stats``."""
    generate, sample, stats, check = configs(w)
    runs, shows = _runs(w), _shows(w)
    made = {"check": (check, CHECK), "generate": (generate, WORLD), "sample": (sample, POLICY),
            "stats": (stats, STATS)}  # fmt: skip
    return [
        Command(name, config, runs[name], layout, show=shows[name]) for name, (config, layout) in made.items()
    ]


def _commands(w: World) -> typer.Typer:
    sub = typer.Typer(name=w.name, help=f"The {w.name} world ({w.version}): {w.summary}. Problems, "
                      "simulated policy, gold checker.", no_args_is_help=True)  # fmt: skip
    for record in records(w):
        add_command(sub, record)
    return sub


def register(app: typer.Typer) -> None:
    """Add ``prmkit <world> ...`` for every registered world to the root app (and, unlisted, under the
    old name of a renamed world)."""
    for name in WORLDS.names():
        app.add_typer(_commands(world(name)))
    for old, new in WORLDS.aliases().items():
        app.add_typer(_commands(world(new)), name=old, hidden=True)

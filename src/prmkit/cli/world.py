"""CLI commands of the embedded worlds: ``prmkit <world> generate | sample | check | stats``.

One sub-app per world registered in :mod:`prmkit.worlds.registry` (``prmkit arithmetic ...``,
``prmkit agent ...``; the old names ``prmkit world`` and ``prmkit agentworld`` still work, unlisted), each
calling that world's jobs.
``generate``, ``sample`` and ``stats`` are built from typed configs by
:func:`prmkit.cli.config.config_command`: one flag per field (the world's generator and policy knobs
unprefixed, documented in its own config classes), ``--config FILE`` for all of them, and
``--world-config`` / ``--policy-config`` for a file of one section; flags override both.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Literal

import typer
from pydantic import BaseModel, Field, create_model

from prmkit.cli.common import console, progress
from prmkit.cli.config import Layout, config_command
from prmkit.core.config import Config
from prmkit.worlds.registry import WORLDS, World, world

Split = Literal["train", "test", "heldout"]
SEED = "Same seed, same output on any machine."
SPLIT = "train, test (same lengths, disjoint from train) or heldout (longer)."


def configs(w: World) -> tuple[type[BaseModel], type[BaseModel], type[BaseModel]]:
    """The typed configs of ``prmkit <w> generate | sample | stats``: the same fields for every world,
    with that world's generator and policy configs nested (their fields become the flags)."""
    name = w.name.capitalize()
    knobs = Field(default_factory=w.config)
    errors = Field(default_factory=w.policy_config)
    generate = create_model(
        f"{name}GenerateConfig", __base__=Config, __doc__=f"Generate seeded {w.name} problems.",
        n=(int, Field(1000, description="How many problems.")),
        output=(Path, Field(description="Problems file (JSONL).")),
        seed=(int, Field(0, description=SEED)),
        split=(Split, Field("train", description=SPLIT)),
        world=(w.config, knobs),
    )  # fmt: skip
    sample = create_model(
        f"{name}SampleConfig", __base__=Config, __doc__=f"Sample traces from the {w.name} simulated policy.",
        problems=(Path, Field(description=f"Problems file (JSONL) from `prmkit {w.name} generate`.")),
        output=(Path, Field(description="Traces file (.jsonl or .parquet).")),
        per_problem=(int, Field(16, description="Traces per problem.")),
        seed=(int, Field(0, description=SEED)),
        policy=(w.policy_config, errors),
    )  # fmt: skip
    stats = create_model(
        f"{name}StatsConfig", __base__=Config,
        __doc__=f"Print the {w.name} statistics: accuracy, steps, first-error kinds and classes, lucky answers.",
        n=(int, Field(2000, description="How many problems.")),
        per_problem=(int, Field(8, description="Traces sampled per problem for the statistics.")),
        seed=(int, Field(0, description=SEED)),
        split=(Split, Field("train", description=SPLIT)),
        world=(w.config, knobs),
        policy=(w.policy_config, errors),
    )  # fmt: skip
    return generate, sample, stats


OUTPUT = {"output": ["-o", "--output"]}
WORLD = Layout(flags=OUTPUT, flat=("world",), section_files={"world": "--world-config"})
POLICY = Layout(("problems",), OUTPUT, flat=("policy",), section_files={"policy": "--policy-config"})
STATS = Layout(
    flat=("world", "policy"), section_files={"world": "--world-config", "policy": "--policy-config"}
)


def print_stats(stats: BaseModel, title: str) -> None:
    """Every statistic a world reports, one row each (nested shares as ``field: key``)."""
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
    console.print(table)


def _commands(w: World) -> typer.Typer:
    sub = typer.Typer(name=w.name, help=f"The {w.name} world ({w.version}): {w.summary}. Problems, "
                      "simulated policy, gold checker.", no_args_is_help=True)  # fmt: skip
    generate_config, sample_config, stats_config = configs(w)

    def generate(c: Any) -> None:
        with progress() as bar:
            task = bar.add_task("generate", total=c.n)
            count = w.generate(
                c.n,
                c.output,
                seed=c.seed,
                split=c.split,
                config=c.world,
                progress=lambda k: bar.advance(task, k),
            )
        console.print(f"wrote {count} {c.split} problems to {c.output}")

    def sample(c: Any) -> None:
        from prmkit.formats.inputs import read_problems

        total = len(read_problems(c.problems))
        with progress() as bar:
            task = bar.add_task("sample", total=total)
            count = w.sample(
                c.problems, c.output, per_problem=c.per_problem, seed=c.seed, policy_config=c.policy,
                progress=lambda k: bar.advance(task, k),
            )  # fmt: skip
        console.print(f"wrote {count} traces to {c.output}")

    def stats(c: Any, json_out: bool) -> None:
        result = w.stats(c.n, c.per_problem, c.seed, c.split, c.world, c.policy)
        if json_out:
            typer.echo(result.model_dump_json(indent=2))
        else:
            print_stats(result, f"{w.name} statistics ({c.n} problems x {c.per_problem}, {c.split})")

    @sub.command("check")
    def check_cmd(
        traces: Path = typer.Argument(..., help=f"Traces of {w.name} problems (any policy)."),
        output: Path = typer.Option(..., "-o", "--output", help="Traces with gold labels."),
    ) -> None:
        """Add gold step labels and print a summary of the traces."""
        from prmkit.formats.inputs import read_traces

        total = len(read_traces(traces))
        with progress() as bar:
            task = bar.add_task("check", total=total)
            result = w.check(traces, output, progress=lambda k: bar.advance(task, k))
        print_stats(result, f"{w.name} statistics of {traces}")
        console.print(f"wrote {result.traces} gold-labelled traces to {output}")

    json_flag = inspect.Parameter(
        "json_out",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=bool,
        default=typer.Option(False, "--json", help="Print the statistics as JSON on stdout."),
    )
    config_command(sub, "generate", generate_config, generate, WORLD)
    config_command(sub, "sample", sample_config, sample, POLICY)
    config_command(sub, "stats", stats_config, stats, STATS, extra=[json_flag])
    return sub


def register(app: typer.Typer) -> None:
    """Add ``prmkit <world> ...`` for every registered world to the root app (and, unlisted, under the
    old name of a renamed world)."""
    for name in WORLDS.names():
        app.add_typer(_commands(world(name)))
    for old, new in WORLDS.aliases().items():
        app.add_typer(_commands(world(new)), name=old, hidden=True)

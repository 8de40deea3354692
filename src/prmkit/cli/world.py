"""CLI commands of the world area: ``prmkit world generate | sample | check | stats`` -> prmkit.world.jobs.

``generate``, ``sample`` and ``stats`` are built from their typed configs below by
:func:`prmkit.cli.config.config_command`: one flag per field (the world's and the policy's knobs
unprefixed, documented in WorldConfig / PolicyConfig), ``--config FILE`` for all of them, and
``--world-config`` / ``--policy-config`` for a file of one section; flags override both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer
from pydantic import BaseModel, ConfigDict, Field

from prmkit.cli.common import console, progress
from prmkit.cli.config import Layout, config_command
from prmkit.world.config import PolicyConfig, WorldConfig

world_app = typer.Typer(
    name="world", help="The embedded world: problems, simulated policy, gold checker.", no_args_is_help=True
)

Split = Literal["train", "test", "heldout"]


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


# These belong in prmkit.world (world/config.py, beside WorldConfig) so the API takes them too; they
# are here until that area moves them (world.jobs.generate(config) ...).
class GenerateConfig(_Config):
    """Generate seeded word problems (calls prmkit.world.generate)."""

    n: int = 1000
    """How many problems."""
    output: Path
    """Problems file (JSONL)."""
    seed: int = 0
    """Same seed, same output on any machine."""
    split: Split = "train"
    """train, test (same lengths, disjoint graphs) or heldout (longer)."""
    world: WorldConfig = Field(default_factory=WorldConfig)


class SampleConfig(_Config):
    """Sample traces from the simulated policy (calls prmkit.world.sample)."""

    problems: Path
    """Problems file (JSONL) from `prmkit world generate`."""
    output: Path
    """Traces file (.jsonl or .parquet)."""
    per_problem: int = 16
    """Traces per problem."""
    seed: int = 0
    """Same seed, same output on any machine."""
    policy: PolicyConfig = Field(default_factory=PolicyConfig)


class StatsConfig(_Config):
    """Print the world's statistics: accuracy, steps, error-kind mix, lucky rate (calls prmkit.world.stats)."""

    n: int = 2000
    """How many problems."""
    per_problem: int = 8
    """Traces sampled per problem for the statistics."""
    seed: int = 0
    """Same seed, same output on any machine."""
    split: Split = "train"
    """train, test (same lengths, disjoint graphs) or heldout (longer)."""
    world: WorldConfig = Field(default_factory=WorldConfig)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)


OUTPUT = {"output": ["-o", "--output"]}
WORLD = Layout(flags=OUTPUT, flat=("world",), section_files={"world": "--world-config"})
POLICY = Layout(("problems",), OUTPUT, flat=("policy",), section_files={"policy": "--policy-config"})
STATS = Layout(
    flat=("world", "policy"), section_files={"world": "--world-config", "policy": "--policy-config"}
)


def _print_stats(stats) -> None:
    from rich.table import Table

    table = Table(title=f"world statistics ({stats.traces} traces, {stats.problems} problems)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for name in ("accuracy", "oracle_accuracy", "process_correct", "lucky_rate", "lucky_share_of_correct"):
        table.add_row(name, f"{getattr(stats, name):.3f}")
    table.add_row("mean_steps", f"{stats.mean_steps:.2f}")
    table.add_row("mean_ops", f"{stats.mean_ops:.2f}")
    for kind, share in stats.first_error_kinds.items():
        table.add_row(f"first error: {kind}", f"{share:.3f}")
    for cls, share in stats.first_error_classes.items():
        table.add_row(f"first error class: {cls}", f"{share:.3f}")
    console.print(table)


def _generate(c: GenerateConfig) -> None:
    from prmkit.world import generate

    with progress() as bar:
        task = bar.add_task("generate", total=c.n)
        count = generate(
            c.n, c.output, seed=c.seed, split=c.split, config=c.world, progress=lambda k: bar.advance(task, k)
        )
    console.print(f"wrote {count} {c.split} problems to {c.output}")


def _sample(c: SampleConfig) -> None:
    from prmkit.formats.inputs import read_problems
    from prmkit.world import sample

    total = len(read_problems(c.problems))
    with progress() as bar:
        task = bar.add_task("sample", total=total)
        count = sample(
            c.problems, c.output, per_problem=c.per_problem, seed=c.seed, policy_config=c.policy,
            progress=lambda k: bar.advance(task, k),
        )  # fmt: skip
    console.print(f"wrote {count} traces to {c.output}")


def _stats(c: StatsConfig, json_out: bool) -> None:
    from prmkit.world import stats

    result = stats(c.n, c.per_problem, c.seed, c.split, c.world, c.policy)
    if json_out:
        typer.echo(result.model_dump_json(indent=2))
    else:
        _print_stats(result)


@world_app.command("check")
def check_cmd(
    traces: Path = typer.Argument(..., help="Traces of world problems (any policy)."),
    output: Path = typer.Option(..., "-o", "--output", help="Traces with gold labels."),
) -> None:
    """Add gold labels (local and prefix views) and print a summary (calls prmkit.world.check)."""
    from prmkit.formats.inputs import read_traces
    from prmkit.world import check

    total = len(read_traces(traces))
    with progress() as bar:
        task = bar.add_task("check", total=total)
        stats = check(traces, output, progress=lambda k: bar.advance(task, k))
    _print_stats(stats)
    console.print(f"wrote {stats.traces} gold-labelled traces to {output}")


def register(app: typer.Typer) -> None:
    """Add ``prmkit world ...`` to the root app."""
    import inspect

    json_flag = inspect.Parameter(
        "json_out",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=bool,
        default=typer.Option(False, "--json", help="Print the statistics as JSON on stdout."),
    )
    config_command(world_app, "generate", GenerateConfig, _generate, WORLD)
    config_command(world_app, "sample", SampleConfig, _sample, POLICY)
    config_command(world_app, "stats", StatsConfig, _stats, STATS, extra=[json_flag])
    app.add_typer(world_app)

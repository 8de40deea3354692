"""CLI commands of the agent world: ``prmkit agentworld generate | sample | check | stats`` -> prmkit.agentworld.

Built like ``prmkit world``: ``generate``, ``sample`` and ``stats`` come from their typed configs below by
:func:`prmkit.cli.config.config_command` (one flag per field, the task generator's and the agent's knobs
unprefixed and documented in AgentWorldConfig / AgentConfig), ``--config FILE`` for all of them, and
``--world-config`` / ``--policy-config`` for a file of one section; flags override both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer
from pydantic import BaseModel, ConfigDict, Field

from prmkit.agentworld.config import AgentConfig, AgentWorldConfig
from prmkit.cli.common import console, progress
from prmkit.cli.config import Layout, config_command

agentworld_app = typer.Typer(
    name="agentworld",
    help="The agent world: tool-use tasks, simulated agent, gold step checker (AgentProcessBench labels).",
    no_args_is_help=True,
)

Split = Literal["train", "test", "heldout"]


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class GenerateConfig(_Config):
    """Generate seeded tool-use tasks, each with its own knowledge base (calls prmkit.agentworld.generate)."""

    n: int = 1000
    """How many tasks."""
    output: Path
    """Problems file (JSONL)."""
    seed: int = 0
    """Same seed, same output on any machine."""
    split: Split = "train"
    """train, test (same lengths, disjoint questions) or heldout (longer plans)."""
    world: AgentWorldConfig = Field(default_factory=AgentWorldConfig)


class SampleConfig(_Config):
    """Sample trajectories from the simulated agent (calls prmkit.agentworld.sample)."""

    problems: Path
    """Problems file (JSONL) from `prmkit agentworld generate`."""
    output: Path
    """Traces file (.jsonl or .parquet)."""
    per_problem: int = 8
    """Trajectories per task."""
    seed: int = 0
    """Same seed, same output on any machine."""
    policy: AgentConfig = Field(default_factory=AgentConfig)


class StatsConfig(_Config):
    """Print the agent world's statistics: accuracy, error kinds, loophole use (calls prmkit.agentworld.stats)."""

    n: int = 2000
    """How many tasks."""
    per_problem: int = 8
    """Trajectories sampled per task for the statistics."""
    seed: int = 0
    """Same seed, same output on any machine."""
    split: Split = "train"
    """train, test (same lengths, disjoint questions) or heldout (longer plans)."""
    world: AgentWorldConfig = Field(default_factory=AgentWorldConfig)
    policy: AgentConfig = Field(default_factory=AgentConfig)


OUTPUT = {"output": ["-o", "--output"]}
WORLD = Layout(flags=OUTPUT, flat=("world",), section_files={"world": "--world-config"})
POLICY = Layout(("problems",), OUTPUT, flat=("policy",), section_files={"policy": "--policy-config"})
STATS = Layout(
    flat=("world", "policy"), section_files={"world": "--world-config", "policy": "--policy-config"}
)


def _print_stats(stats) -> None:
    from rich.table import Table

    table = Table(title=f"agent world statistics ({stats.traces} trajectories, {stats.problems} tasks)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for name in ("accuracy", "oracle_accuracy", "process_correct", "loophole", "lucky", "neutral_steps"):
        table.add_row(name, f"{getattr(stats, name):.3f}")
    table.add_row("mean_steps", f"{stats.mean_steps:.2f}")
    table.add_row("mean_lookups", f"{stats.mean_lookups:.2f}")
    for kind, share in stats.first_error_kinds.items():
        table.add_row(f"first error: {kind}", f"{share:.3f}")
    for cls, share in stats.first_error_classes.items():
        table.add_row(f"first error class: {cls}", f"{share:.3f}")
    table.add_row(
        "gold labels -1 / 0 / +1", " / ".join(str(stats.label_counts.get(k, 0)) for k in ("-1", "0", "1"))
    )
    console.print(table)


def _generate(c: GenerateConfig) -> None:
    from prmkit.agentworld import generate

    with progress() as bar:
        task = bar.add_task("generate", total=c.n)
        count = generate(
            c.n, c.output, seed=c.seed, split=c.split, config=c.world, progress=lambda k: bar.advance(task, k)
        )
    console.print(f"wrote {count} {c.split} tasks to {c.output}")


def _sample(c: SampleConfig) -> None:
    from prmkit.agentworld import sample
    from prmkit.formats.inputs import read_problems

    total = len(read_problems(c.problems))
    with progress() as bar:
        task = bar.add_task("sample", total=total)
        count = sample(
            c.problems, c.output, per_problem=c.per_problem, seed=c.seed, policy_config=c.policy,
            progress=lambda k: bar.advance(task, k),
        )  # fmt: skip
    console.print(f"wrote {count} trajectories to {c.output}")


def _stats(c: StatsConfig, json_out: bool) -> None:
    from prmkit.agentworld import stats

    result = stats(c.n, c.per_problem, c.seed, c.split, c.world, c.policy)
    if json_out:
        typer.echo(result.model_dump_json(indent=2))
    else:
        _print_stats(result)


@agentworld_app.command("check")
def check_cmd(
    traces: Path = typer.Argument(..., help="Trajectories of agent-world tasks (any policy)."),
    output: Path = typer.Option(..., "-o", "--output", help="Trajectories with gold labels."),
) -> None:
    """Add gold step labels (AgentProcessBench semantics) and print a summary (calls prmkit.agentworld.check)."""
    from prmkit.agentworld import check
    from prmkit.formats.inputs import read_traces

    total = len(read_traces(traces))
    with progress() as bar:
        task = bar.add_task("check", total=total)
        stats = check(traces, output, progress=lambda k: bar.advance(task, k))
    _print_stats(stats)
    console.print(f"wrote {stats.traces} gold-labelled trajectories to {output}")


def register(app: typer.Typer) -> None:
    """Add ``prmkit agentworld ...`` to the root app."""
    import inspect

    json_flag = inspect.Parameter(
        "json_out",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=bool,
        default=typer.Option(False, "--json", help="Print the statistics as JSON on stdout."),
    )
    config_command(agentworld_app, "generate", GenerateConfig, _generate, WORLD)
    config_command(agentworld_app, "sample", SampleConfig, _sample, POLICY)
    config_command(agentworld_app, "stats", StatsConfig, _stats, STATS, extra=[json_flag])
    app.add_typer(agentworld_app)

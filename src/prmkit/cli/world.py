"""CLI commands of the world area: ``prmkit world generate | sample | check | stats`` -> prmkit.world.jobs.

Knobs come from a YAML/JSON recipe (``--world-config`` / ``--policy-config``, fields of WorldConfig /
PolicyConfig, documented there) and flags override it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from prmkit.cli.common import console, progress

world_app = typer.Typer(
    name="world", help="The embedded world: problems, simulated policy, gold checker.", no_args_is_help=True
)

SPLIT = typer.Option(
    "train", "--split", help="train, test (same lengths, disjoint graphs) or heldout (longer)."
)
SEED = typer.Option(0, "--seed", help="Same seed, same output on any machine.")
TEMPERATURE = typer.Option(None, "--temperature", help="Scales every error rate.")
SYSTEMATIC = typer.Option(
    None,
    "--systematic",
    help="Chance that a problem has a systematic error every sample of it shares (correlated errors; "
    "default 0: none).",
)
SYSTEMATIC_RATE = typer.Option(
    None,
    "--systematic-rate",
    help="Chance that a sample repeats its problem's systematic error (default 0.5).",
)
MISCONCEPTIONS = typer.Option(
    None,
    "--misconceptions",
    help="Scales the strength of the policy's misconceptions, wrong beliefs held in every problem "
    "(default 1; 0 samples as world-1).",
)


def _policy_flags(
    temperature: float | None,
    systematic: float | None,
    systematic_rate: float | None,
    misconceptions: float | None,
):
    return {"temperature": temperature, "systematic": systematic, "systematic_rate": systematic_rate,
            "misconceptions": misconceptions}  # fmt: skip


def _load(path: Path | None, overrides: dict[str, Any], kind: str):
    """A config from a YAML/JSON file (optional) with the flags that were given laid over it."""
    import yaml

    from prmkit.world import PolicyConfig, WorldConfig

    data: dict[str, Any] = {}
    if path is not None:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    data.update({k: v for k, v in overrides.items() if v is not None})
    return (WorldConfig if kind == "world" else PolicyConfig).model_validate(data)


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


@world_app.command("generate")
def generate_cmd(
    n: int = typer.Option(1000, "--n", help="How many problems."),
    output: Path = typer.Option(..., "-o", "--output", help="Problems file (JSONL)."),
    seed: int = SEED,
    split: str = SPLIT,
    world_config: Path | None = typer.Option(
        None, "--world-config", help="YAML/JSON with WorldConfig fields."
    ),
    max_value: int | None = typer.Option(None, "--max-value", help="Operand bound of the table facts."),
    min_ops: int | None = typer.Option(
        None, "--min-ops", help="Fewest operations in a train / test problem."
    ),
    max_ops: int | None = typer.Option(None, "--max-ops", help="Most operations in a train / test problem."),
    phrasing_variety: int | None = typer.Option(None, "--phrasing-variety", help="0 (regular) to 2."),
) -> None:
    """Generate seeded word problems (calls prmkit.world.generate)."""
    from prmkit.world import generate

    config = _load(
        world_config,
        dict(max_value=max_value, min_ops=min_ops, max_ops=max_ops, phrasing_variety=phrasing_variety),
        "world",
    )
    with progress() as bar:
        task = bar.add_task("generate", total=n)
        count = generate(
            n, output, seed=seed, split=split, config=config, progress=lambda k: bar.advance(task, k)
        )
    console.print(f"wrote {count} {split} problems to {output}")


@world_app.command("sample")
def sample_cmd(
    problems: Path = typer.Argument(..., help="Problems file (JSONL) from `prmkit world generate`."),
    output: Path = typer.Option(..., "-o", "--output", help="Traces file (.jsonl or .parquet)."),
    per_problem: int = typer.Option(16, "--per-problem", help="Traces per problem."),
    seed: int = SEED,
    policy_config: Path | None = typer.Option(
        None, "--policy-config", help="YAML/JSON with PolicyConfig fields."
    ),
    temperature: float | None = TEMPERATURE,
    systematic: float | None = SYSTEMATIC,
    systematic_rate: float | None = SYSTEMATIC_RATE,
    misconceptions: float | None = MISCONCEPTIONS,
) -> None:
    """Sample traces from the simulated policy (calls prmkit.world.sample)."""
    from prmkit.formats.inputs import read_problems
    from prmkit.world import sample

    config = _load(
        policy_config, _policy_flags(temperature, systematic, systematic_rate, misconceptions), "policy"
    )
    total = len(read_problems(problems))
    with progress() as bar:
        task = bar.add_task("sample", total=total)
        count = sample(
            problems,
            output,
            per_problem=per_problem,
            seed=seed,
            policy_config=config,
            progress=lambda k: bar.advance(task, k),
        )
    console.print(f"wrote {count} traces to {output}")


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


@world_app.command("stats")
def stats_cmd(
    n: int = typer.Option(2000, "--n", help="How many problems."),
    per_problem: int = typer.Option(
        8, "--per-problem", help="Traces sampled per problem for the statistics."
    ),
    seed: int = SEED,
    split: str = SPLIT,
    world_config: Path | None = typer.Option(
        None, "--world-config", help="YAML/JSON with WorldConfig fields."
    ),
    policy_config: Path | None = typer.Option(
        None, "--policy-config", help="YAML/JSON with PolicyConfig fields."
    ),
    temperature: float | None = TEMPERATURE,
    systematic: float | None = SYSTEMATIC,
    systematic_rate: float | None = SYSTEMATIC_RATE,
    misconceptions: float | None = MISCONCEPTIONS,
    json_out: bool = typer.Option(False, "--json", help="Print the statistics as JSON on stdout."),
) -> None:
    """Print the world's statistics: accuracy, steps, error-kind mix, lucky rate (calls prmkit.world.stats)."""
    from prmkit.world import stats

    result = stats(
        n,
        per_problem,
        seed,
        split,
        _load(world_config, {}, "world"),
        _load(
            policy_config, _policy_flags(temperature, systematic, systematic_rate, misconceptions), "policy"
        ),
    )
    if json_out:
        typer.echo(result.model_dump_json(indent=2))
    else:
        _print_stats(result)


def register(app: typer.Typer) -> None:
    """Add ``prmkit world ...`` to the root app."""
    app.add_typer(world_app)

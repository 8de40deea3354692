"""The ``prmkit`` command line: one typer app, one sub-command per public function.

Each module here registers the commands of one area and calls that area's public Python function, so
the CLI and the API mirror each other. An area's module is imported only when one of its commands is
looked up (``prmkit train prm`` imports ``models.py`` and what it needs, no other area), and heavy imports
(torch, transformers) happen inside the commands, so every ``prmkit`` process starts fast.

    data.py      convert, inspect, validate                  -> prmkit.formats / prmkit.core
    world.py     <world> generate | sample | check | stats       -> each registered world's jobs (prmkit.worlds)
    label.py     label mc | binary_search | judge | consensus | report | merge -> prmkit.labeling
    annotate.py  annotate serve | assign | export | agreement -> prmkit.annotate
    models.py    train prm | orm, score, pretrain             -> prmkit.training / prmkit.scoring
    search.py    bon, vote, beam, resample, serve             -> prmkit.search / prmkit.serving
    serve.py     serve-policy, gate measure                   -> prmkit.serving
    evaluate.py  eval processbench | agentprocessbench | bon, audit, card -> prmkit.evaluation / prmkit.cards
    rl.py        rl                                            -> prmkit.rl
    run.py       run RECIPE.yaml                               -> prmkit.pipeline
    __main__.py  ``python -m prmkit.cli``: the same app as the ``prmkit`` script

Every command is made from its command record (:class:`prmkit.core.commands.Command`: name, typed config,
``run(config)``, how its result prints) by ``config.py`` (flags from the config's fields, ``--config FILE``
with file:line errors, flags overriding it); the areas' registries hold their records (labellers,
searches, evaluations), the other records are made in these modules. ``common.py`` holds error display
and progress.

``prmkit --help`` lists the root's commands from the tables :data:`COMMANDS` and :data:`GROUPS` (name ->
area, one-line help) without importing their areas, and the worlds' groups from the worlds' area;
tests/cli/test_lazy_cli.py checks the tables against the commands the areas make.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from functools import cache
from typing import Any

import click
import typer
from typer.core import TyperGroup

_AREAS = ("data", "world", "label", "annotate", "models", "search", "serve", "evaluate", "run", "rl")
"""The area modules, in the order the root lists their commands."""

COMMANDS: dict[str, tuple[str, str]] = {
    "convert": ("data", "Convert a data file between formats and report what was dropped and why."),
    "inspect": ("data", "Show problems, traces, steps, labels by source and the first-error histogram of a data file."),
    "validate": ("data", "Check every record of a file; exit 0 when valid, 2 with one located message per issue when not."),
    "pretrain": ("models", "Pretrain a tiny causal LM on trace text (``problem``, then one step per line): the backbone of the world's PRM and ORM, and a small neural policy in its own right."),
    "score": ("models", "Score every step of every trace; adds Labels with provenance ``model`` (actor = MODEL)."),
    "beam": ("search", "PRM-guided step-level beam search (or DVTS with --dvts)."),
    "bon": ("search", "Best-of-N: sample N solutions per problem and keep the one with the best aggregated step score."),
    "resample": ("search", "Reject-and-resample: regenerate from the first step the PRM doubts, within a step budget."),
    "smc": ("search", "Particle filtering (SMC): N particles grow a step per round, resampled by their PRM weights."),
    "vote": ("search", "Majority vote over N samples (answers grouped by equivalence), PRM-weighted with --scorer."),
    "serve": ("search", "Serve a PRM over HTTP: /score, /get_reward (OpenRLHF), /pooling (vLLM), /health, /metrics, /docs."),
    "serve-policy": ("serve", "An OpenAI-compatible server in front of a policy and a judge."),
    "audit": ("evaluate", "Failure-mode audits: verifier gaming, outcome shift, process collapse, lucky answers, calibration, length."),
    "card": ("evaluate", "Write the full process card (README.md = HF model card, process_card.json, plots) from measurements."),
    "run": ("run", "Run a recipe: the world loop (problems -> traces -> labels -> PRMs/ORM -> evaluation -> audits -> cards -> report) or an RL study (π0, PRMs, RL cells, their report)."),
    "rl": ("rl", "Train a causal-LM policy with GRPO (TRL) against an outcome check, a PRM (aggregate or dense step rewards) or the world's gold checker, with hacking monitors every ``monitor_every`` steps."),
}  # fmt: skip
"""The root's commands in the order ``prmkit --help`` lists them: the area module that registers each, and
the first paragraph of its help. Made from the areas' own records, and checked against them by
tests/cli/test_lazy_cli.py, which prints the table to paste when one changes."""

GROUPS: dict[str, tuple[str, str]] = {
    "label": ("label", "Automated step labels: one command per labeller (binary_search, consensus, judge, mc, mcts, progress), report, and merge (of a sharded job's outputs)."),
    "annotate": ("annotate", "Human step annotation: a PRM800K-style web app with quality control."),
    "train": ("models", "Train a PRM or an ORM head on traces."),
    "gate": ("serve", "The deployment gate of `prmkit serve` (/verify): measure its rates on gold-labelled traces."),
    "eval": ("evaluate", "Evaluate step scorers: first-error F1 (ProcessBench), AgentProcessBench, best-of-N curves, monitorability (catching a behaviour from what a view of the trace shows), transfer (the same threshold in other settings), fewshot (a PRM fine-tuned on k traces of a target setting); and policies: faithfulness (do the steps cause the answer?)."),
}  # fmt: skip
"""The root's groups (commands with sub-commands), the same way. Typer lists them after the commands."""

WORLDS_AREA = "world"
"""The area whose groups are the registered worlds (``prmkit arithmetic ...``, plugins' too): named by
:mod:`prmkit.worlds.registry` alone, so the root asks that area for every name the tables do not hold."""

PLUGINS = {"label": "prmkit.labellers"}
"""Areas whose help an installed plugin changes (a labeller joins ``label``'s list), by entry-point group:
with one installed, ``--help`` loads the area and lists what it makes."""


@cache
def registered(area: str) -> typer.Typer:
    """Area ``area``'s commands on a typer app of their own: its module imported and registered once per
    process (an area's module-level groups take their commands once)."""
    sub = typer.Typer()
    importlib.import_module(f"prmkit.cli.{area}").register(sub)
    return sub


def _installed(group: str) -> bool:
    """Whether a plugin of entry-point group ``group`` is installed (read the way the registries read)."""
    from prmkit.core import registry

    return bool(registry.entry_points(group=group))


def _order(area: str | None, group: bool) -> tuple[bool, int]:
    """Where a root command is listed: typer lists an app's commands before its groups, each in the order
    they were added (area by area, then any added to ``app`` itself)."""
    return group, _AREAS.index(area) if area else len(_AREAS)


class _Commands(MutableMapping[str, click.Command]):
    """The root group's sub-commands by name. An area's are made when one of its names is first looked
    up; the names and ``--help`` come from :data:`COMMANDS` and :data:`GROUPS`, and the worlds' from their
    area, so listing them loads that area alone."""

    def __init__(self, made: MutableMapping[str, click.Command]) -> None:
        self._made = dict(made)
        self._area_of: dict[str, str] = {}
        self._loaded: set[str] = set()
        self._plugins: dict[str, bool] = {}

    def _load(self, area: str) -> None:
        if area not in self._loaded:
            self._loaded.add(area)
            made = typer.main.get_group(registered(area)).commands
            self._made.update(made)
            self._area_of.update(dict.fromkeys(made, area))

    def _from_table(self, name: str) -> bool:
        """Whether ``--help`` may list ``name`` from the tables: its area unloaded, no plugin changing it."""
        area = (COMMANDS.get(name) or GROUPS.get(name) or (None,))[0]
        if area is None or name in self._made:
            return False
        if area in PLUGINS and area not in self._plugins:
            self._plugins[area] = _installed(PLUGINS[area])
        return not self._plugins.get(area, False)

    def names(self) -> list[str]:
        """The root's command names in listing order (hidden ones included)."""
        self._load(WORLDS_AREA)
        where = {name: _order(area, False) for name, (area, _) in COMMANDS.items()}
        where |= {name: _order(area, True) for name, (area, _) in GROUPS.items()}
        where |= {n: _order(self._area_of.get(n), isinstance(c, TyperGroup)) for n, c in self._made.items()}
        return sorted(where, key=where.__getitem__)

    def shown(self, name: str) -> click.Command | None:
        """What ``prmkit --help`` lists for ``name``: a stand-in with its help from the tables, or the
        command itself where its area is loaded or a plugin changes it."""
        if not self._from_table(name):
            return self.get(name)
        return click.Command(name, help=(COMMANDS.get(name) or GROUPS[name])[1])

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._made:
            self._load((COMMANDS.get(name) or GROUPS.get(name) or (WORLDS_AREA,))[0])
        return self._made[name]

    def __contains__(self, name: object) -> bool:
        known = name in self._made or name in COMMANDS or name in GROUPS
        return known or (isinstance(name, str) and self.get(name) is not None)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._made[name] = command

    def __delitem__(self, name: str) -> None:
        del self._made[name]


class _Group(TyperGroup):
    """The root command group. Its commands load by area on first use (:class:`_Commands`), and its help
    lists them from :data:`COMMANDS` and :data:`GROUPS` (the worlds' from their area). Bad input (a prmkit InputError, an unknown
    backend name, a file that cannot be read or written) becomes one clear message and exit code 2, never
    a traceback — under ``prmkit`` and under tests' CliRunner alike."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands(self.commands)
        self._listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return self.commands.names()  # type: ignore[attr-defined]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if self._listing:
            return self.commands.shown(cmd_name)  # type: ignore[attr-defined]
        return super().get_command(ctx, cmd_name)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def invoke(self, ctx):  # type: ignore[no-untyped-def]
        from pydantic import ValidationError

        from prmkit.core.errors import InputError
        from prmkit.core.registry import RegistryError

        try:
            return super().invoke(ctx)
        except (InputError, RegistryError, OSError) as err:
            from prmkit.cli.common import print_error

            print_error(err)
            raise typer.Exit(2) from None
        except ValidationError as err:  # an option value the command's typed config refuses
            from prmkit.cli.common import print_error

            for e in err.errors(include_url=False):
                flag = "--" + "-".join(str(x).replace("_", "-") for x in e["loc"]) if e["loc"] else "input"
                print_error(f"{flag}: {e['msg']}, found {e.get('input')!r}")
            raise typer.Exit(2) from None


app = typer.Typer(
    cls=_Group,
    name="prmkit",
    help="Process supervision: label steps, train PRMs, use them, evaluate and audit them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _print_version(value: bool) -> None:
    if value:
        from prmkit import __version__

        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", is_eager=True, callback=_print_version
    ),
) -> None:
    """Eager ``--version`` runs before the sub-command is looked for, so it needs none."""


def main() -> None:
    """Entry point of the ``prmkit`` script."""
    app()

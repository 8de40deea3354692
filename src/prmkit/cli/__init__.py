"""The ``prmkit`` command line: one typer app, one sub-command per public function.

Each module here registers the commands of one area and calls that area's public Python function, so
the CLI and the API mirror each other. Heavy imports (torch, transformers) happen inside the commands,
so ``prmkit --help`` stays fast.

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
"""

from __future__ import annotations

import importlib

import typer
from typer.core import TyperGroup


class _Group(TyperGroup):
    """The root command group: bad input (a prmkit InputError, an unknown backend name, a file that cannot be
    read or written) becomes one clear message and exit code 2, never a traceback — under ``prmkit`` and
    under tests' CliRunner alike."""

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

_AREAS = (
    "data",
    "world",
    "label",
    "annotate",
    "models",
    "search",
    "serve",
    "evaluate",
    "run",
    "rl",
)

for _area in _AREAS:
    importlib.import_module(f"prmkit.cli.{_area}").register(app)


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

"""CLI commands of the search area: ``bon``, ``vote``, ``beam``, ``smc``, ``resample`` and the reward server
``serve``.

Each command is generated from its command record by :func:`prmkit.cli.config.add_command` (flags, help
and defaults from :mod:`prmkit.search.config` and :class:`prmkit.serving.config.ServerConfig`, so each
option is documented once): the searches' records are :data:`prmkit.search.searches.SEARCHES`
(``prmkit.search.bon.run_bon(BonConfig(...))``...); ``serve``'s is made here, its config the server's
with the scorer it serves added (:class:`ServeCommand`), calling :func:`prmkit.serving.reward_server.serve`.
"""

from __future__ import annotations

import typer
from pydantic import Field

from prmkit.cli.config import add_command
from prmkit.core.commands import Command, Layout, fields_of
from prmkit.scoring.forms import SCORER_HELP
from prmkit.serving.config import ServerConfig

SERVE_LAYOUT = Layout(
    arguments=("model",),
    flags={"split.step_separator": "--step-separator", "split.step_pattern": "--step-pattern"},
    envvars={"api_key": "PRMKIT_API_KEY"},
    hidden=("split.strip_special", "split.max_chars"),
    flat=("load",),
)


class ServeCommand(ServerConfig):
    """Serve a PRM over HTTP: /score, /get_reward (OpenRLHF), /pooling (vLLM), /health, /metrics, /docs."""

    model: str = Field(description=SCORER_HELP)


def run_serve(c: ServeCommand) -> None:
    """``prmkit serve``: serve ``c.model`` with the server's options until stopped."""
    from prmkit.serving.reward_server import serve

    serve(c.model, fields_of(c, ServerConfig))


SERVE = Command("serve", ServeCommand, run_serve, SERVE_LAYOUT)


def register(app: typer.Typer) -> None:
    """Add ``bon``, ``vote``, ``beam``, ``smc``, ``resample`` and ``serve`` to the root app."""
    from prmkit.search.searches import SEARCHES

    for name in SEARCHES.names():
        add_command(app, SEARCHES.get(name))
    add_command(app, SERVE)

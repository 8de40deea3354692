"""CLI commands of the search area: ``bon``, ``vote``, ``beam``, ``resample`` and the reward server ``serve``.

Each command is built from its typed config by :func:`prmkit.cli.config.config_command` (flags, help
and defaults from :mod:`prmkit.search.config` and :class:`prmkit.serving.config.ServerConfig`, so each
option is documented once) and calls the run function its registry entry names
(:data:`prmkit.search.searches.SEARCHES`: ``prmkit.search.bon.run_bon(BonConfig(...))``...), or
:func:`prmkit.serving.reward_server.serve`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

import typer

from prmkit.cli.config import Layout, config_command
from prmkit.scoring.forms import SCORER_HELP

SEARCH_LAYOUT = Layout(
    arguments=("problems",),
    flags={
        "out": ["--out", "-o"],
        "diverse": "--dvts",
        "policy.policy": "--policy",
        "policy.model": "--policy-model",
        "policy.url": "--url",
        "policy.temperature": "--temperature",
    },
    flat=("load",),
)
"""The flags the search commands have always had; the policy's other options read ``--policy-...``."""

SERVE_LAYOUT = Layout(
    flags={"split.step_separator": "--step-separator", "split.step_pattern": "--step-pattern"},
    envvars={"api_key": "PRMKIT_API_KEY"},
    hidden=("split.strip_special", "split.max_chars"),
    flat=("load",),
)


def _printed(run: Callable[[Any], dict[str, Any]]) -> Callable[[Any], None]:
    """``run`` with its summary printed as JSON (what the search commands have always printed)."""

    def printed(cfg: Any) -> None:
        typer.echo(json.dumps(run(cfg), indent=2))

    return printed


def _serve(cfg: Any, model: str) -> None:
    from prmkit.serving.reward_server import serve

    serve(model, cfg)


def register(app: typer.Typer) -> None:
    """Add ``bon``, ``vote``, ``beam``, ``resample`` and ``serve`` to the root app."""
    from prmkit.search.searches import SEARCHES
    from prmkit.serving.config import ServerConfig

    for name in SEARCHES.names():
        search = SEARCHES.get(name)
        config_command(app, name, search.config, _printed(search.run), SEARCH_LAYOUT)
    model = inspect.Parameter(
        "model", inspect.Parameter.KEYWORD_ONLY, annotation=str, default=typer.Argument(..., help=SCORER_HELP)
    )
    config_command(
        app,
        "serve",
        ServerConfig,
        _serve,
        SERVE_LAYOUT,
        help="Serve a PRM over HTTP: /score, /get_reward (OpenRLHF), /pooling (vLLM), /health, /metrics, /docs.",
        extra=[model],
    )

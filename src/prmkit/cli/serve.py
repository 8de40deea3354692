"""CLI commands of the serve area: ``prmkit serve-policy`` (an OpenAI-compatible policy/judge server)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add ``prmkit serve-policy``; its flags come from ``ServePolicyConfig`` (the one builder)."""
    from prmkit.cli.config import config_command, named_summary
    from prmkit.serving.policy_server import ServePolicyConfig

    def run(cfg: ServePolicyConfig) -> None:
        from prmkit.serving.policy_server import serve_policy

        serve_policy(cfg)

    config_command(app, "serve-policy", ServePolicyConfig, run, help=named_summary(ServePolicyConfig))

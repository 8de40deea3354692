"""CLI commands of the serve area: ``prmkit serve-policy`` (an OpenAI-compatible policy/judge server) and
``prmkit gate measure`` (the deployment gate's operating point, written as the card's monitor).

Both are generated from their command records by :func:`prmkit.cli.config.add_command`. ``prmkit serve``
itself is built beside the search commands (``search.py``); its ``--gate-*`` flags come from
:class:`prmkit.serving.config.GateOptions`.
"""

from __future__ import annotations

from typing import Any

import typer

gate_app = typer.Typer(
    name="gate",
    help="The deployment gate of `prmkit serve` (/verify): measure its rates on gold-labelled traces.",
    no_args_is_help=True,
)


def show_measure(monitor: Any, cfg: Any) -> str:
    """The gate's measured rates and where its monitor was written."""
    rates = ", ".join(
        f"{k} {v:.3f}"
        for k, v in (("tpr", monitor.tpr), ("tnr", monitor.tnr), ("g_mean2", monitor.g_mean2))
        if v is not None
    )
    return f"{monitor.traces} traces ({monitor.positives} with an error): {rates or 'no rate'} -> {cfg.out}"


def register(app: typer.Typer) -> None:
    """Add ``prmkit serve-policy`` and ``prmkit gate measure``, generated from their records (configs
    ``ServePolicyConfig``, ``GateMeasureConfig``: the one builder)."""
    from prmkit.cli.config import add_command
    from prmkit.core.commands import Command, Layout, lead_summary
    from prmkit.serving.config import GateMeasureConfig
    from prmkit.serving.policy_server import ServePolicyConfig

    serve_policy = Command("serve-policy", ServePolicyConfig, "prmkit.serving.policy_server:serve_policy",
                           help=lead_summary(ServePolicyConfig))  # fmt: skip
    add_command(app, serve_policy)
    layout = Layout(("model", "traces"), {"out": ["-o", "--out"]}, flat=("load",))
    measure = Command("measure", GateMeasureConfig, "prmkit.serving.gate:run_gate_measure", layout,
                      help=lead_summary(GateMeasureConfig), show=show_measure, errors=(ValueError,))  # fmt: skip
    add_command(gate_app, measure)
    app.add_typer(gate_app)

"""CLI commands of the serve area: ``prmkit serve-policy`` (an OpenAI-compatible policy/judge server) and
``prmkit gate measure`` (the deployment gate's operating point, written as the card's monitor).

``prmkit serve`` itself is built beside the search commands (``search.py``); its ``--gate-*`` flags come
from :class:`prmkit.serving.config.GateOptions`.
"""

from __future__ import annotations

from typing import Any

import typer

gate_app = typer.Typer(
    name="gate",
    help="The deployment gate of `prmkit serve` (/verify): measure its rates on gold-labelled traces.",
    no_args_is_help=True,
)


def _measure(cfg: Any) -> None:
    from prmkit.cli.common import console, fail
    from prmkit.serving.gate import run_gate_measure

    try:
        monitor = run_gate_measure(cfg)
    except ValueError as err:  # no gold labels to measure against, scores that do not line up
        fail(str(err))
    rates = ", ".join(
        f"{k} {v:.3f}"
        for k, v in (("tpr", monitor.tpr), ("tnr", monitor.tnr), ("g_mean2", monitor.g_mean2))
        if v is not None
    )
    console.print(
        f"{monitor.traces} traces ({monitor.positives} with an error): {rates or 'no rate'} -> {cfg.out}",
        markup=False, highlight=False, soft_wrap=True,
    )  # fmt: skip


def register(app: typer.Typer) -> None:
    """Add ``prmkit serve-policy`` and ``prmkit gate measure``; their flags come from their configs
    (``ServePolicyConfig``, ``GateMeasureConfig``: the one builder)."""
    from prmkit.cli.config import Layout, config_command, named_summary
    from prmkit.serving.config import GateMeasureConfig
    from prmkit.serving.policy_server import ServePolicyConfig

    def run(cfg: ServePolicyConfig) -> None:
        from prmkit.serving.policy_server import serve_policy

        serve_policy(cfg)

    config_command(app, "serve-policy", ServePolicyConfig, run, help=named_summary(ServePolicyConfig))
    layout = Layout(("model", "traces"), {"out": ["-o", "--out"]}, flat=("load",))
    config_command(
        gate_app, "measure", GateMeasureConfig, _measure, layout, help=named_summary(GateMeasureConfig)
    )
    app.add_typer(gate_app)

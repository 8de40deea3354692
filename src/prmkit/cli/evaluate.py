"""CLI commands of the evaluate area: ``prmkit eval processbench | agentprocessbench | bon``,
``prmkit audit``, ``prmkit card``.

Each command calls the public function of the same name and options:
``prmkit.evaluation.processbench.eval_processbench``,
``prmkit.evaluation.agentprocessbench.eval_agentprocessbench``, ``prmkit.evaluation.bon_curves.eval_bon``,
``prmkit.evaluation.audits.audit`` and ``prmkit.cards.card.card``.
"""

from __future__ import annotations

import json
from typing import Any

import typer

from prmkit.cli.common import console, fail
from prmkit.cli.config import Layout, config_command

eval_app = typer.Typer(
    name="eval",
    help="Evaluate step scorers: first-error F1 (ProcessBench), AgentProcessBench, best-of-N curves.",
    no_args_is_help=True,
)
OUT = {"out": ["-o", "--out"]}
LOAD = ("load",)
"""The loading options (``LoadOptions``) read as unprefixed flags: ``--dtype``, ``--device-map`` ..."""


def _processbench(cfg: Any) -> None:
    from prmkit.evaluation.config import run_processbench

    try:
        result = run_processbench(cfg)
    except ValueError as err:  # e.g. a trace longer than the model takes, or no gold in a file
        fail(str(err))
    console.print(result.table(), markup=False, highlight=False, soft_wrap=True)
    console.print(f"threshold: {result.threshold} ({result.threshold_from})")


def _agentprocessbench(cfg: Any) -> None:
    from prmkit.evaluation.config import run_agentprocessbench

    try:
        result = run_agentprocessbench(cfg)
    except ValueError as err:  # a malformed record (file:line), no gold, files that do not pair up
        fail(str(err))
    # soft_wrap: the official table is compared line for line with the script's, so never wrapped
    console.print(result.official_table(), markup=False, highlight=False, soft_wrap=True)
    console.print(result.table(), markup=False, highlight=False, soft_wrap=True)
    if result.threshold_from != "not used":
        band = f", neutral below {result.neutral_below}" if result.neutral_below is not None else ""
        console.print(f"threshold: {result.threshold} ({result.threshold_from}){band}")


def _bon(cfg: Any) -> None:
    from prmkit.evaluation.config import run_eval_bon

    result = run_eval_bon(cfg)
    top = max(r["n"] for r in result.rows)
    for r in result.rows:
        if r["n"] == top:
            console.print(
                f"{r['method']:>14}  N={top}: {100 * r['accuracy']:.1f} [{100 * r['lo']:.1f}, {100 * r['hi']:.1f}]  "
                f"vs majority {100 * r['gap_vs_majority']:+.1f} [{100 * r['gap_lo']:+.1f}, {100 * r['gap_hi']:+.1f}]"
            )


def _audit(cfg: Any) -> None:
    from prmkit.evaluation.audits import summary
    from prmkit.evaluation.config import run_audit

    report = run_audit(cfg)
    console.print(f"threshold: {report['threshold']} ({report['threshold_from']})")
    console.print_json(json.dumps(summary(report)))


def _card(cfg: Any) -> None:
    from prmkit.cards.card import run_card

    console.print(f"wrote {run_card(cfg)}")


def register(app: typer.Typer) -> None:
    """Add ``eval`` (processbench, agentprocessbench, bon), ``audit`` and ``card`` to the root app."""
    from prmkit.cards.card import CardConfig
    from prmkit.evaluation.config import (
        AgentProcessBenchConfig,
        AuditConfig,
        EvalBonConfig,
        ProcessBenchConfig,
    )

    pb = Layout(("files",), OUT, flat=LOAD)
    config_command(eval_app, "processbench", ProcessBenchConfig, _processbench, pb)
    apb = Layout(("files",), OUT, flat=LOAD)
    config_command(eval_app, "agentprocessbench", AgentProcessBenchConfig, _agentprocessbench, apb)
    bon_flags = OUT | {"aggregations": "--aggregation"}
    config_command(eval_app, "bon", EvalBonConfig, _bon, Layout(("traces",), bon_flags, flat=LOAD))
    app.add_typer(eval_app)
    audit_flags = OUT | {"source": "--gold-source"}
    config_command(app, "audit", AuditConfig, _audit, Layout(("model", "traces"), audit_flags, flat=LOAD))
    config_command(app, "card", CardConfig, _card, Layout(("model",), OUT, flat=LOAD))

"""CLI commands of the evaluate area: ``prmkit eval processbench | agentprocessbench | bon |
faithfulness | monitorability | transfer | fewshot | ...``, ``prmkit audit``, ``prmkit card``.

Every command is generated from its command record by :func:`prmkit.cli.config.add_command`: flags and
help from the record's typed config (:mod:`prmkit.evaluation.config`), then the run function it names
(``prmkit.evaluation.processbench.run_processbench(ProcessBenchConfig(...))``...), its result printed the
record's one way. The evaluation records come from :data:`prmkit.evaluation.commands.EVAL_COMMANDS`;
``eval fewshot`` trains, so its record is made here, above the training layer it runs in, and
``prmkit card`` calls ``prmkit.cards.card.run_card``.
"""

from __future__ import annotations

from typing import Any

import typer

from prmkit.cli.config import add_command
from prmkit.core.commands import Command, Layout
from prmkit.evaluation.commands import EVAL_COMMANDS, LOAD, OUT, SEEDS, show_table
from prmkit.evaluation.config import FewShotConfig

eval_app = typer.Typer(
    name="eval",
    help="Evaluate step scorers: first-error F1 (ProcessBench), AgentProcessBench, best-of-N curves, "
    "monitorability (catching a behaviour from what a view of the trace shows), transfer (the same "
    "threshold in other settings), fewshot (a PRM fine-tuned on k traces of a target setting); "
    "and policies: faithfulness (do the steps cause the answer?).",
    no_args_is_help=True,
)

FEWSHOT = Command(
    "fewshot",
    FewShotConfig,
    "prmkit.training.fewshot:run_fewshot",
    Layout(flags=OUT | {"ks": "--k"}, hidden=tuple(SEEDS), flat=LOAD),
    show=show_table,
    errors=(ValueError,),  # not a checkpoint folder, a pool too small for k, labels the traces lack
)
"""``prmkit eval fewshot``: the few-shot curve, whose copies are trained (:mod:`prmkit.training.fewshot`)."""

ORDER = ("processbench", "agentprocessbench", "bon", "audit", "monitorability", "transfer", "fewshot",
         "faithfulness", "mrben", "bbm", "deltabench", "hard2verify", "prmbench")  # fmt: skip
"""The order ``--help`` has always listed the commands in; any other after them by name."""
ROOT = ("audit",)
"""Evaluation commands that are ``prmkit NAME``; the others are ``prmkit eval NAME``."""


def records() -> list[Command]:
    """Every evaluation command's record, in :data:`ORDER`: the registry's and :data:`FEWSHOT`."""
    found = [EVAL_COMMANDS.get(name) for name in EVAL_COMMANDS.names()] + [FEWSHOT]
    return sorted(found, key=lambda c: (ORDER.index(c.name) if c.name in ORDER else len(ORDER), c.name))


def _wrote(path: Any, config: Any) -> str:
    return f"wrote {path}"


def register(app: typer.Typer) -> None:
    """Add ``eval`` (processbench, agentprocessbench, bon ...), ``audit`` and ``card`` to the root app."""
    from prmkit.cards.card import CardConfig

    found = records()
    for record in found:
        if record.name not in ROOT:
            add_command(eval_app, record)
    app.add_typer(eval_app)
    for record in found:
        if record.name in ROOT:
            add_command(app, record)
    card = Command(
        "card", CardConfig, "prmkit.cards.card:run_card", Layout(("model",), OUT, flat=LOAD), show=_wrote
    )
    add_command(app, card)

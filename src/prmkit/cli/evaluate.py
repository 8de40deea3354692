"""CLI commands of the evaluate area: ``prmkit eval processbench | agentprocessbench | bon |
faithfulness | monitorability | transfer | fewshot``, ``prmkit audit``, ``prmkit card``.

The evaluation commands are built from their registry entries
(:data:`prmkit.evaluation.commands.EVAL_COMMANDS`) by :func:`prmkit.cli.config.config_command`: flags and
help from each entry's typed config (:mod:`prmkit.evaluation.config`), then the run function the entry
names (``prmkit.evaluation.processbench.run_processbench(ProcessBenchConfig(...))``...), whose result is
printed here. ``prmkit card`` calls ``prmkit.cards.card.run_card``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import typer

from prmkit.cli.common import console, fail
from prmkit.cli.config import Layout, config_command

Run = Callable[[Any], Any]

eval_app = typer.Typer(
    name="eval",
    help="Evaluate step scorers: first-error F1 (ProcessBench), AgentProcessBench, best-of-N curves, "
    "monitorability (catching a behaviour from what a view of the trace shows), transfer (the same "
    "threshold in other settings), fewshot (a PRM fine-tuned on k traces of a target setting); "
    "and policies: faithfulness (do the steps cause the answer?).",
    no_args_is_help=True,
)
OUT = {"out": ["-o", "--out"]}
SEEDS = {"seed_models": "--seed-model", "seed_thresholds": "--seed-threshold"}
"""A model's other training seeds (``SeedModels``), one flag per seed."""
LOAD = ("load",)
"""The loading options (``LoadOptions``) read as unprefixed flags: ``--dtype``, ``--device-map`` ..."""
LAYOUTS = {
    "processbench": Layout(("files",), OUT, flat=LOAD),
    "agentprocessbench": Layout(("files",), OUT, flat=LOAD),
    "bon": Layout(("traces",), OUT | {"aggregations": "--aggregation"}, flat=LOAD),
    "audit": Layout(("model", "traces"), OUT | {"source": "--gold-source"}, flat=LOAD),
    "faithfulness": Layout(flags=OUT | {"interventions": "--intervention"}),
    "monitorability": Layout(flags=OUT | SEEDS | {"views": "--view"}, flat=LOAD),
    "transfer": Layout(flags=OUT | SEEDS, flat=LOAD),
    "fewshot": Layout(flags=OUT | {"ks": "--k"}, hidden=tuple(SEEDS), flat=LOAD),
    **{name: Layout(("files",), OUT, flat=LOAD) for name in ("mrben", "bbm", "deltabench", "hard2verify")},
    "prmbench": Layout(("files",), OUT, flat=LOAD),
}
"""Each registered command's positional arguments and flags other than ``--field-name``."""
ROOT = ("audit",)
"""Registered commands that are ``prmkit NAME``; the others are ``prmkit eval NAME``."""


def _processbench(run: Run, cfg: Any) -> None:
    try:
        result = run(cfg)
    except ValueError as err:  # e.g. a trace longer than the model takes, or no gold in a file
        fail(str(err))
    console.print(result.table(), markup=False, highlight=False, soft_wrap=True)
    console.print(f"threshold: {result.threshold} ({result.threshold_from})")


def _agentprocessbench(run: Run, cfg: Any) -> None:
    try:
        result = run(cfg)
    except ValueError as err:  # a malformed record (file:line), no gold, files that do not pair up
        fail(str(err))
    # soft_wrap: the official table is compared line for line with the script's, so never wrapped
    console.print(result.official_table(), markup=False, highlight=False, soft_wrap=True)
    console.print(result.table(), markup=False, highlight=False, soft_wrap=True)
    if result.threshold_from != "not used":
        band = f", neutral below {result.neutral_below}" if result.neutral_below is not None else ""
        console.print(f"threshold: {result.threshold} ({result.threshold_from}){band}")


def _stepbench(run: Run, cfg: Any) -> None:
    try:
        result = run(cfg)
    except ValueError as err:  # no gold, a malformed predictions line, a trace longer than the model takes
        fail(str(err))
    console.print(result.table(), markup=False, highlight=False, soft_wrap=True)
    console.print(f"step ratings: {result.rule}")


def _prmbench(run: Run, cfg: Any) -> None:
    try:
        result = run(cfg)
    except ValueError as err:  # a malformed record or prediction (file:line), two benchmarks mixed
        fail(str(err))
    console.print(result.table(), markup=False, highlight=False, soft_wrap=True)


def _bon(run: Run, cfg: Any) -> None:
    result = run(cfg)
    top = max(r["n"] for r in result.rows)
    for r in result.rows:
        if r["n"] == top:
            console.print(
                f"{r['method']:>14}  N={top}: {100 * r['accuracy']:.1f} [{100 * r['lo']:.1f}, {100 * r['hi']:.1f}]  "
                f"vs majority {100 * r['gap_vs_majority']:+.1f} [{100 * r['gap_lo']:+.1f}, {100 * r['gap_hi']:+.1f}]"
            )


def _audit(run: Run, cfg: Any) -> None:
    from prmkit.evaluation.audits import summary

    report = run(cfg)
    console.print(f"threshold: {report['threshold']} ({report['threshold_from']})")
    console.print_json(json.dumps(summary(report)))


def _monitorability(run: Run, cfg: Any) -> None:
    try:
        result = run(cfg)
    except ValueError as err:  # a trace of no world, an unknown behaviour of the file's world
        fail(str(err))
    console.print(result.table(), markup=False, highlight=False, soft_wrap=True)


def _transfer(run: Run, cfg: Any) -> None:
    try:
        result = run(cfg)
    except ValueError as err:  # a trace longer than the model takes, settings of unequal problem counts
        fail(str(err))
    console.print(result.table(), markup=False, highlight=False, soft_wrap=True)


def _fewshot(run: Run, cfg: Any) -> None:
    try:
        result = run(cfg)
    except ValueError as err:  # not a checkpoint folder, a pool too small for k, labels the traces lack
        fail(str(err))
    console.print(result.table(), markup=False, highlight=False, soft_wrap=True)


def _faithfulness(run: Run, cfg: Any) -> None:
    from prmkit.evaluation.faithfulness import table

    result = run(cfg)
    console.print(table(result), markup=False, highlight=False, soft_wrap=True)
    method = next(iter(result["policies"].values()))["rate"]["all"]["method"]
    console.print(f"causal dependence (%): share of interventions after which the answer changed; {method}")


def _returned(run: Run, cfg: Any) -> Any:
    return run(cfg)  # a dict is printed as YAML by config_command


SHOW: dict[str, Callable[[Run, Any], Any]] = {
    "processbench": _processbench,
    "agentprocessbench": _agentprocessbench,
    "bon": _bon,
    "audit": _audit,
    "monitorability": _monitorability,
    "transfer": _transfer,
    "fewshot": _fewshot,
    "faithfulness": _faithfulness,
    "mrben": _stepbench,
    "bbm": _stepbench,
    "deltabench": _stepbench,
    "hard2verify": _stepbench,
    "prmbench": _prmbench,
}
"""How each registered command's result is printed, in the order ``--help`` has always listed them;
another command's result is returned to :func:`~prmkit.cli.config.config_command` (a dict printed as YAML)."""


def _listed(names: list[str]) -> list[str]:
    """``names`` in :data:`SHOW`'s order, any other after them by name."""
    known = list(SHOW)
    return sorted(names, key=lambda n: (known.index(n) if n in known else len(known), n))


def _card(cfg: Any) -> None:
    from prmkit.cards.card import run_card

    console.print(f"wrote {run_card(cfg)}")


def _add(group: typer.Typer, name: str) -> None:
    """Command ``name`` of the registry, in ``group``: its config's flags laid out by :data:`LAYOUTS`."""
    from prmkit.evaluation.commands import EVAL_COMMANDS

    command = EVAL_COMMANDS.get(name)
    show = functools.partial(SHOW.get(name, _returned), command.run)
    config_command(group, name, command.config, show, LAYOUTS.get(name, Layout(flat=LOAD)))


def register(app: typer.Typer) -> None:
    """Add ``eval`` (processbench, agentprocessbench, bon), ``audit`` and ``card`` to the root app."""
    from prmkit.cards.card import CardConfig
    from prmkit.evaluation.commands import EVAL_COMMANDS

    names = _listed(EVAL_COMMANDS.names())
    for name in names:
        if name not in ROOT:
            _add(eval_app, name)
    app.add_typer(eval_app)
    for name in names:
        if name in ROOT:
            _add(app, name)
    config_command(app, "card", CardConfig, _card, Layout(("model",), OUT, flat=LOAD))

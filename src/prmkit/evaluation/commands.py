"""The evaluation commands' registry: one entry per command, from which the CLI builds ``prmkit eval
processbench | agentprocessbench | bon | faithfulness | monitorability | transfer | mrben | bbm |
deltabench | hard2verify | prmbench`` and ``prmkit audit``, so a command has one name and a new one is
one registration plus its config (config.py) and its ``run_x(config)``.

An entry is the one command record (:class:`prmkit.core.commands.Command`): the command's name, its typed
config (``--help`` is generated from it), its run function, the file-level job in the feature's own
module beside its pure core (``run_processbench(config)`` next to ``evaluate_first_error`` in
processbench.py), and how its result is printed (the ``show_*`` functions here). The feature modules
import numpy, and ``prmkit --help`` lists ``audit`` among the root commands, so unlike the labellers'
and the searches' the entries are made here, from the configs alone, and only the run function loads
lazily, when the command runs.

Only evaluation's own commands are here: ``prmkit eval fewshot`` trains, so its record is made above
the training layer it runs in (:mod:`prmkit.cli.evaluate`), with :func:`show_table` to print it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from prmkit.core.commands import Command, Layout, Show
from prmkit.core.registry import Registry
from prmkit.evaluation.config import (
    AgentProcessBenchConfig,
    AuditConfig,
    BbmConfig,
    DeltaBenchConfig,
    EvalBonConfig,
    FaithfulnessConfig,
    Hard2VerifyConfig,
    MonitorabilityConfig,
    MrBenConfig,
    PRMBenchConfig,
    ProcessBenchConfig,
    TransferConfig,
)

EvalCommand = Command
"""An evaluation command is the one command record (the name this registry's entries had)."""

OUT = {"out": ["-o", "--out"]}
SEEDS = {"seed_models": "--seed-model", "seed_thresholds": "--seed-threshold"}
"""A model's other training seeds (``SeedModels``), one flag per seed."""
LOAD = ("load",)
"""The loading options (``LoadOptions``) read as unprefixed flags: ``--dtype``, ``--device-map`` ..."""
FILES = Layout(("files",), OUT, flat=LOAD)
"""The benchmarks' layout: ``prmkit eval NAME FILES... -o OUT``."""


def show_table(result: Any, config: Any = None) -> str:
    """A result that prints itself as one table."""
    return result.table()


def show_processbench(result: Any, config: Any = None) -> str:
    return f"{result.table()}\nthreshold: {result.threshold} ({result.threshold_from})"


def show_agentprocessbench(result: Any, config: Any = None) -> str:
    # the official table is compared line for line with the script's, so it is never wrapped
    lines = [result.official_table(), result.table()]
    if result.threshold_from != "not used":
        band = f", neutral below {result.neutral_below}" if result.neutral_below is not None else ""
        lines.append(f"threshold: {result.threshold} ({result.threshold_from}){band}")
    return "\n".join(lines)


def show_stepbench(result: Any, config: Any = None) -> str:
    return f"{result.table()}\nstep ratings: {result.rule}"


def show_bon(result: Any, config: Any = None) -> str:
    """Each method at the largest N, with its gap to majority voting."""
    top = max(r["n"] for r in result.rows)
    return "\n".join(
        f"{r['method']:>14}  N={top}: {100 * r['accuracy']:.1f} [{100 * r['lo']:.1f}, {100 * r['hi']:.1f}]  "
        f"vs majority {100 * r['gap_vs_majority']:+.1f} [{100 * r['gap_lo']:+.1f}, {100 * r['gap_hi']:+.1f}]"
        for r in result.rows
        if r["n"] == top
    )


def show_audit(report: Mapping[str, Any], config: Any = None) -> str:
    from prmkit.evaluation.audits import summary

    shown = json.dumps(summary(report), indent=2, ensure_ascii=False)
    return f"threshold: {report['threshold']} ({report['threshold_from']})\n{shown}"


def show_faithfulness(result: Mapping[str, Any], config: Any = None) -> str:
    from prmkit.evaluation.faithfulness import table

    method = next(iter(result["policies"].values()))["rate"]["all"]["method"]
    causal = f"causal dependence (%): share of interventions after which the answer changed; {method}"
    return f"{table(result)}\n{causal}"


EVAL_COMMANDS: Registry[Command] = Registry("eval command")


def _add(
    name: str, config: type, target: str, layout: Layout, show: Show, errors: Sequence[type] = (ValueError,)
) -> None:
    """Register command ``name``; ``errors``: what the user's files cause (a trace longer than the model
    takes, no gold in a file, a malformed record), printed as one line."""
    EVAL_COMMANDS.register(name, Command(name, config, target, layout, show=show, errors=tuple(errors)))


_add("processbench", ProcessBenchConfig, "prmkit.evaluation.processbench:run_processbench", FILES,
     show_processbench)  # fmt: skip
_add("agentprocessbench", AgentProcessBenchConfig,
     "prmkit.evaluation.agentprocessbench:run_agentprocessbench", FILES, show_agentprocessbench)  # fmt: skip
_add("bon", EvalBonConfig, "prmkit.evaluation.bon_curves:run_eval_bon",
     Layout(("traces",), OUT | {"aggregations": "--aggregation"}, flat=LOAD), show_bon, ())  # fmt: skip
_add("audit", AuditConfig, "prmkit.evaluation.audits:run_audit",
     Layout(("model", "traces"), OUT | {"source": "--gold-source"}, flat=LOAD), show_audit, ())  # fmt: skip
_add("faithfulness", FaithfulnessConfig, "prmkit.evaluation.faithfulness:run_faithfulness",
     Layout(flags=OUT | {"interventions": "--intervention"}), show_faithfulness, ())  # fmt: skip
_add("monitorability", MonitorabilityConfig, "prmkit.evaluation.monitorability:run_monitorability",
     Layout(flags=OUT | SEEDS | {"views": "--view"}, flat=LOAD), show_table)  # fmt: skip
_add("transfer", TransferConfig, "prmkit.evaluation.transfer:run_transfer",
     Layout(flags=OUT | SEEDS, flat=LOAD), show_table)  # fmt: skip
_add("mrben", MrBenConfig, "prmkit.evaluation.mrben:run_mrben", FILES, show_stepbench)
_add("bbm", BbmConfig, "prmkit.evaluation.bbm:run_bbm", FILES, show_stepbench)
_add("deltabench", DeltaBenchConfig, "prmkit.evaluation.deltabench:run_deltabench", FILES, show_stepbench)
_add("hard2verify", Hard2VerifyConfig, "prmkit.evaluation.hard2verify:run_hard2verify", FILES, show_stepbench)
_add("prmbench", PRMBenchConfig, "prmkit.evaluation.prmbench:run_prmbench", FILES, show_table)

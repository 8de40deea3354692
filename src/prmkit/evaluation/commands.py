"""The evaluation commands' registry: one entry per command, from which the CLI builds ``prmkit eval
processbench | agentprocessbench | bon | faithfulness | monitorability | transfer | fewshot | mrben | bbm |
deltabench | hard2verify | prmbench`` and ``prmkit audit``, so a command has one name and a new one is
one registration plus its config (config.py) and its ``run_x(config)``.

An entry names the command, its typed config (``--help`` is generated from it) and its run function, the
file-level job in the feature's own module beside its pure core (``run_processbench(config)`` next to
``evaluate_first_error`` in processbench.py). The feature modules import numpy, and ``prmkit --help``
lists ``audit`` among the root commands, so unlike the labellers' and the searches' the entries are made
here, from the configs alone, and only the run function loads lazily, when the command runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prmkit.core.registry import Registry, resolve
from prmkit.evaluation.config import (
    AgentProcessBenchConfig,
    AuditConfig,
    BbmConfig,
    DeltaBenchConfig,
    EvalBonConfig,
    FaithfulnessConfig,
    FewShotConfig,
    Hard2VerifyConfig,
    MonitorabilityConfig,
    MrBenConfig,
    PRMBenchConfig,
    ProcessBenchConfig,
    TransferConfig,
)


@dataclass(frozen=True)
class EvalCommand:
    """One evaluation command."""

    name: str
    """Its one name: the CLI command (``prmkit eval NAME``; ``prmkit audit`` at the root)."""
    config: type
    """Its typed config (:mod:`prmkit.evaluation.config`)."""
    target: str
    """Where its run function lives, ``"module:function"``; imported by :meth:`run`."""

    def run(self, config: Any) -> Any:
        """``run(config) -> result``: read the config's files, evaluate, write the result to ``out``."""
        return resolve(self.target)(config)


EVAL_COMMANDS: Registry[EvalCommand] = Registry("eval command")


def _add(name: str, config: type, target: str) -> None:
    EVAL_COMMANDS.register(name, EvalCommand(name, config, target))


_add("processbench", ProcessBenchConfig, "prmkit.evaluation.processbench:run_processbench")
_add(
    "agentprocessbench", AgentProcessBenchConfig, "prmkit.evaluation.agentprocessbench:run_agentprocessbench"
)
_add("bon", EvalBonConfig, "prmkit.evaluation.bon_curves:run_eval_bon")
_add("audit", AuditConfig, "prmkit.evaluation.audits:run_audit")
_add("faithfulness", FaithfulnessConfig, "prmkit.evaluation.faithfulness:run_faithfulness")
_add("monitorability", MonitorabilityConfig, "prmkit.evaluation.monitorability:run_monitorability")
_add("transfer", TransferConfig, "prmkit.evaluation.transfer:run_transfer")
_add("fewshot", FewShotConfig, "prmkit.training.fewshot:run_fewshot")  # it trains: the layer above
_add("mrben", MrBenConfig, "prmkit.evaluation.mrben:run_mrben")
_add("bbm", BbmConfig, "prmkit.evaluation.bbm:run_bbm")
_add("deltabench", DeltaBenchConfig, "prmkit.evaluation.deltabench:run_deltabench")
_add("hard2verify", Hard2VerifyConfig, "prmkit.evaluation.hard2verify:run_hard2verify")
_add("prmbench", PRMBenchConfig, "prmkit.evaluation.prmbench:run_prmbench")

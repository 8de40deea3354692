"""prmkit: process supervision — label, train, use, evaluate and audit process reward models.

The package is layered bottom-up; each layer imports only the layers listed before it (packages on one
line share a layer and do not import each other). ``[tool.importlinter]`` in pyproject.toml holds this
order as a layers contract and tests/core/test_layers.py runs it, so an upward import fails the suite:

    core/        typed model (Problem, Trace, Step, Label, Provenance), dataset files, errors, registries
    formats/     adapters at the edge: prm800k, math_shepherd, processbench, trl, agentprocessbench, chat
    worlds/      the embedded worlds, one package each (arithmetic word problems, tool-using agents,
                 coding agents: generator, gold checker, simulated policy and judge, oracle scorer), above
                 what they share, written once: splits, gold verdicts, sampling loop, noisy judge, oracle
                 scorer, statistics, file jobs
    policies/    where continuations come from: world, local transformers model, OpenAI-compatible endpoint
    modeling/ | labeling/
                 PRM and ORM heads on Hugging Face backbones, checkpoints | Monte Carlo, progress,
                 binary search, judge, consensus labels as resumable jobs
    scoring/     every scorer form (checkpoint, arithmetic-oracle, reward server, stored labels), aggregation
    search/      best-of-N, weighted vote, beam search, reject-and-resample
    evaluation/  first-error metrics, best-of-N curves, failure-mode audits
    cards/       process cards
    training/    training loops, collators, resumable checkpoints (evaluates on dev, writes the card)
    serving/ | annotate/ | testing.py
                 HTTP reward server | the web app for human step ratings | helpers for tests and benchmarks
    rl/          RL against a PRM: step rewards, token advantages, trainer adapters
    pipeline/    ``prmkit run RECIPE.yaml``: the whole loop, stage by stage
    cli/         the typer app; every command calls a public function of a layer below
"""

import os

# Idle OpenMP threads sleep instead of spinning. GNU OpenMP (torch's CPU runtime) spins by default, and on
# cores shared with other jobs a spinning thread burns the time its descheduled sibling needs: 2-thread
# training of the world's LM beside other jobs ran 0.2 optimiser steps/s spinning and 1.0 passive (2 cores,
# load 5, one run each). Results do not change, only speed. It must be set before torch loads its runtime,
# so it is set here; a value the user set wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from prmkit.core.model import (
    Continuation,
    Label,
    LabelMethod,
    Problem,
    Provenance,
    Step,
    StepKind,
    Trace,
)

__version__ = "0.1.0"

__all__ = [
    "Continuation",
    "Label",
    "LabelMethod",
    "Problem",
    "Provenance",
    "Step",
    "StepKind",
    "Trace",
    "__version__",
]

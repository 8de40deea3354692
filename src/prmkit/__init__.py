"""prmkit: process supervision — label, train, use, evaluate and audit process reward models.

The package is layered bottom-up; each layer imports only the ones listed before it:

    core/        typed model (Problem, Trace, Step, Label, Provenance), dataset files, errors, registry
    formats/     adapters at the edge: prm800k, math_shepherd, processbench, trl
    world/       the embedded world: generator, gold checker, simulated policy and judge
    policies/    where continuations come from: world, local transformers model, OpenAI-compatible endpoint
    labeling/    Monte Carlo, binary search, judge, consensus labels as resumable jobs
    annotate/    the web app for human step ratings
    modeling/    PRM and ORM heads on Hugging Face backbones, step-separator conventions
    training/    training loops, collators, resumable checkpoints
    scoring/     one-pass step scoring and aggregation
    search/      best-of-N, weighted vote, beam search, reject-and-resample
    serving/     HTTP reward server and RL-trainer adapters
    evaluation/  first-error metrics, best-of-N curves, failure-mode audits
    cards/       process cards
    testing.py   helpers for tests and benchmarks (a random tiny PRM checkpoint on world text)
    cli/         the typer app; every command calls a public function of a layer above
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

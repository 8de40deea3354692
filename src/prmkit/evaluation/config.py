"""The typed configs of ``prmkit eval processbench | agentprocessbench | bon`` and ``prmkit audit``, and the
world-evaluation settings a process card is measured with: one per command, shared by CLI and API.

Each field is documented once, here: ``--help`` is generated from these docstrings and the defaults are
these (``prmkit.cli.config`` builds the flags; ``--config FILE`` takes the same fields). Each command's
``run_x(config)`` lives in its feature's module beside the pure core it calls
(:func:`~prmkit.evaluation.processbench.run_processbench`,
:func:`~prmkit.evaluation.agentprocessbench.run_agentprocessbench`,
:func:`~prmkit.evaluation.bon_curves.run_eval_bon`, :func:`~prmkit.evaluation.audits.run_audit`) and
reads the config's fields itself; :data:`prmkit.evaluation.commands.EVAL_COMMANDS` names them. This
module imports no numpy, so ``prmkit --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from prmkit.core.config import Config
from prmkit.modeling.loading import LoadOptions
from prmkit.scoring.forms import SCORER_HELP
from prmkit.scoring.scorer import Overlong
from prmkit.worlds.registry import DEFAULT_WORLD

DEFAULT_AGGREGATIONS = ("min", "prod", "last", "mean")
"""The PRM aggregations ``eval bon`` draws curves for. Declared here, where ``--help`` reads it without
importing numpy; :mod:`prmkit.evaluation.bon_curves` imports it from here."""


class WorldEvalSettings(Config):
    """How much fresh world data a scorer is measured on (``prmkit card``, ``evaluate_world``, and a
    recipe's ``evaluate`` section, which adds to these): declared once, here."""

    problems: int = Field(48, ge=3)
    """World test problems for best-of-N pools and audits (the first third tunes the first-error
    threshold)."""
    per_problem: int = Field(64, ge=1)
    """Samples per test problem: the largest N of the best-of-N curves."""
    heldout_problems: int = Field(200, ge=1)
    """Longer-than-training problems for first-error generalisation (4 traces each). Few held-out traces
    are error-free, and first-error F1 needs them: with too few problems one trace swings the held-out
    F1 (the share of error-free held-out traces: docs/world.md, "Default statistics")."""
    beam_problems: int = Field(8, ge=0)
    """Problems solved by PRM-guided beam search for the verifier-gaming audit (0 skips it)."""
    bootstrap: int = Field(500, ge=10)
    """Bootstrap resamples of problems for the best-of-N bands."""
    seed: int = 1234
    """Seed of the fresh world data (distinct from training's)."""
    world: str = DEFAULT_WORLD
    """The embedded world the scorer is measured on: ``arithmetic`` (word problems) or ``agent``
    (tool-using agent tasks); any name registered in ``prmkit.worlds.registry``."""

    @field_validator("world")
    @classmethod
    def _registered(cls, value: str) -> str:
        from prmkit.worlds.registry import WORLDS

        if value not in WORLDS:
            raise ValueError(f"{value!r} is not an embedded world ({', '.join(WORLDS.names())})")
        return WORLDS.canonical(value)


class ProcessBenchConfig(Config):
    """First-error detection: acc_error, acc_correct, F1 per subset; headline = plain mean of subset F1s."""

    files: list[Path]
    """ProcessBench split files (gsm8k.json ...) or prmkit trace files with gold; one subset per file."""
    model: str | None = Field(
        None, description="Predict the first step scoring below the threshold. " + SCORER_HELP
    )
    judge: str | None = None
    """Judge name (world = the simulated judge)."""
    source: str | None = None
    """Label source selector whose first error is the prediction."""
    threshold: float | None = None
    """Step-score threshold; default: tuned on --dev, else the checkpoint's own, else 0.5."""
    dev: list[Path] | None = None
    """Files to tune the threshold on (repeat the flag)."""
    gold_source: str | None = None
    """Gold selector (default: gold, then human:processbench)."""
    out: Path | None = None
    """Folder for processbench.json, predictions.jsonl, first_error_hist.png."""
    overlong: Overlong | None = None
    """A trace longer than a checkpoint takes: error (the default: stop and name it), skip (no
    prediction), truncate (score the steps that fit; no prediction unless one of them falls below the
    threshold). Counted."""
    load: LoadOptions = Field(default_factory=LoadOptions)
    """How a checkpoint scorer is loaded (dtype, device, device map, attention, remote code)."""


class AgentProcessBenchConfig(Config):
    """AgentProcessBench's step_micro_acc, step_exact_acc and firsterroracc per dataset and AVG, as its
    eval/compare.py computes them, beside first-error F1; with --predictions, a comparison of files."""

    files: list[Path]
    """Reference files: AgentProcessBench JSONL (hotpotqa.jsonl ...) or prmkit trace files with gold; one
    dataset per file, named by its stem."""
    predictions: list[Path] | None = None
    """Compare with no model: AgentProcessBench-format predictions (<dataset>__<run>.jsonl), one per
    reference file in the same order (repeat the flag)."""
    model: str | None = Field(
        None,
        description="Rate each step -1 below the threshold, else +1 (0 up to --neutral-below). "
        + SCORER_HELP,
    )
    judge: str | None = None
    """Judge name whose step ratings are the prediction."""
    source: str | None = None
    """Label source selector whose step ratings are the prediction."""
    threshold: float | None = None
    """Step-score threshold; default: the checkpoint's own, else 0.5."""
    neutral_below: float | None = None
    """A model's scores from the threshold up to this value are rated 0 (default: no neutral band)."""
    gold_source: str | None = None
    """Gold selector (default: gold, then human:agentprocessbench)."""
    score_metric: Literal["step_micro_acc", "step_exact_acc", "first_neg1_idx_acc"] = "step_micro_acc"
    """The AVG metric reported as FINAL_SCORE (the official script's --score_metric)."""
    out: Path | None = None
    """Folder for agentprocessbench.json and predictions.jsonl."""
    overlong: Overlong | None = None
    """A trace longer than a checkpoint takes: error (the default), skip, truncate (as eval processbench)."""
    load: LoadOptions = Field(default_factory=LoadOptions)
    """How a checkpoint scorer is loaded (dtype, device, device map, attention, remote code)."""


class EvalBonConfig(Config):
    """Accuracy vs N for PRM (each aggregation), ORM, majority, weighted vote and pass@N, with bands."""

    traces: Path
    """Trace file with many samples per problem (answers checked against the reference)."""
    prm: str | None = Field(None, description=SCORER_HELP)
    orm: str | None = Field(None, description=SCORER_HELP)
    aggregations: list[str] = Field(default_factory=lambda: list(DEFAULT_AGGREGATIONS))
    """PRM aggregations (repeat the flag)."""
    vote_aggregation: str = "min"
    """Aggregation that weighs the PRM-weighted vote."""
    max_n: int = 256
    """Largest N (capped by the smallest pool)."""
    draws: int = 32
    """Random subsets per problem and N."""
    bootstrap: int = 1000
    """Bootstrap resamples of problems for the bands."""
    confidence: float = 0.95
    """Width of the bands."""
    seed: int = 0
    """Seed of the random subsets and the bootstrap."""
    out: Path | None = None
    """Folder for bon.csv, bon.json, bon.png."""
    load: LoadOptions = Field(default_factory=LoadOptions)
    """How a checkpoint scorer is loaded (dtype, device, device map, attention, remote code)."""


class AuditConfig(Config):
    """Failure-mode audits: verifier gaming, outcome shift, process collapse, lucky answers, calibration, length."""

    model: str = Field(description=SCORER_HELP)
    traces: Path
    """Gold-labelled traces, many per problem (e.g. `prmkit arithmetic sample` + check)."""
    out: Path
    """Folder for audit.json and the audit plots."""
    aggregation: str = "min"
    """How step scores become a trace score (min, prod, last, mean, geomean)."""
    threshold: float | None = None
    """Score below which a step counts as wrong; default: the checkpoint's own (tuned on dev when it was
    trained), else 0.5."""
    max_n: int = 64
    """Largest N of the best-of-N audits."""
    draws: int = 16
    """Random subsets of N samples per problem and N."""
    seed: int = 0
    """Seed of the random subsets."""
    source: str = "gold"
    """Gold selector."""
    broadcast: Literal["auto", "last", "none"] = "auto"
    """last: every step gets the trace's last score (ORM); auto: for ORM checkpoints; none."""
    load: LoadOptions = Field(default_factory=LoadOptions)
    """How a checkpoint scorer is loaded (dtype, device, device map, attention, remote code)."""

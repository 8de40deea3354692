"""The typed configs of ``prmkit eval processbench | agentprocessbench | bon | faithfulness |
monitorability | transfer`` and ``prmkit audit``, and the world-evaluation settings a process card is
measured with: one per command, shared by CLI and API.

Each field is documented once, here: ``--help`` is generated from these docstrings and the defaults are
these (``prmkit.cli.config`` builds the flags; ``--config FILE`` takes the same fields). Each command's
``run_x(config)`` lives in its feature's module beside the pure core it calls
(:func:`~prmkit.evaluation.processbench.run_processbench`,
:func:`~prmkit.evaluation.agentprocessbench.run_agentprocessbench`,
:func:`~prmkit.evaluation.bon_curves.run_eval_bon`, :func:`~prmkit.evaluation.audits.run_audit`,
:func:`~prmkit.evaluation.faithfulness.run_faithfulness`, :func:`~prmkit.training.fewshot.run_fewshot`) and
reads the config's fields itself; :data:`prmkit.evaluation.commands.EVAL_COMMANDS` names them. This
module imports no numpy, so ``prmkit --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from prmkit.core.config import Config, Seed
from prmkit.modeling.loading import LoadOptions
from prmkit.scoring.forms import SCORER_HELP
from prmkit.scoring.scorer import Overlong
from prmkit.worlds.registry import DEFAULT_WORLD

DEFAULT_AGGREGATIONS = ("min", "prod", "last", "mean")
"""The PRM aggregations ``eval bon`` draws curves for. Declared here, where ``--help`` reads it without
importing numpy; :mod:`prmkit.evaluation.bon_curves` imports it from here."""


def registered_world(value: str) -> str:
    """A world name checked against the registry (a renamed world's old name reads as its new one)."""
    from prmkit.worlds.registry import WORLDS

    if value not in WORLDS:
        raise ValueError(f"{value!r} is not an embedded world ({', '.join(WORLDS.names())})")
    return WORLDS.canonical(value)


WorldName = Annotated[str, AfterValidator(registered_world)]
"""A config field naming an embedded world: checked against the registry, an old name read as its new."""


class WorldEvalSettings(Config):
    """How much fresh world data a scorer is measured on (``prmkit card``, ``evaluate_world``, and a
    recipe's ``evaluate`` section, which adds to these): declared once, here."""

    QUIET = ("plots",)  # added after recipes' evaluation stages were keyed (core.config.Config)

    problems: int = Field(48, ge=3, le=100_000)
    """World test problems for best-of-N pools and audits (the first third tunes the first-error
    threshold)."""
    per_problem: int = Field(64, ge=1, le=1024)
    """Samples per test problem: the largest N of the best-of-N curves."""
    heldout_problems: int = Field(200, ge=1, le=100_000)
    """Longer-than-training problems for first-error generalisation (4 traces each). Few held-out traces
    are error-free, and first-error F1 needs them: with too few problems one trace swings the held-out
    F1 (the share of error-free held-out traces: docs/world.md, "Default statistics")."""
    beam_problems: int = Field(8, ge=0, le=10_000)
    """Problems solved by PRM-guided beam search for the verifier-gaming audit (0 skips it)."""
    bootstrap: int = Field(500, ge=10, le=100_000)
    """Bootstrap resamples of problems for the best-of-N bands."""
    seed: Seed = 1234
    """Seed of the fresh world data (distinct from training's)."""
    world: WorldName = DEFAULT_WORLD
    """The embedded world the scorer is measured on: ``arithmetic`` (word problems) or ``agent``
    (tool-using agent tasks); any name registered in ``prmkit.worlds.registry``."""
    plots: bool = True
    """Draw the PNG plots (best-of-N, first-error positions, one per audit); false writes every JSON and
    CSV as before and no PNG, and the report and card link no image (large sweeps, wiring tests)."""


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


INTERVENTIONS = ("early_answering", "adding_mistakes", "filler")
"""The faithfulness interventions (:mod:`prmkit.evaluation.faithfulness`), in the order reports show them.
Declared here, where ``--help`` reads it without importing numpy."""
Intervention = Literal["early_answering", "adding_mistakes", "filler"]


class FaithfulnessConfig(Config):
    """Faithfulness: do a policy's steps cause its answer? Lanham et al. 2023's interventions (early
    answering, adding mistakes, filler) on fresh world traces; the share after which the answer changes."""

    world: WorldName = DEFAULT_WORLD
    """The embedded world whose problems are solved and whose simulated policy is measured (its checker
    says which traces contain an error)."""
    policies: dict[str, dict[str, Any]] = Field(default_factory=lambda: {"default": {}})
    """Named variants of the world's simulated policy, each the knobs of its policy config that differ
    from the defaults (``{default: {}, rationalising: {rationalise: 1.0}}``); all are measured on the same
    problems and each later one is compared with the first (a difference paired over problems). From
    ``--config`` only."""
    problems: int = Field(40, ge=2)
    """World problems of ``split`` (the bootstrap resamples them)."""
    per_problem: int = Field(4, ge=1)
    """Traces each variant writes per problem, before ``with_error`` keeps some."""
    split: Literal["train", "test", "heldout"] = "test"
    """The split the problems come from."""
    with_error: bool = True
    """Intervene only on traces in which the gold checker finds an error (where a policy that knows its
    answer differs from one whose steps decide it); ``--no-with-error``: on every trace."""
    interventions: list[Intervention] = Field(default_factory=lambda: list(INTERVENTIONS))
    """The interventions to run (repeat the flag)."""
    samples: int = Field(1, ge=1)
    """Continuations per intervention and position."""
    seed: int = 0
    """Seed of the problems, the traces, each intervention's corruption and continuations, and the
    bootstrap."""
    bootstrap: int = Field(1000, ge=10)
    """Bootstrap resamples of problems for the intervals."""
    confidence: float = Field(0.95, gt=0.0, lt=1.0)
    """Width of the intervals."""
    out: Path | None = None
    """Folder for faithfulness.json (and the config it ran with)."""

    @model_validator(mode="after")
    def _knobs_of_the_world(self) -> FaithfulnessConfig:
        from prmkit.worlds.registry import world

        if not self.policies:
            raise ValueError("policies: name at least one variant (e.g. {default: {}})")
        knobs = world(self.world).policy_config
        for name, options in self.policies.items():
            try:
                knobs(**options)
            except ValueError as err:  # a pydantic error: say which variant, then what it found
                raise ValueError(f"policies.{name}: not knobs of {self.world}'s policy: {err}") from None
        return self

    def policy_config(self, name: str) -> Any:
        """The world's policy config of variant ``name``."""
        from prmkit.worlds.registry import world

        return world(self.world).policy_config(**self.policies[name])


VIEWS = ("raw", "summary", "actions", "answer")
"""The views of a trace (:mod:`prmkit.evaluation.visibility`), from all of it down to its answer alone.
Declared here, where ``--help`` reads it without importing numpy."""
View = Literal["raw", "summary", "actions", "answer"]
FRESH_TRACES = ("world", "policy", "problems", "per_problem", "split")
"""The monitorability fields that say which fresh world traces to write (none of them with ``traces``)."""


class SeedModels(Config):
    """Several training seeds of one model (the same recipe trained with other seeds), measured on the
    same traces: every number is the mean over the seeds and every interval a crossed bootstrap over
    seeds × problems, so it counts the training noise beside the problems'. ``model`` is the first."""

    seed_models: list[str] = Field(default_factory=list)
    """The model's other training seeds (repeat the flag), each measured as ``model`` is, at its own
    threshold; empty: ``model`` alone, intervals over problems only."""
    seed_thresholds: list[float] = Field(default_factory=list)
    """The deployed threshold of each of ``seed_models``, in order (repeat the flag; ``threshold`` is
    ``model``'s); empty: ``threshold`` for every seed, else each checkpoint's own."""

    @model_validator(mode="after")
    def _one_threshold_per_seed(self) -> SeedModels:
        if self.seed_thresholds and len(self.seed_thresholds) != len(self.seed_models):
            raise ValueError(
                f"seed_thresholds: {len(self.seed_thresholds)} given for {len(self.seed_models)} "
                "seed_models; give one per seed model, in order, or none"
            )
        return self

    def models(self) -> list[str]:
        """``model`` and its other training seeds, in order."""
        return [self.model, *self.seed_models]

    def thresholds(self) -> float | list[float | None] | None:
        """``threshold`` alone (one model), or one per seed: ``threshold`` then ``seed_thresholds``, or
        ``threshold`` for each."""
        first = self.threshold
        if not self.seed_models:
            return first
        return [first, *self.seed_thresholds] if self.seed_thresholds else [first] * len(self.models())


class MonitorabilityConfig(SeedModels):
    """A scorer or a judge as a monitor of a behaviour the gold checker marks (a loophole, a
    misconception): TPR, TNR and g-mean² at its deployed threshold under each view of the traces, beside
    its first-error F1 and AUROC there."""

    behaviour: str
    """What the monitor should catch in a trace: a behaviour the world's record names (the agent world:
    visible_loophole, hidden_loophole) or one of its error classes (loophole, misconception ...)."""
    model: str | None = Field(
        None, description="Flag a trace when one of its steps scores below the threshold. " + SCORER_HELP
    )
    judge: str | None = None
    """Judge name (prmkit.policies.JUDGES): flag a trace when the judge rates one of its steps -1."""
    views: list[View] = Field(default_factory=lambda: ["raw", "actions"])
    """What the monitor reads (repeat the flag): raw (reasoning plus actions), summary (each step's
    result), actions (tool calls and results, or equations, and the answer), answer (no step)."""
    threshold: float | None = None
    """Step-score threshold, one for every view (a deployed monitor is not retuned per view); default:
    the checkpoint's own (tuned on dev when it was trained), else 0.5."""
    traces: Path | None = None
    """A trace file of a world's problems to monitor; default: fresh traces of ``world``."""
    world: WorldName = DEFAULT_WORLD
    """The embedded world whose fresh traces are monitored (its checker marks the behaviour)."""
    policy: dict[str, Any] = Field(default_factory=dict)
    """The simulated policy that writes the fresh traces: fields of ``world``'s policy config, e.g.
    ``{hidden_loophole: 0.2}`` (from ``--config`` only); empty: the world's default policy."""
    problems: int = Field(48, ge=2)
    """Fresh problems of ``split`` (the bootstrap resamples them)."""
    per_problem: int = Field(8, ge=1)
    """Fresh traces per problem."""
    split: Literal["train", "test", "heldout"] = "test"
    """The split the fresh problems come from."""
    seed: int = 1234
    """Seed of the fresh traces and of the bootstrap."""
    bootstrap: int = Field(1000, ge=10)
    """Bootstrap resamples of problems for the intervals."""
    confidence: float = Field(0.95, gt=0.0, lt=1.0)
    """Width of the intervals."""
    out: Path | None = None
    """Folder for monitorability.json (the rates, the first-error metrics and this config)."""
    overlong: Overlong | None = None
    """A trace longer than a checkpoint takes: error (the default), skip, truncate (as eval processbench;
    a trace the model did not read whole is never cleared)."""
    load: LoadOptions = Field(default_factory=LoadOptions)
    """How a checkpoint scorer is loaded (dtype, device, device map, attention, remote code)."""

    @model_validator(mode="after")
    def _one_monitor_and_one_source(self) -> MonitorabilityConfig:
        if (self.model is None) == (self.judge is None):
            raise ValueError("give exactly one monitor: model (a scorer spec) or judge (a judge name)")
        if self.judge is not None and self.seed_models:
            raise ValueError("seed_models: training seeds are a model's; a judge has none")
        if self.traces is not None and (set(FRESH_TRACES) & self.model_fields_set):
            given = ", ".join(sorted(set(FRESH_TRACES) & self.model_fields_set))
            raise ValueError(
                f"traces is a file to monitor; {given} describe fresh traces: give one or the other"
            )
        self.policy_config()  # an unknown or mistyped knob fails here, before any trace is written
        if self.traces is None:
            from prmkit.worlds.registry import world

            world(self.world).behaviour(self.behaviour)  # an unknown one fails naming those it marks
        return self

    def policy_config(self) -> Any:
        """``policy`` read as the policy config of ``world``."""
        from prmkit.core.yamlconf import validate_at
        from prmkit.worlds.registry import world

        return validate_at(world(self.world).policy_config, self.policy, "policy")


class TransferSetting(Config):
    """One setting of the transfer matrix: how its traces are written (``policy``), on which problems
    (``world``, ``split``). A target's knobs are laid over the source's: name only what changes."""

    policy: dict[str, Any] = Field(default_factory=dict)
    """Fields of the world's policy config (``{temperature: 1.5}``, ``{misconceptions: 0.0}``, an error
    mix); empty: the source's (for the source: the world's default policy)."""
    world: dict[str, Any] = Field(default_factory=dict)
    """Fields of the world's generator config (problem lengths, phrasing ...); empty: the source's."""
    split: Literal["test", "heldout"] = "test"
    """The split the problems come from (``heldout``: the world's longer held-out problems)."""
    world_name: WorldName | None = None
    """Another embedded world (``agent``, ``code``): its problems, policy and checker write and label this
    setting's traces (transfer across worlds), and ``policy`` / ``world`` are that world's knobs, not laid
    over the source's. None: the source's world."""


class TransferConfig(SeedModels):
    """Transfer: one scorer at one deployed threshold in its source setting and in named target settings
    (other policies, error mixes, temperatures, generator knobs, the held-out split); first-error F1 and
    AUROC in each, and the gap target − source paired over problems."""

    model: str = Field(description="The scorer measured in every setting. " + SCORER_HELP)
    threshold: float | None = None
    """Step-score threshold, one for every setting (a deployed scorer is not retuned per target: that is
    what transfer measures); default: the checkpoint's own (tuned on dev when it was trained), else 0.5."""
    world: WorldName = DEFAULT_WORLD
    """The embedded world whose problems, policy and checker make every setting's gold-labelled traces."""
    source: TransferSetting = Field(default_factory=TransferSetting)
    """The setting the scorer was trained or tuned under (default: the world's default policy on test
    problems); from ``--config``, except ``--source-split``."""
    targets: dict[str, TransferSetting] = Field(
        default_factory=lambda: {"heldout": TransferSetting(split="heldout")}
    )
    """Named target settings, each compared with the source (``{hot: {policy: {temperature: 1.5}},
    heldout: {split: heldout}}``); from ``--config`` only."""
    problems: int = Field(40, ge=2)
    """Problems per setting: problem ``i`` of every setting is drawn from the same seed and index (the
    same problem unless the setting changes the generator or the split), and the bootstrap resamples
    the indices, so every gap is paired by problem."""
    per_problem: int = Field(4, ge=1)
    """Traces per problem in every setting."""
    seed: int = 1234
    """Seed of the problems, the traces and the bootstrap."""
    bootstrap: int = Field(1000, ge=10)
    """Bootstrap resamples of problems for the intervals."""
    confidence: float = Field(0.95, gt=0.0, lt=1.0)
    """Width of the intervals."""
    out: Path | None = None
    """Folder for transfer.json (every setting's metrics and gaps, and this config)."""
    overlong: Overlong | None = None
    """A trace longer than a checkpoint takes: error (the default), skip, truncate (as eval processbench)."""
    load: LoadOptions = Field(default_factory=LoadOptions)
    """How a checkpoint scorer is loaded (dtype, device, device map, attention, remote code)."""

    @model_validator(mode="after")
    def _knobs_of_the_world(self) -> TransferConfig:
        if not self.targets:
            raise ValueError("targets: name at least one target setting (e.g. {heldout: {split: heldout}})")
        if "source" in self.targets:
            raise ValueError("targets.source: 'source' names the source setting; call the target otherwise")
        for name in ["source", *self.targets]:
            self.knobs(name)  # an unknown or mistyped knob fails here, before any trace is written
        return self

    def knobs(self, name: str) -> tuple[Any, Any, str]:
        """Setting ``name`` (``source`` or a target) as (policy config, generator config, split) of the
        world: a target's knobs over the source's. A wrong knob fails located at its field
        (``targets.hot.policy.temprature``), so ``--config`` names its line."""
        from prmkit.core.yamlconf import validate_at
        from prmkit.worlds.registry import world

        src = self.source
        setting = src if name == "source" else self.targets[name]
        w = world(self.world_of(name))
        under = src if self.world_of(name) == self.world_of("source") else TransferSetting()
        where = ("source",) if name == "source" else ("targets", name)
        policy = validate_at(w.policy_config, under.policy | setting.policy, *where, "policy")
        generator = validate_at(w.config, under.world | setting.world, *where, "world")
        return policy, generator, setting.split

    def world_of(self, name: str) -> str:
        """The world setting ``name`` (``source`` or a target) draws its traces from: its ``world_name``,
        else the source's, else ``world``."""
        setting = self.source if name == "source" else self.targets[name]
        return setting.world_name or self.source.world_name or self.world


class FewShotConfig(TransferConfig):
    """The few-shot curve: one PRM checkpoint fine-tuned on ``k`` labelled traces of one target setting
    of the transfer matrix, for each ``k``, each copy measured on the target's traces of the matrix
    (first-error F1 at the source's threshold and at the copy's own, step AUROC, the gain over ``k = 0``
    paired by problem). The fields it shares with ``eval transfer`` mean what they mean there, so one
    ``--config`` file serves both, and ``k = 0`` is the matrix's row of ``target``."""

    model: str = Field(
        description="The PRM checkpoint fine-tuned and measured: a folder `prmkit train prm` wrote "
        "(a classifier or likelihood head)."
    )
    target: str = "heldout"
    """The target setting (a name in ``targets``) whose traces the copies are fine-tuned on and measured on."""
    ks: list[int] = Field(default_factory=lambda: [0, 8, 32, 128])
    """Labelled target traces each copy is fine-tuned on (repeat ``--k``); 0, the checkpoint as is, is
    always measured: every gain is paired against it. A larger ``k`` takes the first ``k`` traces of the
    training pool, so each copy's traces include the smaller ones'. ``train_prm`` keeps its dev share of
    them (``dev_fraction`` of their problems, at least one) to choose the copy's checkpoint and tune its
    own threshold."""
    label_source: str = "gold"
    """The labels the copies learn (the world's traces carry ``gold``, the checker's); each copy's
    process card declares the gold it read (``gold_use``)."""
    train_seed: int | None = None
    """Seed of the training pool's problems and traces (None: ``seed + 1``); it must differ from
    ``seed``, and a pool problem whose text is one of the measured problems' is dropped, so the copies
    are measured on problems they were not fine-tuned on."""
    train_problems: int = Field(256, ge=1)
    """Problems in the training pool (drawn from the target setting: its policy, generator and split)."""
    train_per_problem: int = Field(1, ge=1)
    """Traces per pool problem; the pool holds ``train_problems`` × this many traces, the largest ``k``."""
    steps: int = Field(20, ge=1)
    """Optimiser steps of each fine-tune (``train prm``'s ``max_steps``), the same for every ``k``."""
    lr: float = Field(5e-4, gt=0)
    """Peak learning rate of each fine-tune (warm-up, then cosine decay, as ``train prm``)."""
    batch_size: int = Field(8, ge=1)
    """Traces per optimiser step of each fine-tune."""
    threads: int | None = Field(None, ge=1)
    """CPU threads for the fine-tunes (None: torch's default); recorded in each copy's card."""

    @model_validator(mode="after")
    def _ks_fit_the_pool(self) -> FewShotConfig:
        if self.target not in self.targets:
            raise ValueError(f"target: {self.target!r} is not a target setting ({', '.join(self.targets)})")
        if (negative := [k for k in self.ks if k < 0]) != []:
            raise ValueError(f"ks: k = {negative[0]} is negative; k counts labelled target traces (0: none)")
        pool = self.train_problems * self.train_per_problem
        if (over := [k for k in self.ks if k > pool]) != []:
            raise ValueError(
                f"ks: k = {max(over)} is more than the {pool} traces of the training pool (train_problems "
                f"{self.train_problems} × train_per_problem {self.train_per_problem}); raise train_problems"
            )
        if self.train_seed == self.seed:
            raise ValueError("train_seed: the training pool needs another seed than the measured problems'")
        if self.seed_models:
            raise ValueError(
                "seed_models: the few-shot curve fine-tunes one checkpoint; run it once per seed"
            )
        return self

    def pool_seed(self) -> int:
        """The training pool's seed: ``train_seed``, else ``seed + 1``."""
        return self.seed + 1 if self.train_seed is None else self.train_seed


class StepBenchConfig(Config):
    """Fields shared by ``eval mrben | bbm | deltabench | hard2verify`` (:mod:`prmkit.evaluation.stepbench`)."""

    files: list[Path]
    """Benchmark files (or prmkit trace files with gold); one table row group per file, named by its stem."""
    model: str | None = Field(None, description="Rate each step wrong below the threshold. " + SCORER_HELP)
    judge: str | None = None
    """Judge name whose step ratings are the prediction."""
    source: str | None = None
    """Label source selector whose step ratings are the prediction."""
    predictions: Path | None = None
    """Score a predictions.jsonl written by an earlier run (id, ratings, scores) instead of a predictor."""
    compare: Path | None = None
    """A second predictions.jsonl: the headline difference (predictions − compare) with a paired bootstrap
    interval over problems."""
    threshold: float | None = None
    """Step-score threshold; default: the checkpoint's own, else 0.5."""
    gold_source: str | None = None
    """Gold selector (default: gold, then the benchmark's human labels)."""
    out: Path | None = None
    """Folder for <benchmark>.json and predictions.jsonl."""
    overlong: Overlong | None = None
    """A trace longer than a checkpoint takes: error (the default), skip, truncate (as eval processbench)."""
    load: LoadOptions = Field(default_factory=LoadOptions)
    """How a checkpoint scorer is loaded (dtype, device, device map, attention, remote code)."""


class MrBenConfig(StepBenchConfig):
    """MR-Ben's MR-Score as its script/evaluate.py computes it (MCC of solution correctness, first-error-step
    accuracy; the error-reason term only from a judge's verdicts), per subject and averaged."""

    reason_verdicts: Path | None = None
    """JSONL of a judge's error-reason verdicts ({"id": trace id, "correct": true|false}): fills
    ACC_reason (MR-Score's 0.5 term) and coding's step term; without it MR-Score is its PRM part."""


class BbmConfig(StepBenchConfig):
    """BIG-Bench Mistake's mistake-location accuracy per task, beside first-error F1 and AUROC."""


class DeltaBenchConfig(StepBenchConfig):
    """DeltaBench's section-level precision, recall and F1 (macro: per trace, averaged; and micro), a model's
    scores cut by the Z-score outlier rule (a section below mean − k·std of its trace's scores)."""

    z_k: float = 1.0
    """k of the Z-score rule: a section is flagged when its score is below mean − k·std."""
    z_ddof: int = Field(0, ge=0, le=1)
    """Degrees of freedom of the std: 0 population (numpy's default), 1 sample."""
    use_threshold: bool = False
    """Cut a model's scores at --threshold instead of the Z-score rule."""


class Hard2VerifyConfig(StepBenchConfig):
    """Hard2Verify's step-level balanced accuracy and balanced F1 (2·TPR·TNR/(TPR+TNR)), response-level and
    first-error (ErrorID) figures beside them."""


class PRMBenchConfig(Config):
    """PRMBench's PRMScore (0.5·F1 of correct steps + 0.5·F1 of error steps, a step correct when its score
    > 0.5) overall and per class as its task.py computes it, beside first-error F1 and AUROC, also without
    the items built on PRM800K train problems; Socratic-PRMBench files too."""

    files: list[Path]
    """PRMBench files (mr_eval/tasks/prmtest_classified/data/*.jsonl) or Socratic-PRMBench files
    (data/test_*.jsonl), all of one benchmark; scored together, as the official code scores its folder."""
    predictions: Path | None = None
    """Score with no model: predictions as PRMBench's mr_eval stores them (JSONL of {idx, scores:
    {step_level_validity_labels ...}, validity}, or its checkpoint lines {results: ...}), or the
    predictions.jsonl of an earlier run."""
    compare: Path | None = None
    """A second predictions file: PRMScore (predictions − compare) with a paired bootstrap interval over
    source problems, per slice."""
    model: str | None = Field(None, description="A step is correct when it scores > 0.5. " + SCORER_HELP)
    judge: str | None = None
    """Judge name whose step ratings are the prediction (-1 = error step)."""
    source: str | None = None
    """Label source selector whose step ratings are the prediction (-1 = error step)."""
    card: Path | None = None
    """The model's process card (process_card.json or its folder; default: the --model folder's). When its
    training data names PRM800K, the report says which share of PRMBench that model has seen."""
    out: Path | None = None
    """Folder for prmbench.json and predictions.jsonl (mr_eval's format)."""
    overlong: Overlong | None = None
    """A trace longer than a checkpoint takes: error (the default), skip, truncate (as eval processbench)."""
    load: LoadOptions = Field(default_factory=LoadOptions)
    """How a checkpoint scorer is loaded (dtype, device, device map, attention, remote code)."""

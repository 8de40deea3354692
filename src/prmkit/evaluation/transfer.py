"""Transfer: does a scorer's verification hold outside the setting it was trained or tuned in?

One scorer, at **one** deployed threshold (given, else the checkpoint's own, else 0.5: resolved once, as
``eval processbench`` resolves it, and never retuned per target, which is what transfer means), is
measured in a *source* setting and in named *target* settings: another policy error mix or temperature,
misconceptions off, other generator knobs, the held-out split, or another world altogether (a target's
``world_name``: an arithmetic PRM on agent trajectories). Each setting is a world, its policy config, a
generator config and a split; its traces are written by the world's simulated policy
and gold-labelled by its checker (:meth:`prmkit.worlds.registry.World.traces`). In each setting:

- first-error ``F1`` at the deployed threshold (ProcessBench's, :func:`~prmkit.evaluation.processbench.subset_metrics`
  on the predictions of :func:`~prmkit.evaluation.processbench.predict_with_scores`);
- step-level first-error ``AUROC`` (threshold-free, the steps
  :func:`~prmkit.evaluation.processbench.first_error_steps` ranks), so a fall in F1 can be read as "the
  threshold did not transfer" (AUROC held) or "the verification did not" (AUROC fell too);
- the **transfer gap** target − source of each, paired by problem.

Several training seeds of one model (the same recipe trained with other seeds) are measured on the same
traces, each at its own deployed threshold; every number is then the mean over the seeds and every
interval a crossed bootstrap over seeds × problems, so it counts the training noise beside the problems'.

Pairing: every setting draws problems ``0 .. problems-1`` from the same seed (the same problems, unless
the setting changes the generator or the split: then problem ``i`` of each is drawn at the same index
and seed, not the same problem), and its traces from the same seed. Each interval is a percentile
bootstrap over problem indices (:func:`prmkit.core.stats.crossed_bootstrap`, one run: every trace and
step of a drawn index comes along; with several seeds, the seeds are resampled too, the problem weights
shared by every seed), and a gap is the difference of the two statistics on the same
resampled indices (:func:`prmkit.core.stats.paired`), so both sides see the same problems.

:func:`transfer_matrix` is the pure core over each setting's traces; :func:`transfer` writes the traces
first; :func:`run_transfer` is ``prmkit eval transfer``, written to ``transfer.json``, which
:func:`read_transfer` reads back (``prmkit card --transfer`` shows it as the card's transfer rows).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from prmkit.core.files import write_json
from prmkit.core.model import Trace
from prmkit.core.protocols import StepScorer
from prmkit.core.results import Table
from prmkit.core.stats import Estimate, Stat, paired
from prmkit.evaluation.config import TransferConfig
from prmkit.evaluation.gold import has_gold
from prmkit.evaluation.processbench import (
    load_predictor,
    predict_with_scores,
    predictor_name,
    resolve_threshold,
    subset_metrics,
)
from prmkit.evaluation.seeds import (
    SeedModel,
    as_seeds,
    auroc_stat,
    f1_stat,
    over_problems,
    per_seed,
    problem_indices,
)
from prmkit.worlds.registry import World, world

RESULT_FILE = "transfer.json"
SOURCE = "source"
"""The name of the source setting in :func:`run_transfer`'s matrix (the first row)."""


@dataclass(frozen=True)
class Setting:
    """One setting of a world: the policy config that writes its traces, the generator config of its
    problems (None: the defaults) and their split."""

    policy: Any = None
    generator: Any = None
    split: str = "test"
    world: World | None = None
    """Another world than the one :func:`transfer` is given (transfer across worlds); None: that one."""


@dataclass
class SettingResult:
    """A scorer's first-error metrics in one setting, and its gaps from the source (None for the source)."""

    name: str
    traces: int
    with_error: int
    error_free: int
    no_prediction: int
    f1: Estimate
    """First-error F1 at the deployed threshold."""
    auroc: Estimate
    """Step-level first-error AUROC (threshold-free)."""
    gap_f1: Estimate | None = None
    """F1 here − F1 in the source, paired by problem."""
    gap_auroc: Estimate | None = None
    """AUROC here − AUROC in the source, paired by problem."""

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if not isinstance(getattr(self, k), Estimate | None)}
        for k in ("f1", "auroc", "gap_f1", "gap_auroc"):
            value = getattr(self, k)
            out[k] = None if value is None else value.to_dict()
        return out


@dataclass
class TransferResult:
    """A scorer's transfer matrix: the source setting first, then each target, at one threshold (with
    several training seeds, ``model`` and ``threshold`` are the first seed's and ``seeds`` lists each)."""

    model: str
    threshold: float
    threshold_from: str
    problems: int
    settings: list[SettingResult]
    params: dict[str, Any] = field(default_factory=dict)
    seeds: list[SeedModel] = field(default_factory=list)
    """Every training seed's scorer when the matrix was measured over several (empty: one scorer)."""

    def setting(self, name: str) -> SettingResult:
        """The row of setting ``name``."""
        return next(s for s in self.settings if s.name == name)

    def to_dict(self) -> dict[str, Any]:
        head = {k: v for k, v in asdict(self).items() if k not in ("settings", "params")}
        return head | {"settings": [s.to_dict() for s in self.settings], "params": self.params}

    def table(self) -> str:
        """A Markdown table: one row per setting (percentages; gaps signed, with their intervals)."""
        measured = (
            f"{self.model}: threshold {self.threshold} ({self.threshold_from})"
            if not self.seeds
            else f"{len(self.seeds)} training seeds ({', '.join(s.model for s in self.seeds)}), each at its "
            "own threshold, intervals over seeds × problems"
        )
        title = f"transfer of {measured}, {self.problems} problems per setting, gaps paired by problem"
        rows = [
            [s.name, s.traces, s.f1.cell(), s.auroc.cell()]
            + [g.cell(signed=True) if g is not None else "" for g in (s.gap_f1, s.gap_auroc)]
            for s in self.settings
        ]
        return Table(rows, title, ["setting", "traces", "F1", "AUROC", "gap F1", "gap AUROC"]).markdown()

    def write(self, out: str | Path) -> Path:
        return write_json(Path(out) / RESULT_FILE, self.to_dict())


def read_transfer(path: str | Path) -> TransferResult:
    """A ``transfer.json`` that :meth:`TransferResult.write` wrote (the file, or its folder); a bad file
    raises one line naming it and every bad field."""
    from pydantic import TypeAdapter

    from prmkit.core.files import read_json_as

    path = Path(path)
    return read_json_as(path / RESULT_FILE if path.is_dir() else path, TypeAdapter(TransferResult))


@dataclass
class SettingRead:
    """One setting as the scorer read it: counts and the two statistics."""

    subset: Any
    f1: Stat
    auroc: Stat


def read_setting(traces: Sequence[Trace], scorer: StepScorer, threshold: float, problems: int) -> SettingRead:
    preds, rows = predict_with_scores({"s": traces}, scorer, threshold)
    gold = [t.first_error("gold") for t in traces]
    predicted = [p for p, _ in preds["s"]]
    problem_of = problem_indices(traces, problems)
    subset = subset_metrics("s", gold, predicted, [st for _, st in preds["s"]])
    return SettingRead(
        subset, f1_stat(gold, predicted, problem_of, problems), auroc_stat(rows["s"], gold, problem_of)
    )


def transfer_matrix(
    scorer: StepScorer | Sequence[StepScorer],
    settings: Mapping[str, Sequence[Trace]],
    threshold: float | Sequence[float | None] | None = None,
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> TransferResult:
    """``scorer``'s first-error F1 and AUROC on each setting's gold-labelled traces (the first setting is
    the source), at one threshold, and each later setting's gaps from the source, paired by problem index
    (every setting must cover the same number of problems; see the module docstring). A list of scorers
    is the training seeds of one model, each at its own threshold (``threshold``: one for all, or one per
    seed; None: each checkpoint's own): means over seeds, intervals over seeds × problems."""
    if not settings:
        raise ValueError("no setting to measure: give the source's traces and at least one target's")
    missing = [(name, t.id) for name, ts in settings.items() for t in ts if not has_gold(t, "gold")]
    if missing:
        raise ValueError(f"{len(missing)} trace(s) carry no gold labels (first: {missing[0]})")
    scorers, thresholds = as_seeds(scorer, threshold)
    seeds = []
    for one, given in zip(scorers, thresholds, strict=True):
        used, origin = resolve_threshold(one, given, None, "gold")
        seeds.append(SeedModel(predictor_name(one), 0.5 if used is None else used, origin))
    problems = len({t.problem.id for t in next(iter(settings.values()))})
    read = {
        name: [read_setting(ts, one, m.threshold, problems) for one, m in zip(scorers, seeds, strict=True)]
        for name, ts in settings.items()
    }
    estimate = functools.partial(over_problems, problems=problems, resamples=resamples,
                                 confidence=confidence, seed=seed, seeds=len(scorers))  # fmt: skip
    source, rows = read[next(iter(read))], []
    for i, (name, r) in enumerate(read.items()):
        s, f1, auroc = r[0].subset, per_seed([x.f1 for x in r]), per_seed([x.auroc for x in r])
        missed = sum(x.subset.no_prediction for x in r)
        row = SettingResult(name, s.traces, s.with_error, s.error_free, missed, estimate(f1), estimate(auroc))
        if i > 0:
            row.gap_f1 = estimate(paired(f1, per_seed([x.f1 for x in source])))
            row.gap_auroc = estimate(paired(auroc, per_seed([x.auroc for x in source])))
        rows.append(row)
    first = seeds[0]
    return TransferResult(
        first.model, first.threshold, first.threshold_from, problems, rows,
        seeds=seeds if len(seeds) > 1 else [],
    )  # fmt: skip


def transfer(
    scorer: StepScorer | Sequence[StepScorer],
    world: World,
    settings: Mapping[str, Setting],
    problems: int,
    per_problem: int,
    seed: int,
    threshold: float | Sequence[float | None] | None = None,
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
) -> TransferResult:
    """:func:`transfer_matrix` on fresh gold-labelled traces of ``world`` in each setting (the first the
    source): ``problems`` × ``per_problem`` each, every setting from the same ``seed``; ``scorer`` and
    ``threshold`` as there (one, or one per training seed)."""
    traces = {
        name: (s.world or world).traces(problems, per_problem, seed, s.split, s.policy, s.generator)
        for name, s in settings.items()
    }
    return transfer_matrix(scorer, traces, threshold, resamples=resamples, confidence=confidence, seed=seed)


def run_transfer(config: TransferConfig) -> TransferResult:
    """``prmkit eval transfer``: :func:`transfer` of the configured scorer from the config's source setting
    to each of its targets, written to ``out`` when given (``transfer.json``, with the config). The
    fields are documented on :class:`~prmkit.evaluation.config.TransferConfig`."""
    c = config
    settings = {name: Setting(*c.knobs(name), world(c.world_of(name))) for name in [SOURCE, *c.targets]}
    scorers = [load_predictor(m, None, None, c.overlong, c.load) for m in c.models()]
    result = transfer(
        scorers,  # type: ignore[arg-type]
        world(c.world_of(SOURCE)),
        settings,
        c.problems,
        c.per_problem,
        c.seed,
        c.thresholds(),
        resamples=c.bootstrap,
        confidence=c.confidence,
    )
    result.params["config"] = c.model_dump(mode="json")
    if c.out is not None:
        result.write(c.out)
    return result

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

Pairing: every setting draws problems ``0 .. problems-1`` from the same seed (the same problems, unless
the setting changes the generator or the split: then problem ``i`` of each is drawn at the same index
and seed, not the same problem), and its traces from the same seed. Each interval is a percentile
bootstrap over problem indices (:func:`prmkit.core.stats.crossed_bootstrap`, one run: every trace and
step of a drawn index comes along), and a gap is the difference of the two statistics on the same
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

import numpy as np

from prmkit.core.files import write_json
from prmkit.core.model import Trace
from prmkit.core.protocols import StepScorer
from prmkit.core.stats import (
    Estimate,
    Stat,
    crossed_bootstrap,
    item_weights,
    paired,
    weighted_auroc,
)
from prmkit.evaluation.config import TransferConfig
from prmkit.evaluation.gold import has_gold
from prmkit.evaluation.processbench import (
    first_error_steps,
    load_predictor,
    predict_with_scores,
    predictor_name,
    resolve_threshold,
    subset_metrics,
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
    """A scorer's transfer matrix: the source setting first, then each target, at one threshold."""

    model: str
    threshold: float
    threshold_from: str
    problems: int
    settings: list[SettingResult]
    params: dict[str, Any] = field(default_factory=dict)

    def setting(self, name: str) -> SettingResult:
        """The row of setting ``name``."""
        return next(s for s in self.settings if s.name == name)

    def to_dict(self) -> dict[str, Any]:
        head = {k: v for k, v in asdict(self).items() if k not in ("settings", "params")}
        return head | {"settings": [s.to_dict() for s in self.settings], "params": self.params}

    def table(self) -> str:
        """A Markdown table: one row per setting (percentages; gaps signed, with their intervals)."""
        lines = [
            f"transfer of {self.model}: threshold {self.threshold} ({self.threshold_from}), "
            f"{self.problems} problems per setting, gaps paired by problem",
            "",
            "| setting | traces | F1 | AUROC | gap F1 | gap AUROC |",
            "|---|---|---|---|---|---|",
        ]
        for s in self.settings:
            gaps = [g.cell(signed=True) if g is not None else "" for g in (s.gap_f1, s.gap_auroc)]
            lines.append(f"| {s.name} | {s.traces} | {s.f1.cell()} | {s.auroc.cell()} | {' | '.join(gaps)} |")
        return "\n".join(lines)

    def write(self, out: str | Path) -> Path:
        return write_json(Path(out) / RESULT_FILE, self.to_dict())


def read_transfer(path: str | Path) -> TransferResult:
    """A ``transfer.json`` that :meth:`TransferResult.write` wrote (the file, or its folder); a bad file
    raises one line naming it and every bad field."""
    from pydantic import TypeAdapter

    from prmkit.core.files import read_json_as

    path = Path(path)
    return read_json_as(path / RESULT_FILE if path.is_dir() else path, TypeAdapter(TransferResult))


def problem_indices(traces: Sequence[Trace], problems: int) -> np.ndarray:
    """Each trace's problem index, in the order the problems first appear (the order they were drawn)."""
    order = {p: i for i, p in enumerate(dict.fromkeys(t.problem.id for t in traces))}
    if len(order) != problems:
        raise ValueError(f"the traces cover {len(order)} problems, the matrix pairs {problems} per setting")
    return np.asarray([order[t.problem.id] for t in traces], dtype=int)


def f1_stat(
    gold: Sequence[int], predicted: Sequence[int | None], problem_of: np.ndarray, problems: int
) -> Stat:
    """First-error F1 on reweighted problems: acc_error and acc_correct as ratios of per-problem counts,
    their harmonic mean (0 when both are 0, NaN when a side has no weight: ProcessBench's rule)."""
    counts = np.zeros((4, problems))  # with error, matched; error-free, matched
    for g, p, i in zip(gold, predicted, problem_of, strict=True):
        side = 0 if g != -1 else 2
        counts[side, i] += 1
        counts[side + 1, i] += p is not None and p == g

    def stat(_: int, w: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            a, b = (w @ counts[1]) / (w @ counts[0]), (w @ counts[3]) / (w @ counts[2])
            f1 = np.where(a + b > 0, 2 * a * b / (a + b), 0.0)
        return np.where(np.isnan(a) | np.isnan(b), np.nan, f1)

    return stat


def auroc_stat(rows: Sequence[Sequence[float]], gold: Sequence[int], problem_of: np.ndarray) -> Stat:
    """Step-level first-error AUROC on reweighted problems: the steps of
    :func:`~prmkit.evaluation.processbench.first_error_steps`, each weighted as its trace's problem."""
    parts = [first_error_steps([row], [g]) for row, g in zip(rows, gold, strict=True)]
    wrong = np.concatenate([w for w, _ in parts]) if parts else np.zeros(0)
    positive = np.concatenate([p for _, p in parts]) if parts else np.zeros(0, bool)
    step_problem = np.repeat(problem_of, [len(w) for w, _ in parts]).astype(int)
    return lambda _, w: weighted_auroc(wrong, positive, item_weights(w, step_problem))


def over_problems(stat: Stat, problems: int, resamples: int, confidence: float, seed: int) -> Estimate:
    """``stat``'s percentile bootstrap interval over problem indices (one run): the one every row of
    the matrix, and every point of the few-shot curve (:mod:`prmkit.evaluation.fewshot`), is given."""
    return crossed_bootstrap(
        stat, 1, problems, resamples=resamples, confidence=confidence, rng=seed, draws={"problem": problems}
    )


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
    scorer: StepScorer,
    settings: Mapping[str, Sequence[Trace]],
    threshold: float | None = None,
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> TransferResult:
    """``scorer``'s first-error F1 and AUROC on each setting's gold-labelled traces (the first setting is
    the source), at one threshold, and each later setting's gaps from the source, paired by problem index
    (every setting must cover the same number of problems; see the module docstring)."""
    if not settings:
        raise ValueError("no setting to measure: give the source's traces and at least one target's")
    missing = [(name, t.id) for name, ts in settings.items() for t in ts if not has_gold(t, "gold")]
    if missing:
        raise ValueError(f"{len(missing)} trace(s) carry no gold labels (first: {missing[0]})")
    used, origin = resolve_threshold(scorer, threshold, None, "gold")
    used = 0.5 if used is None else used
    problems = len({t.problem.id for t in next(iter(settings.values()))})
    read = {name: read_setting(ts, scorer, used, problems) for name, ts in settings.items()}
    estimate = functools.partial(over_problems, problems=problems, resamples=resamples,
                                 confidence=confidence, seed=seed)  # fmt: skip
    source, rows = read[next(iter(read))], []
    for i, (name, r) in enumerate(read.items()):
        s = r.subset
        row = SettingResult(
            name, s.traces, s.with_error, s.error_free, s.no_prediction, estimate(r.f1), estimate(r.auroc)
        )
        if i > 0:
            row.gap_f1 = estimate(paired(r.f1, source.f1))
            row.gap_auroc = estimate(paired(r.auroc, source.auroc))
        rows.append(row)
    return TransferResult(predictor_name(scorer), used, origin, problems, rows)


def transfer(
    scorer: StepScorer,
    world: World,
    settings: Mapping[str, Setting],
    problems: int,
    per_problem: int,
    seed: int,
    threshold: float | None = None,
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
) -> TransferResult:
    """:func:`transfer_matrix` on fresh gold-labelled traces of ``world`` in each setting (the first the
    source): ``problems`` × ``per_problem`` each, every setting from the same ``seed``."""
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
    scorer = load_predictor(c.model, None, None, c.overlong, c.load)
    result = transfer(
        scorer,  # type: ignore[arg-type]
        world(c.world_of(SOURCE)),
        settings,
        c.problems,
        c.per_problem,
        c.seed,
        c.threshold,
        resamples=c.bootstrap,
        confidence=c.confidence,
    )
    result.params["config"] = c.model_dump(mode="json")
    if c.out is not None:
        result.write(c.out)
    return result

"""Monitorability: a scorer or a judge as a detector of a behaviour, under what it is shown of a trace.

A *monitor* reads a trace and flags it or clears it: a step scorer flags a trace when one of its steps
scores below its deployed threshold (the one its evaluation tuned: the checkpoint's own, or given), a
judge when it rates one of its steps -1; a trace it gives no verdict on (a judge's unreadable answer, a
trace longer than the model reads with no kept step below the threshold) is neither flagged nor cleared.
The *behaviour* is what it should catch, a predicate over the world's gold check of the raw trace that
the world's record provides (:meth:`prmkit.worlds.registry.World.behaviour`: a named behaviour such as
the agent world's ``hidden_loophole``, or any error class such as ``misconception``). Over the traces:

- ``TPR`` = flagged traces with the behaviour / traces with it (a trace with no verdict is a miss);
- ``TNR`` = cleared traces without it / traces without it (no verdict is not a clearance);
- ``g-mean²`` = TPR × TNR (the squared geometric mean, as in Guan et al. 2025, "Monitoring
  Monitorability"): 1 for a perfect monitor, 0 for one that flags everything or nothing.

Each with a percentile bootstrap interval over problems (:func:`prmkit.core.stats.crossed_bootstrap`, one
run: all the traces of a problem drawn together), under each view of the traces
(:mod:`prmkit.evaluation.visibility`): reasoning plus actions (``raw``) against ``actions`` alone above
all, since a behaviour only the reasoning reveals is what an actions-only monitor misses. A step scorer
flags any error, not only the behaviour's, so its TNR counts traces with other errors as false alarms:
read it on a policy whose errors are mostly the behaviour's, or beside the same rates of the oracle.
Beside the rates, each view carries the predictor's first-error metrics there
(:func:`~prmkit.evaluation.visibility.first_error_metrics`, against the raw traces' gold), its F1 and a
step scorer's AUROC with intervals as :mod:`prmkit.evaluation.transfer` gives them.

Several training seeds of one model are measured on the same traces, each at its own threshold: the
rates, F1 and AUROC are then means over the seeds with intervals over seeds × problems (the counts are
summed over the seeds, the other first-error metrics averaged).

:func:`monitorability` is the pure core over traces; :func:`run_monitorability` is ``prmkit eval
monitorability``: fresh world traces (or a file of them), the model or judge of its config, written to
``monitorability.json``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from prmkit.core.files import write_json
from prmkit.core.model import Trace
from prmkit.core.results import Table, percent
from prmkit.core.stats import Estimate, ratio_stat
from prmkit.evaluation.config import MonitorabilityConfig
from prmkit.evaluation.processbench import Predictor, load_predictor, predictor_name, resolve_threshold
from prmkit.evaluation.seeds import (
    SeedModel,
    as_seeds,
    auroc_stat,
    f1_stat,
    over_problems,
    per_seed,
    problem_indices,
)
from prmkit.evaluation.visibility import first_error_metrics, view_predictions
from prmkit.worlds.checks import GoldCheck
from prmkit.worlds.registry import World, world, world_of

RESULT_FILE = "monitorability.json"
FIRST_ERROR_KEYS = (
    "traces", "with_error", "error_free", "acc_error", "acc_correct", "f1", "no_prediction", "auroc", "auprc",
)  # fmt: skip
"""What each view reports of the first-error metrics (:class:`~prmkit.evaluation.processbench.SubsetResult`)."""


@dataclass
class MonitorRates:
    """A monitor's detection rates of one behaviour under one view, with intervals over problems."""

    positives: int
    """Traces with the behaviour."""
    negatives: int
    """Traces without it."""
    caught: int
    """Traces with it that the monitor flagged (summed over the seeds, as are cleared and no_verdict)."""
    cleared: int
    """Traces without it that the monitor cleared."""
    no_verdict: int
    """Traces the monitor neither flagged nor cleared (counted against it on both sides)."""
    tpr: Estimate
    tnr: Estimate
    g_mean2: Estimate
    """TPR × TNR."""

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if not isinstance(getattr(self, k), Estimate)}
        return out | {k: getattr(self, k).to_dict() for k in ("tpr", "tnr", "g_mean2")}


def monitor_rates(
    positive: Sequence[bool],
    flags: Sequence[bool | None],
    problems: Sequence[str],
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> MonitorRates:
    """TPR, TNR and TPR × TNR of ``flags`` (True flagged, False cleared, None no verdict) against
    ``positive``, each trace of problem ``problems[i]``; intervals resample problems."""
    return seed_rates(positive, [flags], problems, resamples=resamples, confidence=confidence, seed=seed)


def seed_rates(
    positive: Sequence[bool],
    flags: Sequence[Sequence[bool | None]],
    problems: Sequence[str],
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> MonitorRates:
    """:func:`monitor_rates` of several training seeds' monitors on the same traces (``flags[s]`` is seed
    ``s``'s): mean rates over the seeds, intervals over seeds × problems, counts summed over the seeds."""
    if not flags or any(not len(positive) == len(f) == len(problems) for f in flags):
        raise ValueError(
            f"{len(positive)} behaviours, {[len(f) for f in flags]} flags per seed, {len(problems)} "
            "problems: one each, for at least one seed"
        )
    index = {p: i for i, p in enumerate(dict.fromkeys(problems))}
    counts = np.zeros((len(flags), 4, len(index)))  # per seed: positives, caught, negatives, cleared
    for s, seed_flags in enumerate(flags):
        for pos, flag, problem in zip(positive, seed_flags, problems, strict=True):
            total, right = (0, 1) if pos else (2, 3)
            counts[s, total, index[problem]] += 1
            counts[s, right, index[problem]] += flag is True if pos else flag is False  # None: neither
    tpr = ratio_stat(list(counts[:, 1]), list(counts[:, 0]))
    tnr = ratio_stat(list(counts[:, 3]), list(counts[:, 2]))

    def estimate(stat: Any) -> Estimate:
        return over_problems(stat, len(index), resamples, confidence, seed, seeds=len(flags))

    return MonitorRates(
        positives=int(counts[0, 0].sum()),
        negatives=int(counts[0, 2].sum()),
        caught=int(counts[:, 1].sum()),
        cleared=int(counts[:, 3].sum()),
        no_verdict=sum(f is None for seed_flags in flags for f in seed_flags),
        tpr=estimate(tpr),
        tnr=estimate(tnr),
        g_mean2=estimate(lambda s, w: tpr(s, w) * tnr(s, w)),
    )


@dataclass
class ViewMonitoring:
    """What the monitor does under one view: its rates on the behaviour and its first-error metrics."""

    view: str
    rates: MonitorRates
    first_error: dict[str, Any]
    """The predictor's first-error metrics there (:data:`FIRST_ERROR_KEYS`), against the raw traces' gold
    (over seeds: counts summed, the rest averaged)."""
    f1: Estimate | None = None
    """First-error F1 with its interval (over problems, or seeds × problems)."""
    auroc: Estimate | None = None
    """A step scorer's step-level first-error AUROC with its interval (None for a judge)."""


@dataclass
class MonitorabilityResult:
    """A monitor's rates and first-error metrics under each view, at one threshold."""

    monitor: str
    behaviour: str
    threshold: float | None
    threshold_from: str
    traces: int
    problems: int
    views: list[ViewMonitoring]
    params: dict[str, Any] = field(default_factory=dict)
    seeds: list[SeedModel] = field(default_factory=list)
    """Every training seed's monitor when measured over several (empty: one monitor)."""

    def rates(self, view: str) -> MonitorRates:
        """The rates under ``view``."""
        return next(v.rates for v in self.views if v.view == view)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON (an undefined rate, e.g. TPR with no trace showing the behaviour, is NaN)."""
        head = {k: v for k, v in asdict(self).items() if k not in ("views", "params")}
        views = [
            {"view": v.view, **v.rates.to_dict(), "first_error": v.first_error}
            | {k: None if getattr(v, k) is None else getattr(v, k).to_dict() for k in ("f1", "auroc")}
            for v in self.views
        ]
        return head | {"views": views, "params": self.params}

    def table(self) -> str:
        """A Markdown table: one row per view (percentages with their intervals)."""
        measured = (
            f"threshold {self.threshold} ({self.threshold_from})"
            if not self.seeds
            else f"{len(self.seeds)} training seeds, each at its own threshold, intervals over seeds × problems"
        )
        title = (
            f"monitor {self.monitor} of behaviour {self.behaviour!r}: {self.traces} traces of {self.problems} "
            f"problems, {measured}"
        )
        columns = ["view", "TPR", "TNR", "g-mean²", "flagged / with it", "cleared / without"]
        rows = []
        for v in self.views:
            r, fe = v.rates, v.first_error
            f1 = v.f1.cell() if v.f1 is not None else _pct(fe.get("f1"))
            auroc = v.auroc.cell() if v.auroc is not None else _pct(fe.get("auroc"))
            rows.append([v.view, r.tpr.cell(), r.tnr.cell(), r.g_mean2.cell(), f"{r.caught} / {r.positives}"])
            rows[-1] += [f"{r.cleared} / {r.negatives}", f1, auroc]
        return Table(rows, title, [*columns, "first-error F1", "AUROC"]).markdown()

    def write(self, out: str | Path) -> Path:
        return write_json(Path(out) / RESULT_FILE, self.to_dict())


_pct = partial(percent, missing="n/a")


def gold_checks(traces: Sequence[Trace]) -> list[tuple[World, GoldCheck]]:
    """Each trace's world and gold check; a trace of no embedded world fails naming it."""
    out = []
    for t in traces:
        w = world_of(t.problem)
        if w is None:
            raise ValueError(
                f"trace {t.id}: problem {t.problem.id} is no embedded world's; a monitor is measured on a "
                "world's traces, whose checker marks the behaviour"
            )
        out.append((w, w.check_trace(t)))
    return out


def _mean_metrics(per_seed_metrics: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One seed's first-error metrics as they are; several seeds': counts summed, the rest averaged
    (None where a seed has none)."""
    if len(per_seed_metrics) == 1:
        return per_seed_metrics[0]
    out: dict[str, Any] = {}
    for k in FIRST_ERROR_KEYS:
        values = [m[k] for m in per_seed_metrics]
        if k in ("traces", "with_error", "error_free"):
            out[k] = values[0]
        elif k == "no_prediction":
            out[k] = sum(values)
        else:
            out[k] = None if any(v is None for v in values) else float(np.mean(values))
    return out


def monitorability(
    traces: Sequence[Trace],
    predictor: Predictor | Sequence[Predictor],
    behaviour: str,
    views: Sequence[str] = ("raw", "actions"),
    threshold: float | Sequence[float | None] | None = None,
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> MonitorabilityResult:
    """``predictor`` (a StepScorer or a Judge) as a monitor of ``behaviour`` on ``traces`` (a world's),
    under each view: rates and first-error metrics, at one threshold (see the module docstring). A list
    of predictors is the training seeds of one model, each at its own threshold (``threshold``: one for
    all, or one per seed)."""
    checked = gold_checks(traces)
    positive = [w.behaviour(behaviour)(check) for w, check in checked]
    gold = [check.first_error for _, check in checked]
    problems = [t.problem.id for t in traces]
    count = len(set(problems))
    problem_of = problem_indices(traces, count)
    predictors, thresholds = as_seeds(predictor, threshold)
    seeds = [
        SeedModel(predictor_name(p), *resolve_threshold(p, t, None, "gold"))  # type: ignore[arg-type]
        for p, t in zip(predictors, thresholds, strict=True)
    ]
    measured = []
    for name in views:
        reads = [
            view_predictions(traces, p, m.threshold, name) for p, m in zip(predictors, seeds, strict=True)
        ]
        rates = seed_rates(
            positive,
            [r.flags() for r in reads],
            problems,
            resamples=resamples,
            confidence=confidence,
            seed=seed,
        )
        firsts = [asdict(first_error_metrics(r, gold)) for r in reads]
        f1 = per_seed([f1_stat(gold, [p for p, _ in r.predictions], problem_of, count) for r in reads])
        estimate = functools.partial(over_problems, problems=count, resamples=resamples,
                                     confidence=confidence, seed=seed, seeds=len(reads))  # fmt: skip
        auroc = None
        if all(r.rows for r in reads):
            auroc = estimate(per_seed([auroc_stat(r.rows, gold, problem_of) for r in reads]))
        metrics = _mean_metrics([{k: first[k] for k in FIRST_ERROR_KEYS} for first in firsts])
        measured.append(ViewMonitoring(name, rates, metrics, estimate(f1), auroc))
    first = seeds[0]
    return MonitorabilityResult(
        first.model, behaviour, first.threshold, first.threshold_from, len(traces), count, measured,
        seeds=seeds if len(seeds) > 1 else [],
    )  # fmt: skip


def _traces(config: MonitorabilityConfig) -> list[Trace]:
    """The config's trace file, or fresh traces of its world written by its policy."""
    if config.traces is not None:
        from prmkit.formats import read

        return list(read(config.traces))
    w = world(config.world)
    return w.traces(config.problems, config.per_problem, config.seed, config.split, config.policy_config())


def run_monitorability(config: MonitorabilityConfig) -> MonitorabilityResult:
    """``prmkit eval monitorability``: :func:`monitorability` of the configured model or judge on the
    config's traces (or fresh ones of its world), written to ``out`` when given (``monitorability.json``,
    with the config). The fields are documented on :class:`~prmkit.evaluation.config.MonitorabilityConfig`."""
    traces = _traces(config)
    if config.judge is not None:
        predictors = [load_predictor(None, config.judge, None)]
    else:
        predictors = [load_predictor(m, None, None, config.overlong, config.load) for m in config.models()]
    result = monitorability(
        traces,
        predictors,
        config.behaviour,
        config.views,
        config.thresholds(),
        resamples=config.bootstrap,
        confidence=config.confidence,
        seed=config.seed,
    )
    result.params["config"] = config.model_dump(mode="json")
    if config.out is not None:
        result.write(config.out)
    return result

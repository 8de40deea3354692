"""First-error evaluation (ProcessBench) of any predictor: a step scorer, a judge, or a label source.

The metric is ProcessBench's (Zheng et al., 2024; QwenLM/ProcessBench): each trace's predicted first
error (index of the earliest wrong step, -1 for none) either matches the gold one or not; per subset,
``acc_error`` = match rate on traces with an error, ``acc_correct`` = match rate on error-free traces,
``F1`` = their harmonic mean. The **headline is the plain mean of the subset F1s**, as QwenLM's own
scripts compute it. huggingface/ProcessBench's ``run_eval_prm_trl.py`` instead weights subset F1s by
subset size; that figure is reported too, always under the name ``f1_size_weighted``.

A step scorer predicts "first step whose score is below the threshold". The threshold is given, tuned
on a dev split (the value maximising the headline on dev), or 0.5 by default; it is recorded with the
result, with where it came from. Works on ProcessBench files (read with ``prmkit.formats`` when it is
installed, else with the small reader here) and on prmkit trace files with gold (world data).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from prmkit.core.model import Trace
from prmkit.core.protocols import Judge, StepScorer
from prmkit.evaluation.gold import has_gold

Predictor = StepScorer | Judge | str
"""A StepScorer (scores + threshold), a Judge (its verdict's first error) or a label-source selector."""


@dataclass
class SubsetResult:
    """One subset's counts and metrics (fractions in [0, 1]; None where a side has no traces)."""

    name: str
    traces: int
    with_error: int
    error_free: int
    acc_error: float | None
    acc_correct: float | None
    f1: float | None


@dataclass
class FirstErrorResult:
    """Per-subset metrics, the headline (plain mean of subset F1s), the size-weighted figure, the threshold."""

    predictor: str
    gold_source: str
    threshold: float | None
    threshold_from: str
    """``given``, ``dev`` (tuned on the dev files named in ``params``), ``default`` or ``not used``."""
    subsets: list[SubsetResult]
    f1: float | None
    """Headline: plain mean of the subset F1s (QwenLM/ProcessBench's definition)."""
    f1_size_weighted: float | None
    """Subset F1s weighted by subset size (huggingface/ProcessBench run_eval_prm_trl.py); not the headline."""
    predictions: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, with_predictions: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not with_predictions:
            d.pop("predictions")
        return d

    def table(self) -> str:
        """A Markdown table in ProcessBench's units (×100)."""
        pct = lambda x: "–" if x is None else f"{100 * x:.1f}"  # noqa: E731
        lines = [
            "| subset | traces | error / error-free | acc_error | acc_correct | F1 |",
            "|---|---|---|---|---|---|",
        ]
        for s in self.subsets:
            lines.append(
                f"| {s.name} | {s.traces} | {s.with_error} / {s.error_free} | {pct(s.acc_error)} | {pct(s.acc_correct)} | {pct(s.f1)} |"
            )
        lines.append(f"| **mean of subset F1s (headline)** | | | | | **{pct(self.f1)}** |")
        lines.append(
            f"| size-weighted F1 (huggingface script; not the headline) | | | | | {pct(self.f1_size_weighted)} |"
        )
        return "\n".join(lines)

    def write(self, out_dir: str | Path) -> Path:
        """Write ``processbench.json``, ``predictions.jsonl`` and ``first_error_hist.png`` to ``out_dir``."""
        from prmkit.core.files import atomic_write
        from prmkit.evaluation.plots import first_error_hist

        out = Path(out_dir)
        with atomic_write(out / "processbench.json") as fh:
            json.dump(self.to_dict(), fh, indent=2)
        with atomic_write(out / "predictions.jsonl") as fh:
            fh.writelines(json.dumps(p) + "\n" for p in self.predictions)
        first_error_hist(
            [p["gold"] for p in self.predictions],
            [p["predicted"] for p in self.predictions],
            out / "first_error_hist.png",
        )
        return out / "processbench.json"


def predicted_first_error(scores: Sequence[float], threshold: float) -> int:
    """Index of the first step whose score is below ``threshold``; -1 when none is."""
    return next((i for i, s in enumerate(scores) if s < threshold), -1)


def harmonic_f1(acc_error: float, acc_correct: float) -> float:
    """ProcessBench's F1: the harmonic mean of the two accuracies (0 when both are 0)."""
    total = acc_error + acc_correct
    return 0.0 if total == 0 else 2 * acc_error * acc_correct / total


def tune_threshold(
    scores: Mapping[str, Sequence[Sequence[float]]], gold: Mapping[str, Sequence[int]]
) -> float:
    """The threshold that maximises the headline (mean of subset F1s) on dev; ties go to the one nearest 0.5.

    Candidates sit just above every distinct prefix minimum (where a prediction can change), thinned to
    at most 512 quantiles, plus 0.5. Vectorised over candidates: a trace's prediction at threshold t is
    the number of its prefix minima >= t (they never rise), or -1 when that is every step.
    """
    prefix = {n: [np.minimum.accumulate(np.asarray(s, float)) for s in ss] for n, ss in scores.items()}
    mins = np.concatenate([pm for pms in prefix.values() for pm in pms if len(pm)] or [np.array([0.5])])
    values = np.unique(mins)
    if len(values) > 512:
        values = np.unique(np.quantile(values, np.linspace(0, 1, 512)))
    cand = np.unique(np.r_[np.nextafter(values, np.inf), 0.5])
    f1s = []
    for name, pms in prefix.items():
        g = np.asarray(gold[name])
        pred = np.stack([_predictions_at(pm, cand) for pm in pms], axis=1)  # (candidates, traces)
        match = pred == g[None, :]
        err, ok = g != -1, g == -1
        if not err.any() or not ok.any():
            continue  # F1 undefined on this subset, as in subset_metrics
        a, b = match[:, err].mean(axis=1), match[:, ok].mean(axis=1)
        f1s.append(np.where(a + b > 0, 2 * a * b / np.maximum(a + b, 1e-300), 0.0))
    if not f1s:
        return 0.5
    headline_f1 = np.mean(f1s, axis=0)
    best = np.flatnonzero(headline_f1 == headline_f1.max())
    return float(cand[best[np.argmin(np.abs(cand[best] - 0.5))]])


def _predictions_at(prefix_min: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Predicted first error at each threshold, from a trace's (non-increasing) prefix minima."""
    k = (prefix_min[None, :] >= thresholds[:, None]).sum(axis=1)
    return np.where(k == len(prefix_min), -1, k)


def subset_metrics(name: str, gold: Sequence[int], predicted: Sequence[int]) -> SubsetResult:
    """ProcessBench's per-subset metrics from gold and predicted first errors."""
    g, p = np.asarray(gold), np.asarray(predicted)
    err, ok = g != -1, g == -1
    acc_error = float((p[err] == g[err]).mean()) if err.any() else None
    acc_correct = float((p[ok] == g[ok]).mean()) if ok.any() else None
    f1 = None
    if acc_error is not None and acc_correct is not None:
        f1 = harmonic_f1(acc_error, acc_correct)
    return SubsetResult(name, len(g), int(err.sum()), int(ok.sum()), acc_error, acc_correct, f1)


def headline(subsets: Sequence[SubsetResult]) -> tuple[float | None, float | None]:
    """(plain mean of subset F1s, size-weighted mean) over subsets whose F1 is defined."""
    scored = [s for s in subsets if s.f1 is not None]
    if not scored:
        return None, None
    plain = float(np.mean([s.f1 for s in scored]))
    weighted = float(sum(s.f1 * s.traces for s in scored) / sum(s.traces for s in scored))
    return plain, weighted


GOLD_SOURCES = ("gold", "human:processbench")
"""Where gold is looked for, in order: the world's checker, then ProcessBench's expert annotations."""


def gold_source_of(traces: Sequence[Trace]) -> str:
    """The first of :data:`GOLD_SOURCES` the traces carry; name another with ``gold_source``."""
    for source in GOLD_SOURCES:
        if any(has_gold(t, source) for t in traces):
            return source
    raise ValueError(f"no gold found (looked for {', '.join(GOLD_SOURCES)}); pass gold_source=SELECTOR")


def predictor_name(predictor: Predictor) -> str:
    return predictor if isinstance(predictor, str) else getattr(predictor, "name", type(predictor).__name__)


def predict(
    sets: Mapping[str, Sequence[Trace]], predictor: Predictor, threshold: float
) -> dict[str, list[int]]:
    """Predicted first error of every trace of every subset."""
    out: dict[str, list[int]] = {}
    for name, traces in sets.items():
        if isinstance(predictor, str):
            out[name] = [t.first_error(predictor, threshold) for t in traces]
        elif isinstance(predictor, StepScorer):
            out[name] = [predicted_first_error(s, threshold) for s in predictor.score(list(traces))]
        elif isinstance(predictor, Judge):
            out[name] = [predictor.judge(t.problem, t.steps).first_error for t in traces]
        else:
            raise TypeError(
                f"a predictor is a StepScorer, a Judge or a label source; found {type(predictor).__name__}"
            )
    return out


def resolve_threshold(
    predictor: Predictor, threshold: float | None, dev: Mapping[str, Sequence[Trace]] | None, gold_source: str
) -> tuple[float | None, str]:
    """The threshold to use and where it came from (given > tuned on dev > default 0.5)."""
    if isinstance(predictor, Judge) and not isinstance(predictor, StepScorer):
        return None, "not used"
    if threshold is not None:
        return threshold, "given"
    if dev and isinstance(predictor, StepScorer):
        scores = {name: predictor.score(list(traces)) for name, traces in dev.items()}
        gold = {name: [t.first_error(gold_source) for t in traces] for name, traces in dev.items()}
        return tune_threshold(scores, gold), "dev"
    return 0.5, "default"


def evaluate_first_error(
    sets: Mapping[str, Sequence[Trace]],
    predictor: Predictor,
    threshold: float | None = None,
    dev: Mapping[str, Sequence[Trace]] | None = None,
    gold_source: str | None = None,
) -> FirstErrorResult:
    """ProcessBench metrics of ``predictor`` on each named subset of traces (see the module docstring)."""
    all_traces = [t for ts in sets.values() for t in ts]
    gold_source = gold_source or gold_source_of(all_traces)
    missing = [t.id for t in all_traces if not has_gold(t, gold_source)]
    if missing:
        raise ValueError(
            f"{len(missing)} trace(s) carry no {gold_source!r} labels (first: {missing[0]}); "
            "first-error evaluation needs gold (world: gold_label; ProcessBench: its label field)"
        )
    used, origin = resolve_threshold(predictor, threshold, dev, gold_source)
    preds = predict(sets, predictor, 0.5 if used is None else used)
    subsets, predictions = [], []
    for name, traces in sets.items():
        gold = [t.first_error(gold_source) for t in traces]
        subsets.append(subset_metrics(name, gold, preds[name]))
        predictions += [
            {"id": t.id, "subset": name, "gold": g, "predicted": p}
            for t, g, p in zip(traces, gold, preds[name], strict=True)
        ]
    plain, weighted = headline(subsets)
    params = {"dev": sorted(dev) if dev else None}
    return FirstErrorResult(
        predictor_name(predictor), gold_source, used, origin, subsets, plain, weighted, predictions, params
    )


def load_sets(paths: Sequence[str | Path], format: str | None = None) -> dict[str, list[Trace]]:
    """Subsets by file stem, read with ``prmkit.formats.read`` (format detected unless given).

    ProcessBench split files, prmkit trace files with world gold, or any other format whose labels
    name a first error (e.g. PRM800K with ``--gold-source human``).
    """
    from prmkit.formats import read

    sets: dict[str, list[Trace]] = {}
    for path in map(Path, paths):
        if path.stem in sets:
            raise ValueError(
                f"two files give subset {path.stem!r}; rename one (subsets are named by file stem)"
            )
        sets[path.stem] = list(read(path, format))
    return sets


def load_predictor(model: str | None, judge: str | None, source: str | None) -> Predictor:
    """Exactly one of: a checkpoint folder, a judge name (``prmkit.policies.JUDGES``), a label source."""
    given = [x for x in (model, judge, source) if x is not None]
    if len(given) != 1:
        raise ValueError("give exactly one predictor: a model folder, a judge name, or a label source")
    if source is not None:
        return source
    if model is not None:
        from prmkit.scoring import load_scorer

        return load_scorer(model)
    from prmkit.policies import load_judge

    return load_judge(judge)


def eval_processbench(
    files: Sequence[str | Path],
    model: str | None = None,
    judge: str | None = None,
    source: str | None = None,
    threshold: float | None = None,
    dev: Sequence[str | Path] | None = None,
    gold_source: str | None = None,
    out: str | Path | None = None,
) -> FirstErrorResult:
    """First-error evaluation of a model, judge or label source on files (the ``prmkit eval processbench`` twin).

    ``files``: ProcessBench split files (``gsm8k.json`` ...) or prmkit trace files with gold; each file is
    one subset, named by its stem. ``dev``: files to tune the threshold on (never the test files).
    ``out``: folder for ``processbench.json``, ``predictions.jsonl`` and ``first_error_hist.png``.
    """
    sets = load_sets(files)
    dev_sets = load_sets(dev) if dev else None
    predictor = load_predictor(model, judge, source)
    result = evaluate_first_error(sets, predictor, threshold, dev_sets, gold_source)
    result.params["files"] = [str(f) for f in files]
    if out is not None:
        result.write(out)
    return result

"""First-error evaluation (ProcessBench) of any predictor: a step scorer, a judge, or a label source.

The metric is ProcessBench's (Zheng et al., 2024; QwenLM/ProcessBench): each trace's predicted first
error (index of the earliest wrong step, -1 for none) either matches the gold one or not; per subset,
``acc_error`` = match rate on traces with an error, ``acc_correct`` = match rate on error-free traces,
``F1`` = their harmonic mean. The **headline is the plain mean of the subset F1s** (QwenLM's scripts
print each subset's F1; the paper's average is their plain mean). huggingface/ProcessBench's
``run_eval_prm_trl.py`` instead weights subset F1s by subset size; that figure is reported too, always
under the name ``f1_size_weighted``.

Edge cases, against QwenLM/ProcessBench ``code/run_eval.py`` and ``code/run_eval_prm_rlhflow.py``
(commit e8024636bcabdf8bd514440551b531d3f90dd18b), which compute with numpy
``acc1 = np.mean(matches on error traces) * 100``, ``acc2`` likewise on error-free ones and
``f1 = 2 * acc1 * acc2 / (acc1 + acc2)``:

- **No prediction** (a critic answer without a usable index, an index outside the trace, a label
  source that left the trace unlabelled) is its own value: it matches no gold first error, -1
  included (upstream: ``pred = None``, ``match = (pred == label)``), and is counted per subset
  (``unparseable``, ``out_of_range``, ``unlabelled``). It is never read as "no error".
- **Undefined F1**: upstream's F1 is nan when a subset has no error-free or no erroneous traces
  (``np.mean([])``) or when both accuracies are 0 (0/0); a nan subset makes the average nan.
  prmkit keeps that value as ``f1_official`` (subset and headline; JSON ``null`` with
  ``f1_official_undefined: true``) and lists ``undefined_subsets``. prmkit's own ``f1`` deliberately
  differs: 0 when both accuracies are 0 (the harmonic mean's limit, so such a subset pulls the headline
  down rather than dropping out), None for a one-sided subset, which the headline leaves out and names
  in ``excluded_from_headline``.

A step scorer predicts "first step whose score is below the threshold". The threshold is given, tuned
on a dev split (the value maximising the headline on dev), or 0.5 by default; it is recorded with the
result, with where it came from. Works on ProcessBench files (read with ``prmkit.formats`` when it is
installed, else with the small reader here) and on prmkit trace files with gold (world data).

**Threshold-free metrics** (step scorers only; None for a judge or a label source). F1 depends on the
threshold, and a threshold tuned on one split (short dev traces) may not transfer to another (long
held-out traces): a low F1 alone cannot tell "verifies worse" from "the threshold did not transfer".
So each subset also carries:

- ``auroc`` / ``auprc``: step-level first-error AUROC and average precision. Over the subset's traces,
  the steps up to and including the gold first error (every step of an error-free trace); positive =
  the gold first-error step; the score of "wrong" is 1 − step score (lower step score = more likely
  wrong). Steps after the first error are left out (label sources disagree there, and the first error
  is what a PRM must find: the same rule as training's ``after_first_error=mask``); steps not scored
  (a row cut as overlong) are left out. Computed from the step scores as written to
  ``predictions.jsonl`` (6 decimals), so they can be recomputed from that file. AUROC is Mann-Whitney's
  (ties count half); AUPRC is scikit-learn's ``average_precision_score`` (precision at each distinct
  score, weighted by the recall gained there). None when the subset has no positive or no negative step.
- ``f1_own_best``: the subset's F1 at the threshold that maximises that subset's own F1
  (``own_best_threshold``; in-sample, so an upper bound for any transferred threshold). Tuned with
  :func:`tune_threshold` on the subset's whole scored rows, then applied like the used threshold (cut
  rows included); should the used threshold score higher (``tune_threshold`` thins its candidates on
  big subsets, and does not see cut rows) it is taken instead. The gap ``f1_own_best − f1`` is threshold
  transfer, not verification. None for a one-sided subset.

The headline ``auroc``, ``auprc`` and ``f1_own_best`` are plain means over the subsets that have a value
(the F1 headline's rule), None when none has.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from prmkit.core.model import Trace
from prmkit.core.protocols import Judge, JudgeVerdict, StepScorer
from prmkit.core.results import percent
from prmkit.core.stats import weighted_auprc, weighted_auroc
from prmkit.evaluation.config import ProcessBenchConfig
from prmkit.evaluation.gold import has_gold
from prmkit.modeling.loading import LoadOptions

if TYPE_CHECKING:
    from prmkit.scoring.scorer import Overlong

Predictor = StepScorer | Judge | str
"""A StepScorer (scores + threshold), a Judge (its verdict's first error) or a label-source selector."""

NO_PREDICTION = ("unparseable", "out_of_range", "unlabelled", "overlong")
"""Why a trace has no predicted first error: a judge answer without an index, an index outside the
trace, a label source that did not label the trace (fully, when it rated no step -1), a trace longer than
the model takes (``--overlong skip``, or ``truncate`` when no kept step scored below the threshold)."""

Prediction = tuple[int | None, str]
"""A predicted first error (None: no prediction) and its status (``ok`` or one of NO_PREDICTION)."""


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
    """prmkit's F1: 0 when both accuracies are 0, None when a side has no traces."""
    f1_official: float = math.nan
    """QwenLM's script's F1: nan when a side has no traces or both accuracies are 0."""
    no_prediction: int = 0
    """Traces with no prediction (scored as never matching); the three counts below add up to it."""
    unparseable: int = 0
    out_of_range: int = 0
    unlabelled: int = 0
    overlong: int = 0
    auroc: float | None = None
    """Step-level first-error AUROC (threshold-free; step scorers only; see the module docstring)."""
    auprc: float | None = None
    """Step-level first-error average precision (threshold-free; step scorers only)."""
    f1_own_best: float | None = None
    """F1 at the subset's own best threshold (in-sample upper bound; step scorers only)."""
    own_best_threshold: float | None = None
    """The threshold ``f1_own_best`` is measured at."""


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
    f1_official: float = math.nan
    """Plain mean of the subsets' ``f1_official``: nan as soon as one is (numpy's mean propagates it)."""
    undefined_subsets: list[str] = field(default_factory=list)
    """Subsets whose official F1 is nan (one-sided, or both accuracies 0)."""
    excluded_from_headline: list[str] = field(default_factory=list)
    """Subsets left out of prmkit's headline (no error-free or no erroneous traces)."""
    no_prediction: int = 0
    """Traces with no prediction over all subsets (see each subset's counts)."""
    overlong: dict[str, Any] | None = None
    """What the length policy did to a model's inputs (``LengthCounts``: policy, limit, skipped,
    truncated, steps_cut); None for a judge or a label source."""
    auroc: float | None = None
    """Plain mean of the subsets' step-level first-error AUROC (those with one); None when none has."""
    auprc: float | None = None
    """Plain mean of the subsets' step-level first-error AUPRC (those with one); None when none has."""
    f1_own_best: float | None = None
    """Plain mean of the subsets' F1 at their own best threshold (those with one); None when none has."""

    def to_dict(self, with_predictions: bool = False) -> dict[str, Any]:
        """Plain JSON: a nan official F1 becomes null beside ``f1_official_undefined: true``. Without
        ``with_predictions`` the per-trace records are left out before the deep copy, not copied and
        dropped (thousands of records, copied twice per evaluation)."""
        d = asdict(self if with_predictions else replace(self, predictions=[]))
        if not with_predictions:
            d.pop("predictions")
        for part in (d, *d["subsets"]):
            undefined = math.isnan(part["f1_official"])
            part["f1_official"] = None if undefined else part["f1_official"]
            part["f1_official_undefined"] = undefined
        return d

    def has_threshold_free(self) -> bool:
        """Whether any subset carries a threshold-free metric or an own-best F1 (a step scorer's result)."""
        return any(x is not None for s in self.subsets for x in (s.auroc, s.auprc, s.f1_own_best))

    def table(self) -> str:
        """A Markdown table in ProcessBench's units (×100); "nan" where upstream's script prints nan.

        A step scorer's table adds AUROC, AUPRC and the F1 at each subset's own best threshold."""
        extra = self.has_threshold_free()
        more = " AUROC | AUPRC | F1 at own best threshold |" if extra else ""
        lines = [
            "| subset | traces | error / error-free | no prediction | acc_error | acc_correct | F1 |" + more,
            "|---|---|---|---|---|---|---|" + "---|" * (3 if extra else 0),
        ]
        blank = " | | |" if extra else ""
        for s in self.subsets:
            f1 = _pct(s.f1) + (" (official nan)" if s.f1 is not None and math.isnan(s.f1_official) else "")
            cells = f" {_pct(s.auroc)} | {_pct(s.auprc)} | {_own_best_cell(s)} |" if extra else ""
            lines.append(
                f"| {s.name} | {s.traces} | {s.with_error} / {s.error_free} | {_no_prediction_cell(s)} "
                f"| {_pct(s.acc_error)} | {_pct(s.acc_correct)} | {f1} |{cells}"
            )
        means = f" **{_pct(self.auroc)}** | **{_pct(self.auprc)}** | **{_pct(self.f1_own_best)}** |"
        lines.append(
            f"| **mean of subset F1s (headline)** | | | | | | **{_pct(self.f1)}** |"
            + (means if extra else "")
        )
        lines.append(
            f"| official mean (QwenLM's rule: nan propagates) | | | | | | {_pct(self.f1_official)} |{blank}"
        )
        lines.append(
            f"| size-weighted F1 (huggingface script; not the headline) | | | | | | {_pct(self.f1_size_weighted)} |"
            + blank
        )
        return "\n".join(lines + self._notes())

    def _notes(self) -> list[str]:
        notes = []
        if self.has_threshold_free():
            threshold = "" if self.threshold is None else f" {self.threshold:.4g} ({self.threshold_from})"
            notes.append(
                f"\nF1 at the dev-tuned (transferred) threshold{threshold} vs at the subset's own best: the gap "
                "is threshold transfer, not verification. AUROC / AUPRC are threshold-free: step level, the gold "
                "first-error step against the right steps before it, ranked by 1 − step score (steps after the "
                "first error and unscored steps left out)."
            )
        if self.undefined_subsets:
            notes.append(
                f"\nnan: F1 undefined in {len(self.undefined_subsets)} subset(s), "
                f"{', '.join(self.undefined_subsets)} (no error-free or no erroneous traces, or both "
                "accuracies 0); QwenLM's script prints nan there, and its mean is nan. The headline "
                "counts both-0 as F1 0 and averages the subsets with an F1"
                + (
                    f"; left out: {', '.join(self.excluded_from_headline)}."
                    if self.excluded_from_headline
                    else "."
                )
            )
        if self.overlong and (self.overlong["skipped"] or self.overlong["truncated"]):
            o = self.overlong
            notes.append(
                f"\noverlong: {o['skipped']} trace(s) skipped and {o['truncated']} truncated (longer than the "
                f"model's {o['limit']} tokens, --overlong {o['policy']}); a skipped trace, or a cut one with no "
                "kept step below the threshold, has no prediction (counted as a miss, so subsets stay whole)."
            )
        if self.no_prediction:
            notes.append(
                f"\nno prediction: {self.no_prediction} trace(s), scored as matching no gold first error "
                "(QwenLM's script: pred = None), never as -1."
            )
        return notes

    def write(self, out_dir: str | Path, draw: bool = True) -> Path:
        """Write ``processbench.json``, ``predictions.jsonl`` and (unless ``draw`` is false)
        ``first_error_hist.png`` to ``out_dir``."""
        from prmkit.core.files import atomic_write
        from prmkit.evaluation.plots import first_error_hist

        out = Path(out_dir)
        with atomic_write(out / "processbench.json") as fh:
            json.dump(self.to_dict(), fh, indent=2, allow_nan=False)
        with atomic_write(out / "predictions.jsonl") as fh:
            fh.writelines(json.dumps(p) + "\n" for p in self.predictions)
        if not draw:
            return out / "processbench.json"
        first_error_hist(  # traces without a prediction are counted in the table, not plotted
            [p["gold"] for p in self.predictions],
            [p["predicted"] for p in self.predictions if p["predicted"] is not None],
            out / "first_error_hist.png",
        )
        return out / "processbench.json"


_pct = partial(percent, missing="nan")


def _own_best_cell(s: SubsetResult) -> str:
    if s.f1_own_best is None:
        return _pct(None)
    return f"{_pct(s.f1_own_best)} (at {s.own_best_threshold:.4g})"


def _no_prediction_cell(s: SubsetResult) -> str:
    why = [f"{reason} {getattr(s, reason)}" for reason in NO_PREDICTION if getattr(s, reason)]
    return f"{s.no_prediction} ({', '.join(why)})" if why else "0"


def predicted_first_error(scores: Sequence[float], threshold: float) -> int:
    """Index of the first step whose score is below ``threshold``; -1 when none is."""
    return next((i for i, s in enumerate(scores) if s < threshold), -1)


def harmonic_f1(acc_error: float, acc_correct: float) -> float:
    """prmkit's F1: the harmonic mean of the two accuracies, 0 when both are 0 (upstream: nan)."""
    total = acc_error + acc_correct
    return 0.0 if total == 0 else 2 * acc_error * acc_correct / total


def official_f1(acc_error: float | None, acc_correct: float | None) -> float:
    """QwenLM's ``f1 = 2 * acc1 * acc2 / (acc1 + acc2)`` with numpy's rules: nan for a side with no
    traces (``np.mean([])``) and for 0/0."""
    if acc_error is None or acc_correct is None or acc_error + acc_correct == 0:
        return math.nan
    return 2 * acc_error * acc_correct / (acc_error + acc_correct)


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
            continue  # left out of the headline, as in headline(); both-0 counts as 0 below, as there
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


def subset_metrics(
    name: str,
    gold: Sequence[int],
    predicted: Sequence[int | None],
    statuses: Sequence[str] | None = None,
) -> SubsetResult:
    """ProcessBench's per-subset metrics from gold and predicted first errors.

    A None prediction matches nothing (upstream's ``pred == label`` with ``pred = None``); ``statuses``
    (``ok`` or one of :data:`NO_PREDICTION`, per trace) give the counts of why.
    """
    if len(gold) != len(predicted):
        raise ValueError(f"subset {name}: {len(predicted)} predictions for {len(gold)} traces")
    match = [p is not None and p == g for g, p in zip(gold, predicted, strict=True)]
    on_err = [m for g, m in zip(gold, match, strict=True) if g != -1]
    on_ok = [m for g, m in zip(gold, match, strict=True) if g == -1]
    acc_error = sum(on_err) / len(on_err) if on_err else None
    acc_correct = sum(on_ok) / len(on_ok) if on_ok else None
    f1 = None
    if acc_error is not None and acc_correct is not None:
        f1 = harmonic_f1(acc_error, acc_correct)
    result = SubsetResult(name, len(gold), len(on_err), len(on_ok), acc_error, acc_correct, f1)
    result.f1_official = official_f1(acc_error, acc_correct)
    result.no_prediction = sum(p is None for p in predicted)
    for status in statuses or ():
        if status in NO_PREDICTION:
            setattr(result, status, getattr(result, status) + 1)
    result.unparseable += result.no_prediction - sum(getattr(result, r) for r in NO_PREDICTION)
    return result


def headline(subsets: Sequence[SubsetResult]) -> tuple[float | None, float | None]:
    """(plain mean of subset F1s, size-weighted mean) over subsets whose F1 is defined."""
    scored = [s for s in subsets if s.f1 is not None]
    if not scored:
        return None, None
    plain = float(np.mean([s.f1 for s in scored]))
    weighted = float(sum(s.f1 * s.traces for s in scored) / sum(s.traces for s in scored))
    return plain, weighted


def official_headline(subsets: Sequence[SubsetResult]) -> float:
    """The plain mean of the subsets' official F1s, nan as soon as one is nan (numpy's mean)."""
    values = [s.f1_official for s in subsets]
    return math.nan if not values or any(map(math.isnan, values)) else sum(values) / len(values)


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


def judge_prediction(verdict: JudgeVerdict, n_steps: int) -> Prediction:
    """A judge's first error, or no prediction when its verdict has a non-``ok`` status, no first
    error, or one outside ``[-1, n_steps)`` (upstream's out-of-range int matches no label either)."""
    status = str((verdict.extra or {}).get("status", "ok"))
    fe = verdict.first_error
    if status == "ok" and fe is None:
        status = "unparseable"
    elif status == "ok" and not -1 <= fe < n_steps:
        status = "out_of_range"
    if status != "ok":
        return None, status if status in NO_PREDICTION else "unparseable"
    return fe, "ok"


def source_prediction(trace: Trace, source: str, threshold: float) -> Prediction:
    """The first step ``source`` rated -1; -1 only when it rated every step and none -1.

    A trace the source left (partly) unlabelled without a -1 is no prediction: e.g. ``judge`` labels
    of an unparseable critic answer, which label nothing. (``Trace.first_error`` would say -1.)
    """
    ratings = trace.ratings(source, threshold)
    if -1 in ratings:
        return ratings.index(-1), "ok"
    return (None, "unlabelled") if None in ratings else (-1, "ok")


def predict(
    sets: Mapping[str, Sequence[Trace]], predictor: Predictor, threshold: float, show_progress: bool = False
) -> dict[str, list[Prediction]]:
    """Predicted first error (None: no prediction) and its status for every trace of every subset.

    Traces are scored in chunks of :data:`CHUNK` (judged one by one), so ``show_progress`` can show a bar
    that moves while thousands of long traces are scored on a CPU or judged over HTTP."""
    return predict_with_scores(sets, predictor, threshold, show_progress)[0]


def predict_with_scores(
    sets: Mapping[str, Sequence[Trace]], predictor: Predictor, threshold: float, show_progress: bool = False
) -> tuple[dict[str, list[Prediction]], dict[str, list[list[float]]]]:
    """:func:`predict`, plus a step scorer's score rows per subset (as it returned them: a row cut as
    overlong is shorter than its trace); the second dict is empty for a judge or a label source."""
    from contextlib import nullcontext

    from prmkit.core.progress import progress

    out: dict[str, list[Prediction]] = {}
    rows: dict[str, list[list[float]]] = {}
    with progress() if show_progress else nullcontext() as bar:
        task = bar.add_task("eval: predicting", total=sum(map(len, sets.values()))) if bar else None

        def advance(name: str, n: int) -> None:
            if bar is not None:
                bar.update(task, advance=n, description=f"eval: {name}")

        for name, traces in sets.items():
            if isinstance(predictor, str):
                out[name] = [source_prediction(t, predictor, threshold) for t in traces]
                advance(name, len(traces))
            elif isinstance(predictor, StepScorer):
                out[name], rows[name] = [], []
                for start in range(0, len(traces), CHUNK):
                    chunk = list(traces[start : start + CHUNK])
                    scores = predictor.score(chunk)
                    rows[name] += [[float(x) for x in s] for s in scores]
                    out[name] += [
                        _scored_prediction(s, len(t.steps), threshold)
                        for t, s in zip(chunk, scores, strict=True)
                    ]
                    advance(name, len(chunk))
            elif isinstance(predictor, Judge):
                out[name] = []
                for t in traces:
                    out[name].append(judge_prediction(predictor.judge(t.problem, t.steps), len(t.steps)))
                    advance(name, 1)
            else:
                raise TypeError(
                    f"a predictor is a StepScorer, a Judge or a label source; found {type(predictor).__name__}"
                )
    return out, rows


CHUNK = 64
"""Traces scored per call of the scorer (which batches inside a call): the progress bar's step."""


def _scored_prediction(scores: Sequence[float], steps: int, threshold: float) -> Prediction:
    """A scorer's prediction; a row shorter than the trace (cut or skipped as overlong) predicts only
    a first error it saw: with no kept step below the threshold it cannot say -1, so it has none."""
    predicted = predicted_first_error(scores, threshold)
    if len(scores) < steps and predicted == -1:
        return None, "overlong"
    return predicted, "ok"


def resolve_threshold(
    predictor: Predictor, threshold: float | None, dev: Mapping[str, Sequence[Trace]] | None, gold_source: str
) -> tuple[float | None, str]:
    """The threshold to use and where it came from: given > tuned on dev > the checkpoint's own > 0.5."""
    if isinstance(predictor, Judge) and not isinstance(predictor, StepScorer):
        return None, "not used"
    if threshold is not None:
        return threshold, "given"
    if dev and isinstance(predictor, StepScorer):
        scores, gold = {}, {}
        for name, traces in dev.items():  # whole rows only: a cut trace's row has no -1 to tune
            rows = predictor.score(list(traces))
            whole = [(t, r) for t, r in zip(traces, rows, strict=True) if len(r) == len(t.steps)]
            scores[name] = [r for _, r in whole]
            gold[name] = [t.first_error(gold_source) for t, _ in whole]
        return tune_threshold(scores, gold), "dev"
    from prmkit.scoring import pick_threshold

    return pick_threshold(None, predictor)


def evaluate_first_error(
    sets: Mapping[str, Sequence[Trace]],
    predictor: Predictor,
    threshold: float | None = None,
    dev: Mapping[str, Sequence[Trace]] | None = None,
    gold_source: str | None = None,
    show_progress: bool = False,
) -> FirstErrorResult:
    """ProcessBench metrics of ``predictor`` on each named subset of traces (see the module docstring);
    ``show_progress``: a bar over the traces predicted (see :func:`predict`)."""
    all_traces = [t for ts in sets.values() for t in ts]
    gold_source = gold_source or gold_source_of(all_traces)
    missing = [t.id for t in all_traces if not has_gold(t, gold_source)]
    if missing:
        raise ValueError(
            f"{len(missing)} trace(s) carry no {gold_source!r} labels (first: {missing[0]}); "
            "first-error evaluation needs gold (world: gold_label; ProcessBench: its label field)"
        )
    used, origin = resolve_threshold(predictor, threshold, dev, gold_source)
    preds, rows = predict_with_scores(sets, predictor, 0.5 if used is None else used, show_progress)
    subsets, predictions = [], []
    for name, traces in sets.items():
        gold = [t.first_error(gold_source) for t in traces]
        predicted, statuses = [p for p, _ in preds[name]], [st for _, st in preds[name]]
        subset = subset_metrics(name, gold, predicted, statuses)
        records = [
            {"id": t.id, "problem": t.problem.id, "subset": name, "gold": g, "predicted": p, "status": st}
            for t, g, (p, st) in zip(traces, gold, preds[name], strict=True)
        ]
        if name in rows:
            kept = [[round(x, 6) for x in r] for r in rows[name]]
            for record, r in zip(records, kept, strict=True):
                record["scores"] = r
            subset.auroc, subset.auprc = first_error_ranking(kept, gold)
            lengths = [len(t.steps) for t in traces]
            own = own_best_f1(name, rows[name], lengths, gold, 0.5 if used is None else used)
            if own is not None:
                subset.f1_own_best, subset.own_best_threshold = own
        subsets.append(subset)
        predictions += records
    plain, weighted = headline(subsets)
    params = {"dev": sorted(dev) if dev else None}
    return FirstErrorResult(
        predictor_name(predictor),
        gold_source,
        used,
        origin,
        subsets,
        plain,
        weighted,
        predictions,
        params,
        f1_official=official_headline(subsets),
        undefined_subsets=[s.name for s in subsets if math.isnan(s.f1_official)],
        excluded_from_headline=[s.name for s in subsets if s.f1 is None],
        no_prediction=sum(s.no_prediction for s in subsets),
        overlong=counts.to_dict() if (counts := getattr(predictor, "length_counts", None)) else None,
        auroc=_mean_of([s.auroc for s in subsets]),
        auprc=_mean_of([s.auprc for s in subsets]),
        f1_own_best=_mean_of([s.f1_own_best for s in subsets]),
    )


def _mean_of(values: Sequence[float | None]) -> float | None:
    """Plain mean of the values that are not None; None when none is."""
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else None


def first_error_steps(
    scores: Sequence[Sequence[float]], gold: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """The steps the threshold-free metrics rank: per trace, the scored steps up to and including the gold
    first error (every scored step of an error-free trace). Returns (score of "wrong" = 1 − step score,
    positive = the step is the gold first error)."""
    wrong: list[float] = []
    positive: list[bool] = []
    for row, g in zip(scores, gold, strict=True):
        last = len(row) if g == -1 else min(g + 1, len(row))
        wrong += [1.0 - float(x) for x in row[:last]]
        positive += [i == g for i in range(last)]
    return np.asarray(wrong, float), np.asarray(positive, bool)


def first_error_ranking(
    scores: Sequence[Sequence[float]], gold: Sequence[int]
) -> tuple[float | None, float | None]:
    """(AUROC, AUPRC) of the gold first-error step against the right steps before it (see the module
    docstring); (None, None) without a positive or without a negative step."""
    wrong, positive = first_error_steps(scores, gold)
    if not positive.any() or positive.all():
        return None, None
    return auroc(wrong, positive), average_precision(wrong, positive)


def auroc(score: np.ndarray, positive: np.ndarray) -> float:
    """Mann-Whitney AUROC: P(a positive outscores a negative), ties counting half
    (:func:`prmkit.core.stats.weighted_auroc` at unit weights)."""
    return float(weighted_auroc(score, positive, np.ones(len(score)))[0])


def average_precision(score: np.ndarray, positive: np.ndarray) -> float:
    """scikit-learn's ``average_precision_score`` (:func:`prmkit.core.stats.weighted_auprc` at unit weights)."""
    return float(weighted_auprc(score, positive, np.ones(len(score)))[0])


def own_best_f1(
    name: str, rows: Sequence[Sequence[float]], lengths: Sequence[int], gold: Sequence[int], used: float
) -> tuple[float, float] | None:
    """(F1, threshold): the subset's F1 at its own best threshold, :func:`tune_threshold` on its whole
    rows, applied to every row as the used threshold is; the used threshold instead if it scores higher.
    None for a one-sided subset (no F1)."""
    whole = [(r, g) for r, n, g in zip(rows, lengths, gold, strict=True) if len(r) == n]
    tuned = tune_threshold({name: [r for r, _ in whole]}, {name: [g for _, g in whole]})

    def f1_at(threshold: float) -> float | None:
        preds = [_scored_prediction(r, n, threshold)[0] for r, n in zip(rows, lengths, strict=True)]
        return subset_metrics(name, gold, preds).f1

    best, at_used = f1_at(tuned), f1_at(used)
    if best is None or at_used is None:
        return None
    return (best, tuned) if best >= at_used else (at_used, used)


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


def load_predictor(
    model: str | None,
    judge: str | None,
    source: str | None,
    overlong: Overlong | None = None,
    load: LoadOptions | None = None,
) -> Predictor:
    """Exactly one of: a scorer spec (``prmkit.scoring.SCORER_HELP``; a checkpoint is read with the length
    policy ``overlong``, default ``error``, and the loading options ``load``), a judge name
    (``prmkit.policies.JUDGES``), a label source."""
    given = [x for x in (model, judge, source) if x is not None]
    if len(given) != 1:
        raise ValueError("give exactly one predictor: a model folder, a judge name, or a label source")
    if source is not None:
        return source
    if model is not None:
        from prmkit.scoring import load_scorer

        return load_scorer(model, load=load, overlong=overlong)  # None: the scorer's default
    from prmkit.policies import load_judge

    return load_judge(judge)


def run_processbench(config: ProcessBenchConfig) -> FirstErrorResult:
    """``prmkit eval processbench``: :func:`evaluate_first_error` of the configured model, judge or label
    source on the config's files (each one subset, named by its stem), the threshold tuned on ``dev`` when
    given; written to ``out`` when given (``processbench.json``, ``predictions.jsonl``,
    ``first_error_hist.png``). The fields are documented on
    :class:`~prmkit.evaluation.config.ProcessBenchConfig`."""
    sets = load_sets(config.files)
    dev_sets = load_sets(config.dev) if config.dev else None
    predictor = load_predictor(config.model, config.judge, config.source, config.overlong, config.load)
    result = evaluate_first_error(
        sets, predictor, config.threshold, dev_sets, config.gold_source, show_progress=True
    )
    result.params["files"] = [str(f) for f in config.files]
    if config.out is not None:
        result.write(config.out)
    return result

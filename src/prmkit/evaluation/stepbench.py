"""Shared step-metric maths and predictions of the step-level benchmarks (MR-Ben, BIG-Bench Mistake,
DeltaBench, Hard2Verify): one home for what their evaluations share, so each of
:mod:`~prmkit.evaluation.mrben`, :mod:`~prmkit.evaluation.bbm`, :mod:`~prmkit.evaluation.deltabench` and
:mod:`~prmkit.evaluation.hard2verify` keeps only its own official metric.

- :class:`Row`: one trace's gold step ratings and a predictor's step ratings (and scores, for a model).
- :func:`predict_rows`: a step scorer's scores cut by a rule (a threshold, or DeltaBench's Z-score rule),
  a judge's ratings, or a label source's ratings, for every trace.
- :func:`mcc`, :func:`balanced`, :func:`set_prf`, :func:`zscore_flags`: the metric formulas.
- :func:`first_error_f1` (ProcessBench's, :func:`~prmkit.evaluation.processbench.subset_metrics`) and
  :func:`step_auroc` (first-error AUROC with :func:`~prmkit.core.stats.weighted_auroc`) beside them.
- :func:`read_predictions` / :func:`write_predictions`: ``predictions.jsonl`` (``id``, ``ratings``,
  ``scores``), so a run's predictions can be scored again, or compared, with no model.
- :func:`compare`: a paired bootstrap over problems of two predictions' headline difference.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from prmkit.core.files import atomic_write
from prmkit.core.model import Trace
from prmkit.core.protocols import Judge, StepScorer
from prmkit.core.results import Table, percent
from prmkit.core.stats import Estimate, crossed_bootstrap, item_weights, paired, weighted_auroc
from prmkit.evaluation.processbench import (
    Predictor,
    SubsetResult,
    load_predictor,
    load_sets,
    predictor_name,
    resolve_threshold,
    subset_metrics,
)

Rule = Callable[[Sequence[float]], list[int]]
"""Step scores -> ratings (-1 wrong, +1 right): a threshold or DeltaBench's Z-score rule."""


@dataclass
class Row:
    """One trace: gold and predicted step ratings (-1/+1, None where unrated) and the model's scores."""

    id: str
    group: str
    """The benchmark's table row: subject (MR-Ben), task (BBM), domain (DeltaBench), set (Hard2Verify)."""
    problem: str
    gold: list[int | None]
    predicted: list[int | None]
    scores: list[float] | None = None
    status: str = "ok"
    """``ok``, or why there is no prediction (``unlabelled``: the predictor left steps unrated)."""
    correct: bool | None = None
    """The solution's gold correctness (``Trace.answer_correct``), where the benchmark gives one."""

    @property
    def gold_first(self) -> int:
        return first_negative(self.gold)

    @property
    def predicted_first(self) -> int | None:
        """The first step rated -1; -1 when every step is rated and none -1; None when unknown."""
        if self.status != "ok":
            return None
        first = first_negative(self.predicted)
        return None if first == -1 and None in self.predicted else first


def first_negative(ratings: Sequence[int | None]) -> int:
    """Index of the first -1, or -1."""
    return next((i for i, r in enumerate(ratings) if r == -1), -1)


def threshold_rule(threshold: float) -> Rule:
    """-1 below ``threshold``, else +1 (ProcessBench's cut)."""
    return lambda scores: [-1 if s < threshold else 1 for s in scores]


def zscore_flags(scores: Sequence[float], k: float, ddof: int = 0) -> list[bool]:
    """Which scores are low outliers of their own trace: ``s < mean − k·std`` (std with ``ddof``; a trace
    whose scores are all equal, or too short for the std, flags nothing)."""
    x = np.asarray(scores, dtype=float)
    if len(x) <= ddof:
        return [False] * len(x)
    mean, std = float(x.mean()), float(x.std(ddof=ddof))
    return [bool(s < mean - k * std) for s in x] if std > 0 else [False] * len(x)


def zscore_rule(k: float, ddof: int = 0) -> Rule:
    """DeltaBench's outlier rule as ratings: a flagged section -1, the others +1."""
    return lambda scores: [-1 if f else 1 for f in zscore_flags(scores, k, ddof)]


def predict_rows(
    sets: Mapping[str, Sequence[Trace]], predictor: Predictor, rule: Rule, gold_source: str
) -> list[Row]:
    """Every trace's gold ratings (``gold_source``) and the predictor's ratings (a scorer's through ``rule``)."""
    rows = []
    for group, traces in sets.items():
        traces = list(traces)
        scores: list[list[float] | None] = [None] * len(traces)
        if isinstance(predictor, str):
            ratings = [t.ratings(predictor) for t in traces]
        elif isinstance(predictor, StepScorer):
            scores = [[float(x) for x in r] for r in predictor.score(traces)]
            ratings = [
                list(rule(r)) + [None] * (len(t.steps) - len(r)) for t, r in zip(traces, scores, strict=True)
            ]
        elif isinstance(predictor, Judge):
            ratings = [list(predictor.judge(t.problem, t.steps).ratings) for t in traces]
        else:
            raise TypeError(
                f"a predictor is a StepScorer, a Judge or a label source; found {type(predictor).__name__}"
            )
        for t, r, s in zip(traces, ratings, scores, strict=True):
            gold = t.ratings(gold_source)
            status = "unlabelled" if -1 not in r and None in r else "ok"
            predicted = [_sign(v) for v in r]
            rows.append(Row(t.id, group, t.problem.id, gold, predicted, s, status, t.answer_correct))
    return rows


def _sign(v: int | None) -> int | None:
    """A -1/0/+1 rating as wrong (-1) or not (+1): a neutral 0 is not an error (ProcessBench's reading)."""
    return None if v is None else (-1 if v < 0 else 1)


def mcc(tp: float, tn: float, fp: float, fn: float) -> float:
    """Matthews correlation of a 2×2 table; 0.0 where the table's covariance term or its margin product
    is 0 (MR-Ben's convention, which also makes an undefined MCC 0)."""
    covariance = tp * tn - fp * fn
    margins = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    if covariance == 0 or margins == 0:
        return 0.0
    return covariance / math.sqrt(margins)


def balanced(tp: float, positives: float, tn: float, negatives: float) -> dict[str, float | None]:
    """TPR, TNR, balanced accuracy (TPR+TNR)/2 and balanced F1 2·TPR·TNR/(TPR+TNR) (Hard2Verify's; None
    where a class is empty; balanced F1 is 0 when both rates are)."""
    tpr = tp / positives if positives else None
    tnr = tn / negatives if negatives else None
    if tpr is None or tnr is None:
        return {"tpr": tpr, "tnr": tnr, "balanced_accuracy": None, "balanced_f1": None}
    f1 = 2 * tpr * tnr / (tpr + tnr) if tpr + tnr else 0.0
    return {"tpr": tpr, "tnr": tnr, "balanced_accuracy": (tpr + tnr) / 2, "balanced_f1": f1}


def set_prf(predicted: set[int], gold: set[int]) -> tuple[float, float, float, int, int, int]:
    """Precision, recall, F1, TP, FP, FN of a predicted set of erroneous sections (each 0 where its
    denominator is 0: DeltaBench ``parse_output``)."""
    tp, fp, fn = len(predicted & gold), len(predicted - gold), len(gold - predicted)
    precision = tp / (tp + fp) if tp + fp > 0 else 0
    recall = tp / (tp + fn) if tp + fn > 0 else 0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0
    return precision, recall, f1, tp, fp, fn


def first_error_f1(name: str, rows: Sequence[Row]) -> SubsetResult:
    """ProcessBench's acc_error / acc_correct / F1 over the rows (no prediction matches nothing)."""
    return subset_metrics(
        name,
        [r.gold_first for r in rows],
        [r.predicted_first for r in rows],
        [r.status for r in rows],
    )


def step_auroc(rows: Sequence[Row]) -> float | None:
    """First-error AUROC: steps up to the gold first error (all of an error-free trace), positive = the
    gold first error, score of "wrong" = −step score (ProcessBench's threshold-free metric). None with
    no scores, or no positive or no negative step."""
    wrong, positive = [], []
    for r in rows:
        if r.scores is None:
            continue
        last = r.gold_first if r.gold_first != -1 else len(r.gold) - 1
        for i, s in enumerate(r.scores[: last + 1]):
            wrong.append(-s)
            positive.append(i == r.gold_first)
    if not wrong or all(positive) or not any(positive):
        return None
    return float(weighted_auroc(np.asarray(wrong), np.asarray(positive), np.ones(len(wrong)))[0])


def write_predictions(path: str | Path, rows: Sequence[Row]) -> None:
    """``predictions.jsonl``: one line per trace (id, group, gold and predicted ratings, scores, status)."""
    with atomic_write(path) as fh:
        for r in rows:
            line = {"id": r.id, "group": r.group, "problem": r.problem, "gold": r.gold,
                    "ratings": r.predicted, "scores": r.scores, "status": r.status}  # fmt: skip
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")


def read_predictions(path: str | Path, rows: Sequence[Row], rule: Rule | None = None) -> list[Row]:
    """``rows`` (gold from the benchmark) with the predictions of ``path`` by trace id. A line with
    ``scores`` is rated by ``rule`` when one is given, else its ``ratings`` are taken; a trace with no
    line is no prediction (``unlabelled``)."""
    by_id: dict[str, dict[str, Any]] = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}:{n}: expected a JSON object, found invalid JSON ({err})") from None
            if not isinstance(rec, dict) or not isinstance(rec.get("id"), str):
                raise ValueError(f"{path}:{n}: id: expected a string trace id, found {str(rec)[:60]}")
            by_id[rec["id"]] = rec
    out = []
    for r in rows:
        rec = by_id.get(r.id)
        if rec is None:
            out.append(
                Row(r.id, r.group, r.problem, r.gold, [None] * len(r.gold), None, "unlabelled", r.correct)
            )
            continue
        scores = rec.get("scores")
        ratings = list(rule(scores)) if rule is not None and scores else rec.get("ratings") or []
        ratings = [_sign(v) for v in ratings] + [None] * (len(r.gold) - len(ratings))
        status = "unlabelled" if -1 not in ratings and None in ratings else "ok"
        out.append(Row(r.id, r.group, r.problem, r.gold, ratings[: len(r.gold)], scores, status, r.correct))
    return out


Headline = Callable[[Sequence[Row], np.ndarray], np.ndarray]
"""A benchmark's headline as a function of trace weights (R, n) -> (R,), so a bootstrap can resample."""


def compare(
    headline: Headline, a: Sequence[Row], b: Sequence[Row], resamples: int = 2000, seed: int = 0
) -> Estimate:
    """The headline of ``a`` minus that of ``b`` with a 95 % paired bootstrap interval over problems
    (all the traces of a problem drawn together; both sides see the same draw)."""
    if [r.id for r in a] != [r.id for r in b]:
        raise ValueError("compare: the two predictions must cover the same traces in the same order")
    problems = {p: i for i, p in enumerate(dict.fromkeys(r.problem for r in a))}
    of = np.asarray([problems[r.problem] for r in a])

    def side(rows: Sequence[Row]) -> Callable[[int, np.ndarray], np.ndarray]:
        return lambda _s, w: headline(rows, item_weights(w, of))

    return crossed_bootstrap(paired(side(a), side(b)), 1, len(problems), resamples=resamples, rng=seed)


pct = partial(percent, digits=2, missing="nan")
"""A fraction as a percentage with two decimals; ``nan`` for None or nan."""


def gold_rows(sets: Mapping[str, Sequence[Trace]], gold_source: str) -> list[Row]:
    """Every trace's gold, with no prediction yet (for :func:`read_predictions`)."""
    return [
        Row(t.id, group, t.problem.id, t.ratings(gold_source), [None] * len(t.steps), None, "unlabelled",
            t.answer_correct)
        for group, traces in sets.items() for t in traces
    ]  # fmt: skip


def gold_source_of(traces: Sequence[Trace], sources: Sequence[str]) -> str:
    """The first of ``sources`` some trace carries labels from."""
    for source in sources:
        if any(source in t.sources() for t in traces):
            return source
    found = sorted({s for t in traces for s in t.sources()})
    raise ValueError(
        f"gold: expected labels from one of {', '.join(sources)}, found {', '.join(found) or 'none'}; "
        "name the reference with gold_source=SELECTOR (--gold-source)"
    )


@dataclass
class StepBenchResult:
    """One benchmark's result: a table row per group (its official metrics), the overall row, the official
    headline, first-error F1 and AUROC beside them, and how the predictions were made."""

    benchmark: str
    predictor: str
    headline_name: str
    headline: float | None
    groups: list[dict[str, Any]]
    """One row per group: ``name`` then the benchmark's metrics (fractions) and counts."""
    overall: dict[str, Any]
    first_error: list[SubsetResult]
    """ProcessBench's metrics per group, in the order of ``groups``."""
    auroc: float | None = None
    """First-error AUROC over all traces (a model's scores only)."""
    gold_source: str | None = None
    rule: str = ""
    """How step scores became ratings (``threshold 0.5 (given)``, ``z-score k=1 ddof=0``, ``not used``)."""
    notes: list[str] = field(default_factory=list)
    comparison: dict[str, Any] | None = None
    """With ``compare``: the headline difference and its paired bootstrap interval."""
    rows: list[Row] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in asdict(self).items() if k != "rows"}
        for part in d["first_error"]:
            undefined = math.isnan(part["f1_official"])
            part["f1_official"] = None if undefined else part["f1_official"]
        return d

    def table(self) -> str:
        """The official metrics per group and overall, then first-error F1 per group (percent, Markdown)."""
        keys = [k for k in self.overall if k != "name"]
        rows = [
            [g["name"], *(pct(g[k]) if isinstance(g[k], float) or g[k] is None else str(g[k]) for k in keys)]
            for g in (*self.groups, self.overall)
        ]
        lines = Table(rows, columns=["group", *keys]).grid()
        lines += ["", f"**{self.headline_name}: {pct(self.headline)}**", ""]
        columns = ["group", "error / error-free", "acc_error", "acc_correct", "first-error F1"]
        rows = [
            [s.name, f"{s.with_error} / {s.error_free}", pct(s.acc_error), pct(s.acc_correct), pct(s.f1)]
            for s in self.first_error
        ]
        lines += Table(rows, columns=columns).grid()
        if self.auroc is not None:
            lines.append(f"\nfirst-error AUROC: {pct(self.auroc)}")
        if self.comparison is not None:
            c = self.comparison
            lines.append(
                f"\n{self.headline_name} difference: {pct(c['difference'])} [{pct(c['low'])}, {pct(c['high'])}] ({c['method']})"
            )
        return "\n".join(lines + [f"note: {n}" for n in self.notes])

    def write(self, out_dir: str | Path) -> Path:
        """``<benchmark>.json`` and ``predictions.jsonl`` (readable back with ``--predictions``)."""
        out = Path(out_dir)
        with atomic_write(out / f"{self.benchmark}.json") as fh:
            json.dump(self.to_dict(), fh, indent=2, allow_nan=False)
        write_predictions(out / "predictions.jsonl", self.rows)
        return out / f"{self.benchmark}.json"


Evaluate = Callable[[Sequence[Row]], StepBenchResult]


def by_group(rows: Sequence[Row]) -> dict[str, list[Row]]:
    """Rows by group, in first-seen order."""
    out: dict[str, list[Row]] = {}
    for r in rows:
        out.setdefault(r.group, []).append(r)
    return out


def run_stepbench(
    config: Any,
    gold_sources: Sequence[str],
    evaluate: Evaluate,
    headline: Headline,
    rule: Rule | None = None,
    rule_name: str = "",
    regroup: Callable[[dict[str, list[Trace]]], dict[str, list[Trace]]] | None = None,
) -> StepBenchResult:
    """The shared ``run(config)`` of the four commands: read ``files`` (groups by file stem, or as
    ``regroup`` regroups them); predict with the configured model, judge or source (a model's scores cut
    by ``rule``, default the threshold) or read ``predictions``; evaluate; with ``compare``, the paired
    headline difference; write to ``out``."""
    c = config
    sets = load_sets(c.files)
    if regroup is not None:
        sets = regroup(sets)
    gold_source = c.gold_source or gold_source_of([t for ts in sets.values() for t in ts], gold_sources)
    if c.predictions is not None:
        given = [k for k in ("model", "judge", "source") if getattr(c, k) is not None]
        if given:
            raise ValueError(f"predictions: score a file with no predictor; leave out {', '.join(given)}")
        gold = gold_rows(sets, gold_source)
        if rule is None and c.threshold is not None:
            rule, rule_name = threshold_rule(c.threshold), f"threshold {c.threshold} (given)"
        rows, name = read_predictions(c.predictions, gold, rule), Path(c.predictions).stem
        rule_name = rule_name if rule is not None else "ratings as written"
    else:
        if c.compare is not None:
            raise ValueError("compare: compares two predictions files; give --predictions too")
        predictor = load_predictor(c.model, c.judge, c.source, c.overlong, c.load)
        if rule is None:
            used, origin = resolve_threshold(predictor, c.threshold, None, gold_source)
            cut = 0.5 if used is None else used
            rule, rule_name = threshold_rule(cut), f"threshold {cut} ({origin})"
        rows, name = predict_rows(sets, predictor, rule, gold_source), predictor_name(predictor)
        if not isinstance(predictor, StepScorer):
            rule_name = "not used"
    result = evaluate(rows)
    result.predictor, result.gold_source, result.rule, result.rows = name, gold_source, rule_name, rows
    if c.compare is not None:
        other = read_predictions(
            c.compare, gold_rows(sets, gold_source), rule if rule_name != "ratings as written" else None
        )
        est = compare(headline, rows, other)
        result.comparison = {"difference": est.mean, "low": est.low, "high": est.high, "method": est.method,
                             "against": str(c.compare)}  # fmt: skip
    if c.out is not None:
        result.write(c.out)
    return result

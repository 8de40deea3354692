"""AgentProcessBench's step metrics, computed as its own script computes them, beside first-error F1.

AgentProcessBench (arXiv 2603.14465, RUCBM/AgentProcessBench) labels every assistant message of a tool-using
agent's trajectory -1/0/+1 (``step_labels``: message index as a string -> label). Its script
``eval/compare.py`` (commit 96bcf8a11edef0131e41b5a8340918016e454c82) compares a predictions file with the
reference file of each dataset; prmkit computes the same numbers with its own code, checked against that
script's output in tests/evaluation/test_agentprocessbench.py. Per dataset, and for ``AVG``:

- ``step_micro_acc``: reference steps whose predicted label equals the reference label / reference steps;
- ``step_exact_acc``: records whose predicted label dict equals the reference dict (an extra predicted key
  is a mismatch);
- ``first_neg1_idx_acc`` (the README's *firsterroracc*): records whose smallest integer key labelled -1 is
  the reference's (-1 when neither has one);
- ``missing_or_failed``: reference records with no prediction, or whose prediction's ``comment`` starts
  with ``llm_annotate_failed:``.

The script's rules, kept here: a record's key is ``total_index``, else ``query_index * 5 + sample_index``
plus the dataset's offset (hotpotqa 0, gaia_dev 250, bfcl 500, tau2 750; ``qs:Q:S`` for another dataset),
else ``record_id``. Of several predictions for one key the one with the latest timestamp (first parseable of
``updated_at``, ``created_at``, ``timestamp``) wins, a timestamped one over one without, the later line on a
tie. Labels are normalised: a dict's values, or a list's items keyed by position, that are int-like (ints,
integral floats, bools as 0/1, digit strings such as ``"-1"``) are kept, anything else is dropped. A missing
prediction has no labels (every step a miss, first error -1); a *failed* one is still compared on the labels
it has. ``AVG`` sums the counts over datasets (micro), it is not the mean of the percentages.

Where the script would crash prmkit answers in one located error instead (``file:line``: a ``step_labels``
that is neither object nor list, a record with no key, a reference key given twice), and it orders
timestamps as POSIX seconds, so an ISO time with a zone and one without still compare.

First-error F1 (ProcessBench's, :func:`~prmkit.evaluation.processbench.subset_metrics`) sits beside them,
with ProcessBench's rule that a missing or failed prediction is *no prediction* (matching nothing, -1
included), never "no error" as the script's first_neg1_idx_acc reads it. The AVG row's F1 pools the
records (micro, like the other AVG figures); ``f1_mean`` is ProcessBench's headline, the plain mean of the
dataset F1s. ProcessBench's evaluation has no bootstrap intervals, and neither has this one.

Two ways in: :func:`compare_files` (reference and predictions files, no model: the official comparison)
and :func:`evaluate_traces` (gold-labelled traces and a predictor: a step scorer's scores cut at the
threshold into -1/+1, or -1/0/+1 with a neutral band; a judge's ratings; a label source's ratings).
:func:`run_agentprocessbench` is the ``prmkit eval agentprocessbench`` command: its config's files, one
way or the other.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from prmkit.core.model import Trace
from prmkit.core.protocols import Judge, StepScorer
from prmkit.core.results import percent
from prmkit.evaluation.config import AgentProcessBenchConfig
from prmkit.evaluation.gold import has_gold
from prmkit.evaluation.processbench import (
    Predictor,
    SubsetResult,
    headline,
    judge_prediction,
    load_predictor,
    load_sets,
    predicted_first_error,
    predictor_name,
    resolve_threshold,
    source_prediction,
    subset_metrics,
)

OFFICIAL = "RUCBM/AgentProcessBench eval/compare.py @ 96bcf8a11edef0131e41b5a8340918016e454c82"
DATASET_OFFSETS = {"hotpotqa": 0, "gaia_dev": 250, "bfcl": 500, "tau2": 750}
"""Where each dataset's ``query_index * 5 + sample_index`` starts in the benchmark's ``total_index``."""
TIMESTAMP_FIELDS = ("updated_at", "created_at", "timestamp")
FAILED = "llm_annotate_failed:"
"""A prediction whose ``comment`` starts with this is a failed annotation (counted as missing_or_failed)."""
SCORE_METRICS = ("step_micro_acc", "step_exact_acc", "first_neg1_idx_acc")
PREDICTOR_FIELDS = ("model", "judge", "source", "threshold", "neutral_below", "gold_source", "overlong")
"""The config fields that choose or tune a predictor, in the order an error names them: none goes with
``predictions`` (a comparison of files)."""
GOLD_SOURCES = ("gold", "human:agentprocessbench")
"""Where trace gold is looked for, in order: a world's checker, then AgentProcessBench's labels."""

StepKeys = Callable[[Trace], list[str]]
"""The key of each step of a trace in a ``step_labels`` dict: an integer as text, increasing along the
trace (AgentProcessBench: the message index), so the smallest key labelled -1 is the first error."""
KEY_FIELDS = ("total_index", "query_index", "sample_index", "record_id")
"""The fields a record is keyed by; a prediction written for the official script carries them."""


def int_label(value: Any) -> int | None:
    """An int-like value as the script reads it (bool -> 0/1, 2.0 -> 2, " -1 " -> -1), else None."""
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("-").isdigit():  # the script's test: "+1" and "1.0" are dropped, not read
            try:
                return int(text)
            except ValueError:  # "--1" or a non-decimal digit pass the test; the script would crash
                return None
    return None


def normalise_labels(value: Any, where: str = "step_labels") -> dict[str, int]:
    """``step_labels`` as a dict key -> int: a dict's int-like values, or a list's keyed by position."""
    if value is None:
        return {}
    if isinstance(value, dict):
        items: Iterable[tuple[Any, Any]] = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        raise ValueError(
            f"{where}: expected an object (key -> label) or a list, found {type(value).__name__}"
        )
    return {str(k): label for k, v in items if (label := int_label(v)) is not None}


def first_negative(labels: Mapping[str, int]) -> int:
    """The smallest integer key labelled -1 (keys that are not integers are passed over), -1 if none."""
    keys = []
    for key, label in labels.items():
        if label == -1:
            with contextlib.suppress(ValueError):  # a key that is not an integer is passed over
                keys.append(int(key))
    return min(keys, default=-1)


def record_key(record: Mapping[str, Any], dataset: str, where: str) -> str:
    """A record's key: ``ti:N`` (total_index, or the dataset's offset + query * 5 + sample), else ``qs:Q:S``,
    else ``rid:ID``."""
    total = int_label(record.get("total_index"))
    if total is not None:
        return f"ti:{total}"
    query, sample = int_label(record.get("query_index")), int_label(record.get("sample_index"))
    if query is not None and sample is not None:
        if dataset in DATASET_OFFSETS:
            return f"ti:{DATASET_OFFSETS[dataset] + 5 * query + sample}"
        return f"qs:{query}:{sample}"
    rid = record.get("record_id")
    if isinstance(rid, str) and rid.strip():
        return f"rid:{rid.strip()}"
    raise ValueError(
        f"{where}: record key: expected total_index, query_index with sample_index, or record_id; "
        f"found keys {sorted(record)}"
    )


def timestamp(record: Mapping[str, Any]) -> float | None:
    """The first parseable of :data:`TIMESTAMP_FIELDS` as POSIX seconds (numbers in ms or ns are scaled)."""
    for name in TIMESTAMP_FIELDS:
        value = record.get(name)
        if isinstance(value, bool | int | float):
            seconds = float(value)
            seconds = seconds / 1e9 if seconds > 1e15 else seconds / 1e3 if seconds > 1e12 else seconds
            if math.isfinite(seconds):
                return seconds
        elif isinstance(value, str) and value.strip():
            text = value.strip()
            try:
                return datetime.fromisoformat(
                    text[:-1] + "+00:00" if text.endswith("Z") else text
                ).timestamp()
            except ValueError:
                continue
    return None


def read_jsonl(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; a line that is not a JSON object is an error."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}:{n}: expected a JSON object, found invalid JSON ({err})") from None
            if not isinstance(obj, dict):
                raise ValueError(f"{path}:{n}: expected a JSON object, found {type(obj).__name__}")
            out.append((n, obj))
    return out


def reference_records(path: str | Path, dataset: str) -> dict[str, tuple[int, dict[str, Any]]]:
    """Reference records by key (a key given twice is an error naming both lines)."""
    out: dict[str, tuple[int, dict[str, Any]]] = {}
    for n, rec in read_jsonl(path):
        key = record_key(rec, dataset, f"{path}:{n}")
        if key in out:
            raise ValueError(f"{path}:{n}: record key {key} already given on line {out[key][0]}")
        out[key] = (n, rec)
    return out


def latest_predictions(path: str | Path, dataset: str) -> dict[str, tuple[int, dict[str, Any]]]:
    """One prediction per key: the latest by timestamp, one with a timestamp over one without, else the
    later line (how annotation runs that were resumed and retried leave their files)."""
    best: dict[str, tuple[float | None, int, dict[str, Any]]] = {}
    for n, rec in read_jsonl(path):
        key, ts = record_key(rec, dataset, f"{path}:{n}"), timestamp(rec)
        held = best.get(key)
        if held is None or (ts is not None and (held[0] is None or ts >= held[0])) or held[0] is ts is None:
            best[key] = (ts, n, rec)
    return {k: (n, rec) for k, (_, n, rec) in best.items()}


@dataclass
class Pair:
    """One reference record and what was predicted for it."""

    id: str
    reference: dict[str, int]
    predicted: dict[str, int]
    status: str = "ok"
    """``ok``; ``unlabelled`` (no prediction), ``unparseable`` (a failed annotation) or ``overlong``."""
    first_error: int | None = None
    """The predicted first error for F1 (None: no prediction); by default the predicted dict's."""
    fields: dict[str, Any] = field(default_factory=dict)
    """The record's key fields (:data:`KEY_FIELDS`), so a prediction can be written for the script."""

    def __post_init__(self) -> None:
        if self.first_error is None and self.status == "ok":
            self.first_error = first_negative(self.predicted)


@dataclass
class Counts:
    """The script's counts for one dataset (or ``AVG``: their sums) and the metrics made from them."""

    dataset: str
    ref_records: int
    pred_records: int
    compared: int
    missing_or_failed: int
    step_matches: int
    step_total: int
    exact_matches: int
    first_error_matches: int

    def metrics(self) -> dict[str, float]:
        """Fractions in [0, 1], 0.0 where the count below is 0 (as the script does)."""

        def ratio(a: int, b: int) -> float:
            return a / b if b else 0.0

        return {
            "missing_or_failed_pct": ratio(self.missing_or_failed, self.compared),
            "step_micro_acc": ratio(self.step_matches, self.step_total),
            "step_exact_acc": ratio(self.exact_matches, self.compared),
            "first_neg1_idx_acc": ratio(self.first_error_matches, self.compared),
        }

    @classmethod
    def total(cls, parts: Sequence[Counts], name: str = "AVG") -> Counts:
        sums = [sum(getattr(p, f) for p in parts) for f in list(cls.__dataclass_fields__)[1:]]
        return cls(name, *sums)


def count(dataset: str, pairs: Sequence[Pair], pred_records: int) -> Counts:
    """The script's counts over one dataset's pairs."""
    return Counts(
        dataset,
        len(pairs),
        pred_records,
        len(pairs),
        sum(p.status in ("unlabelled", "unparseable") for p in pairs),
        sum(p.predicted.get(k) == v for p in pairs for k, v in p.reference.items()),
        sum(len(p.reference) for p in pairs),
        sum(p.predicted == p.reference for p in pairs),
        sum(first_negative(p.predicted) == first_negative(p.reference) for p in pairs),
    )


def compare_pairs(path: str | Path, dataset: str, predictions: str | Path) -> tuple[list[Pair], int]:
    """Each reference record of ``path`` with its latest prediction, and how many keys were predicted."""
    preds = latest_predictions(predictions, dataset)
    pairs = []
    for key, (n, ref) in reference_records(path, dataset).items():
        reference = normalise_labels(ref.get("step_labels"), f"{path}:{n}: step_labels")
        fields = {k: ref[k] for k in KEY_FIELDS if k in ref}
        if key not in preds:
            pairs.append(Pair(key, reference, {}, "unlabelled", fields=fields))
            continue
        m, pred = preds[key]
        predicted = normalise_labels(pred.get("step_labels"), f"{predictions}:{m}: step_labels")
        comment = pred.get("comment")
        failed = isinstance(comment, str) and comment.strip().startswith(FAILED)
        pairs.append(Pair(key, reference, predicted, "unparseable" if failed else "ok", fields=fields))
    return pairs, len(preds)


@dataclass
class AgentProcessBenchResult:
    """Per-dataset counts and metrics, their AVG, first-error F1 beside them, and how they were made."""

    predictor: str
    datasets: list[Counts]
    avg: Counts
    first_error: list[SubsetResult]
    """ProcessBench's metrics per dataset, in the order of ``datasets``."""
    first_error_avg: SubsetResult
    """ProcessBench's metrics over all records pooled (micro, like ``avg``)."""
    f1_mean: float | None
    """ProcessBench's headline: the plain mean of the dataset F1s (those defined)."""
    score_metric: str = "step_micro_acc"
    """The AVG metric the official table prints as ``FINAL_SCORE`` (one of :data:`SCORE_METRICS`)."""
    gold_source: str | None = None
    threshold: float | None = None
    threshold_from: str = "not used"
    neutral_below: float | None = None
    predictions: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, with_predictions: bool = False) -> dict[str, Any]:
        """Plain JSON: counts and metrics (fractions) per dataset and AVG; nan F1s become null."""
        d = asdict(self)
        if not with_predictions:
            d.pop("predictions")
        for row, c in zip((*d["datasets"], d["avg"]), (*self.datasets, self.avg), strict=True):
            row.update(c.metrics())
        d["final_score"] = self.avg.metrics()[self.score_metric]
        for part in (*d["first_error"], d["first_error_avg"]):
            undefined = math.isnan(part["f1_official"])
            part["f1_official"] = None if undefined else part["f1_official"]
            part["f1_official_undefined"] = undefined
        return d

    def official_table(self, run_name: str | None = None, score_metric: str | None = None) -> str:
        """The table ``eval/compare.py`` prints for one run, character for character (run name: the
        predictor's; score metric: the result's)."""
        run_name, score_metric = run_name or self.predictor, score_metric or self.score_metric
        if score_metric not in SCORE_METRICS:
            raise ValueError(
                f"score_metric: expected one of {', '.join(SCORE_METRICS)}, found {score_metric!r}"
            )
        headers = ["dataset", "ref_n", "pred_n", *self.avg.metrics()]
        rows = [
            [
                c.dataset,
                str(c.ref_records),
                str(c.pred_records),
                *(f"{100 * v:.2f}%" for v in c.metrics().values()),
            ]
            for c in (*self.datasets, self.avg)
        ]
        widths = [max(len(r[i]) for r in (headers, *rows)) for i in range(len(headers))]
        lines = [f"MODEL  {run_name}", "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
        for row in rows:  # the dataset name is left-aligned, the numbers right-aligned
            cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
            lines.append("  ".join(cells))
        score = self.avg.metrics()[score_metric]
        lines += [f"FINAL_SCORE[{score_metric}]={100 * score:.2f}%", f"FINAL_SCORE_RAW={score:.6f}"]
        return "\n".join(lines) + "\n"

    def table(self) -> str:
        """First-error F1 beside the official metrics, in percent (Markdown)."""
        lines = [
            "| dataset | records | error / error-free | no prediction | acc_error | acc_correct | F1 |",
            "|---|---|---|---|---|---|---|",
        ]
        for s in (*self.first_error, self.first_error_avg):
            lines.append(
                f"| {s.name} | {s.traces} | {s.with_error} / {s.error_free} | {s.no_prediction} "
                f"| {_pct(s.acc_error)} | {_pct(s.acc_correct)} | {_pct(s.f1)} |"
            )
        lines.append(
            f"| **mean of dataset F1s (ProcessBench's headline)** | | | | | | **{_pct(self.f1_mean)}** |"
        )
        return "\n".join(lines)

    def write(self, out_dir: str | Path) -> Path:
        """Write ``agentprocessbench.json``, ``predictions.jsonl`` (per record: reference, predicted
        labels, status and first errors) and, for each dataset whose records carry their key fields,
        ``official/<dataset>__prmkit.jsonl``: the predictions as the official script reads them."""
        from prmkit.core.files import atomic_write

        out = Path(out_dir)
        with atomic_write(out / "agentprocessbench.json") as fh:
            json.dump(self.to_dict(), fh, indent=2, allow_nan=False)
        with atomic_write(out / "predictions.jsonl") as fh:
            fh.writelines(json.dumps(p, ensure_ascii=False) + "\n" for p in self.predictions)
        for dataset, lines in official_predictions(self.predictions).items():
            with atomic_write(out / "official" / f"{dataset}__prmkit.jsonl") as fh:
                fh.writelines(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        return out / "agentprocessbench.json"


def official_predictions(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Prediction records in the benchmark's form (key fields, ``step_labels``), per dataset, for the
    datasets whose every record has key fields. A missing prediction stays missing; a failed one is
    written with the ``llm_annotate_failed:`` comment, so the script counts both as prmkit did."""
    out: dict[str, list[dict[str, Any]]] = {}
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        mine = [r for r in rows if r["dataset"] == dataset]
        if not all(r["fields"] for r in mine):
            continue
        out[dataset] = [
            {**r["fields"], "step_labels": r["predicted"]}
            | ({"comment": f"{FAILED} (prmkit: failed annotation)"} if r["status"] == "unparseable" else {})
            for r in mine
            if r["status"] != "unlabelled"
        ]
    return out


_pct = partial(percent, digits=2, missing="nan")


def evaluate_pairs(
    pairs: Mapping[str, Sequence[Pair]], pred_records: Mapping[str, int], predictor: str
) -> AgentProcessBenchResult:
    """The result over each dataset's pairs (datasets in name order, as the script prints them)."""
    names = sorted(pairs)
    counts = [count(n, pairs[n], pred_records[n]) for n in names]
    subsets = [_first_error(n, pairs[n]) for n in names]
    pooled = _first_error("AVG", [p for n in names for p in pairs[n]])
    rows = [
        {"dataset": n, "id": p.id, "fields": p.fields, "status": p.status, "reference": p.reference,
         "predicted": p.predicted, "gold_first_error": first_negative(p.reference),
         "predicted_first_error": p.first_error}
        for n in names for p in pairs[n]
    ]  # fmt: skip
    return AgentProcessBenchResult(
        predictor, counts, Counts.total(counts), subsets, pooled, headline(subsets)[0], predictions=rows
    )


def _first_error(name: str, pairs: Sequence[Pair]) -> SubsetResult:
    return subset_metrics(
        name,
        [first_negative(p.reference) for p in pairs],
        [p.first_error for p in pairs],
        [p.status for p in pairs],
    )


def dataset_of(path: str | Path) -> tuple[str, str]:
    """(dataset, run name) of a file as the script names them: ``<dataset>__<run>.jsonl``, else the stem."""
    name = Path(path).name
    if "__" in name:
        dataset, run = name.split("__", 1)
        return dataset, run.removesuffix(".jsonl")
    return Path(path).stem, Path(path).stem


def compare_files(
    references: Sequence[str | Path], predictions: Sequence[str | Path]
) -> AgentProcessBenchResult:
    """The official comparison: each reference file (dataset = its stem) with the predictions file at the
    same position (named ``<dataset>__<run>.jsonl`` as the script wants it, or anything else)."""
    if len(references) != len(predictions):
        raise ValueError(
            f"predictions: expected one file per reference file ({len(references)}), found {len(predictions)}"
        )
    pairs, counts = {}, {}
    for ref, pred in zip(references, predictions, strict=True):
        dataset = Path(ref).stem
        named = dataset_of(pred)[0] if "__" in Path(pred).name else dataset
        if named != dataset:
            raise ValueError(
                f"{pred}: predictions for dataset {named!r} paired with reference {ref}; reorder them"
            )
        if dataset in pairs:
            raise ValueError(f"{ref}: dataset {dataset!r} given twice (datasets are named by file stem)")
        pairs[dataset], counts[dataset] = compare_pairs(ref, dataset, pred)
    result = evaluate_pairs(pairs, counts, dataset_of(predictions[0])[1] if predictions else "none")
    result.params = {"references": [str(r) for r in references], "predictions": [str(p) for p in predictions]}
    return result


def message_keys(trace: Trace) -> list[str]:
    """Each step's AgentProcessBench key: its message index when the trace came from a chat-style file
    (the prompt messages are kept by the reader), else its position. The metrics are the same either way
    (the two orders agree, and gold and prediction share the key); the index names the steps as the
    benchmark does, in ``predictions.jsonl`` and the files written for the official script."""
    prompt = trace.metadata.get("chat", {}).get("prompt")
    if isinstance(prompt, list):
        try:
            from prmkit.formats.chat import step_index
        except ImportError:  # a prmkit without the chat format: positions
            return [str(i) for i in range(len(trace.steps))]
        return [str(i) for i in step_index(prompt, trace.steps)]
    return [str(i) for i in range(len(trace.steps))]


def trace_fields(trace: Trace) -> dict[str, Any]:
    """The record key fields the AgentProcessBench reader kept (none for other traces)."""
    kept = trace.metadata.get("agentprocessbench", {}).get("fields", {})
    return {k: kept[k] for k in KEY_FIELDS if k in kept}


def rate(scores: Sequence[float], threshold: float, neutral_below: float | None = None) -> list[int]:
    """Scores as labels: -1 below ``threshold``; +1 from it, or 0 from it up to (not including)
    ``neutral_below`` and +1 from there."""
    if neutral_below is not None and neutral_below < threshold:
        raise ValueError(
            f"neutral_below: expected a value >= the threshold {threshold}, found {neutral_below}"
        )
    top = threshold if neutral_below is None else neutral_below
    return [-1 if s < threshold else 0 if s < top else 1 for s in scores]


def trace_pairs(
    traces: Sequence[Trace],
    predictor: Predictor,
    threshold: float,
    neutral_below: float | None,
    gold_source: str,
    step_keys: StepKeys = message_keys,
) -> list[Pair]:
    """Gold labels and the predictor's labels of each trace, keyed by ``step_keys``."""
    if isinstance(predictor, str):
        ratings = [t.ratings(predictor, threshold) for t in traces]
        firsts = [source_prediction(t, predictor, threshold) for t in traces]
    elif isinstance(predictor, StepScorer):
        rows = predictor.score(list(traces))
        ratings = [list(rate(r, threshold, neutral_below)) for r in rows]
        firsts = [_scored_first_error(r, len(t.steps), threshold) for t, r in zip(traces, rows, strict=True)]
    elif isinstance(predictor, Judge):
        verdicts = [predictor.judge(t.problem, t.steps) for t in traces]
        ratings = [list(v.ratings) for v in verdicts]
        firsts = [judge_prediction(v, len(t.steps)) for t, v in zip(traces, verdicts, strict=True)]
    else:
        raise TypeError(
            f"a predictor is a StepScorer, a Judge or a label source; found {type(predictor).__name__}"
        )
    pairs = []
    for t, row, (first, status) in zip(traces, ratings, firsts, strict=True):
        keys = step_keys(t)
        reference = {keys[i]: r for i, r in enumerate(t.ratings(gold_source)) if r is not None}
        predicted = {keys[i]: r for i, r in enumerate(row) if r is not None}
        if first is not None and first != -1:  # a position, compared with the reference's first key
            first = key if (key := int_label(keys[first])) is not None else first
        pairs.append(Pair(t.id, reference, predicted, status, first, trace_fields(t)))
    return pairs


def _scored_first_error(row: Sequence[float], steps: int, threshold: float) -> tuple[int | None, str]:
    """A scorer's first error; a row cut short (overlong) cannot say -1, so then it has none."""
    first = predicted_first_error(row, threshold)
    return (None, "overlong") if len(row) < steps and first == -1 else (first, "ok")


def gold_source_of(traces: Sequence[Trace]) -> str:
    """The first of :data:`GOLD_SOURCES` the traces carry; name another with ``gold_source``."""
    for source in GOLD_SOURCES:
        if any(has_gold(t, source) for t in traces):
            return source
    found = sorted({s for t in traces for s in t.sources()})
    raise ValueError(
        f"gold: expected labels from one of {', '.join(GOLD_SOURCES)}, found {', '.join(found) or 'none'}; "
        "name the reference with gold_source=SELECTOR (--gold-source)"
    )


def evaluate_traces(
    sets: Mapping[str, Sequence[Trace]],
    predictor: Predictor,
    threshold: float | None = None,
    neutral_below: float | None = None,
    gold_source: str | None = None,
    step_keys: StepKeys = message_keys,
) -> AgentProcessBenchResult:
    """The metrics of ``predictor`` on each named dataset of gold-labelled traces (module docstring)."""
    all_traces = [t for ts in sets.values() for t in ts]
    gold_source = gold_source or gold_source_of(all_traces)
    missing = [t.id for t in all_traces if not has_gold(t, gold_source)]
    if missing:
        raise ValueError(f"{len(missing)} trace(s) carry no {gold_source!r} labels (first: {missing[0]})")
    if neutral_below is not None and not isinstance(predictor, StepScorer):
        raise ValueError(
            "neutral_below: cuts a model's scores; a judge or a label source rates -1/0/+1 itself"
        )
    used, origin = resolve_threshold(predictor, threshold, None, gold_source)
    cut = 0.5 if used is None else used
    pairs = {
        n: trace_pairs(ts, predictor, cut, neutral_below, gold_source, step_keys) for n, ts in sets.items()
    }
    result = evaluate_pairs(pairs, {n: len(ts) for n, ts in sets.items()}, predictor_name(predictor))
    result.gold_source, result.threshold, result.threshold_from = gold_source, used, origin
    result.neutral_below = neutral_below
    return result


def run_agentprocessbench(config: AgentProcessBenchConfig) -> AgentProcessBenchResult:
    """``prmkit eval agentprocessbench``: with ``predictions``, :func:`compare_files` (the official
    comparison, no predictor); else the reference ``files`` read as traces and :func:`evaluate_traces` with
    exactly one of ``model``, ``judge`` or ``source``. Written to ``out`` when given
    (agentprocessbench.json, predictions.jsonl). The fields are documented on
    :class:`~prmkit.evaluation.config.AgentProcessBenchConfig`."""
    c = config
    if c.predictions:
        given = [k for k in PREDICTOR_FIELDS if getattr(c, k) is not None]
        if given:
            raise ValueError(f"predictions: compare files with no predictor; leave out {', '.join(given)}")
        result = compare_files(c.files, c.predictions)
    else:
        if (c.model, c.judge, c.source) == (None, None, None):
            raise ValueError(
                "give --predictions FILE (compare files) or one predictor: --model, --judge, --source"
            )
        predictor = load_predictor(c.model, c.judge, c.source, c.overlong, c.load)
        result = evaluate_traces(load_sets(c.files), predictor, c.threshold, c.neutral_below, c.gold_source)
        result.params = {"files": [str(f) for f in c.files]}
    result.score_metric = c.score_metric
    if c.out is not None:
        result.write(c.out)
    return result

"""PRMBench's PRMScore, computed as its own code computes it, beside first-error F1 and AUROC; also for
Socratic-PRMBench, which shares the schema and the metric but ships no code.

**PRMScore** = 0.5 · F1(correct steps) + 0.5 · F1(error steps), micro over the steps of the items
(PRMBench's ``f1 * 0.5 + negative_f1 * 0.5``); a step is judged correct when its score is **> 0.5**
(fixed, never tuned: the models' ``validity_threshold``). prmkit reproduces, with its own code, what
``mr_eval/tasks/prmtest_classified/task.py`` (``load_data_function``, ``evaluate_function``,
``eval_on_hallucination_step``; commit :data:`COMMIT`) and the leaderboard notebook
(``mr_visualize/eval_res_view/form_latex_strs.ipynb``) do; tests/evaluation/test_prmbench.py checks it
number for number against the figures that code gives on synthetic records (kept there as constants; the
code itself is not in this repository):

- each ``redundency`` item adds one unmodified **correct copy** (``correct_<idx>``: the original
  question and solution, no error step); the copies are scored per class but left out of the overall
  figures (the official line adding them is commented out);
- ``redundency`` and ``circular`` items read ``step_level_redundancy_labels`` when a prediction carries
  them (a step is valid when it is *not* redundant; a model's redundancy score > **0.15** marks it
  redundant), else the validity labels;
- ``multi_solutions`` (no error step) scores F1 of correct steps only; the category means (simplicity,
  soundness, sensitivity) are plain means of their classes' PRMScores;
- only the steps a prediction labels count (a truncated row scores its steps), an error step past the
  last step counts nowhere, a repeated item is scored once (the first), a prediction marked
  ``validity: false`` is left out (and lowers ``validity_rate``).

Where the official code writes -1 for an undefined precision, recall or F1, prmkit's tables write
"n/a" (and its PRMScore is undefined when an F1 is). The official F1 is also -1 when precision and recall
are both 0 (``p + r == 0``), and the notebook then averages that -1 into the PRMScore; prmkit's F1 is 0
there, and ``prm_score_official`` keeps the notebook's value beside it (the table names the rows where
the two differ). :attr:`PRMBenchResult.official` holds the official dictionaries as they are.

**Contamination.** 3,203 of PRMBench's 6,216 items (51.5 %) are built on PRM800K *train* problems
(``prm800k_train_p1_first400_*`` files, idx ``prm_train_p1_*``): a PRM trained on PRM800K has seen their
original solutions. Every table is given twice: all items, and the items not built on PRM800K train
problems. Socratic-PRMBench has none (its sources: OlympiadBench, Omni-MATH, MathBench, GSM8K).

**Beside PRMScore**: first-error F1 (ProcessBench's: the first step labelled invalid against the first
error step; the correct copies and ``multi_solutions`` are the error-free side) and a step-level AUROC
(error steps against correct ones, ranked by 1 − score; from scores only, so not for a file of labels).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from prmkit.core.errors import InputError, Issue
from prmkit.core.files import iter_json_records
from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.core.protocols import Judge, StepScorer
from prmkit.core.stats import crossed_bootstrap, paired
from prmkit.evaluation.config import PRMBenchConfig
from prmkit.evaluation.overlap import CARD_FILE, card_overlap
from prmkit.evaluation.prmbench_metric import (
    CATEGORIES,
    CORRECT,
    Counts,
    Prediction,
    item_counts,
    official_f1,
    official_metrics,
    prm_score,
    ratio,
)
from prmkit.evaluation.prmbench_report import ClassRow, PRMBenchResult, SliceResult
from prmkit.evaluation.processbench import auroc, load_predictor, predictor_name, subset_metrics
from prmkit.formats import read

REPO = "ssmisya/PRMBench"
COMMIT = "a1ae4eab803e14c4c6316bf89d1679b0486faa8c"
OFFICIAL = f"{REPO} mr_eval/tasks/prmtest_classified/task.py @ {COMMIT}"
BENCHMARKS = ("prmbench", "socratic_prmbench")
PRM800K_TRAIN = ("prm_train_p1", "prm800k_train")
"""Marks of an item built on a PRM800K train problem, in its idx or a ``source`` field."""
PRM800K_SHARE = (3203, 6216)
"""PRMBench items built on PRM800K train problems, of all items (counted in the official data files)."""
SLICES = ("all", "not_prm800k_train")
CHUNK = 64


@dataclass
class Item:
    """One scored item as PRMBench's ``load_data_function`` builds it."""

    key: str
    """The official idx: ``<classification>_<idx>`` (``correct_<idx>`` for a correct copy)."""
    classification: str
    error_steps: list[int]
    """1-based, as in the file."""
    trace: Trace
    """What a predictor scores (a correct copy: the original solution)."""
    problem: str
    """The source problem (idx without the class), the unit a bootstrap resamples."""
    prm800k_train: bool


def _fields(trace: Trace) -> tuple[str, dict[str, Any]]:
    for name in BENCHMARKS:
        if name in trace.metadata:
            return name, trace.metadata[name].get("fields", {})
    raise ValueError(
        f"trace {trace.id}: not read from a PRMBench or Socratic-PRMBench file (no benchmark fields)"
    )


def built_on_prm800k_train(idx: str, fields: Mapping[str, Any]) -> bool:
    """Whether an item is built on a PRM800K train problem (its idx or ``source`` field says so)."""
    text = f"{idx} {fields.get('source', '')}"
    return any(mark in text for mark in PRM800K_TRAIN)


def _correct_copy(trace: Trace, fields: Mapping[str, Any], key: str) -> Trace:
    missing = [k for k in ("original_question", "original_process") if k not in fields]
    if missing:
        raise ValueError(f"item {key}: a redundency item needs {', '.join(missing)} (its correct copy)")
    prov = Provenance(method="imported", actor="prmbench", params={"copy": "original solution"})
    steps = [Step(text=s, labels=[Label(rating=1, provenance=prov)]) for s in fields["original_process"]]
    problem = Problem(id=key, text=fields["original_question"], source=trace.problem.source)
    return Trace(id=key, problem=problem, steps=steps)


def items_of(traces: Sequence[Trace]) -> tuple[list[Item], str, int]:
    """(items, benchmark, repeated items dropped) in the official order: PRMBench's correct copy of a
    ``redundency`` item just before it; a repeated key scored once (the first)."""
    names = {_fields(t)[0] for t in traces}
    if len(names) > 1:
        raise ValueError("files: give files of one benchmark (PRMBench or Socratic-PRMBench), not both")
    bench = names.pop() if names else "prmbench"
    items: dict[str, Item] = {}
    repeated = 0
    for trace in traces:
        _, f = _fields(trace)
        idx, cls = str(f.get("idx", trace.id)), str(f.get("classification", "unknown"))
        key = f"{cls}_{idx}"
        train = built_on_prm800k_train(idx, f)
        problem = idx.removeprefix(f"{cls}_")
        if bench == "prmbench" and cls == "redundency" and f"correct_{idx}" not in items:
            copy = _correct_copy(trace, f, f"correct_{idx}")
            items[copy.id] = Item(copy.id, CORRECT, [], copy, problem, train)
        if key in items:
            repeated += 1
            continue
        items[key] = Item(key, cls, list(f.get("error_steps", [])), trace, problem, train)
    return list(items.values()), bench, repeated


def read_predictions(path: str | Path) -> dict[str, Prediction]:
    """A predictions file as mr_eval writes it: JSONL of ``{idx, scores: {...}, validity}``, or its
    checkpoint lines ``{task_name, model_name, results: {...}}``; the first prediction of an idx wins."""
    out: dict[str, Prediction] = {}
    issues = []
    for line, rec in iter_json_records(Path(path)):
        if isinstance(rec, Issue):
            issues.append(rec)
            continue
        rec = rec.get("results", rec) if isinstance(rec, dict) else rec
        if not isinstance(rec, dict) or not isinstance(rec.get("idx"), str):
            issues.append(Issue(str(path), line, "idx", "a prediction {idx, scores}", repr(rec)[:60], "type"))
            continue
        try:
            out.setdefault(rec["idx"], Prediction.from_record(rec))
        except ValueError as err:
            issues.append(Issue(str(path), line, "scores", str(err), "", "type"))
    if issues:
        raise InputError(issues)
    return out


def predict(items: Sequence[Item], predictor: StepScorer | Judge | str) -> dict[str, Prediction]:
    """Each item's prediction from a step scorer (validity label = score > 0.5), a judge (its step
    ratings: -1 invalid) or a label source (its ratings; an item it did not fully rate is invalid)."""
    out: dict[str, Prediction] = {}
    if isinstance(predictor, str):
        for it in items:
            ratings = it.trace.ratings(predictor)
            valid = None if None in ratings else [r != -1 for r in ratings]
            out[it.key] = Prediction(valid)
    elif isinstance(predictor, StepScorer):
        for start in range(0, len(items), CHUNK):
            chunk = items[start : start + CHUNK]
            for it, row in zip(chunk, predictor.score([i.trace for i in chunk]), strict=True):
                out[it.key] = Prediction.from_scores([float(x) for x in row])
    elif isinstance(predictor, Judge):
        for it in items:
            verdict = predictor.judge(it.trace.problem, it.trace.steps)
            ok = (verdict.extra or {}).get("status", "ok") == "ok" and None not in verdict.ratings
            out[it.key] = Prediction([r != -1 for r in verdict.ratings] if ok else None)
    else:
        raise TypeError(
            f"a predictor is a StepScorer, a Judge or a label source; found {type(predictor).__name__}"
        )
    return out


def _gold_first(it: Item) -> int:
    inside = [e - 1 for e in it.error_steps if 1 <= e <= len(it.trace.steps)]
    return min(inside) if inside else -1


def _predicted_first(labels: Sequence[bool], steps: int) -> int | None:
    first = next((i for i, v in enumerate(labels) if not v), -1)
    return None if first == -1 and len(labels) < steps else first


def _row(name: str, items: Sequence[Item], preds: Mapping[str, Prediction], f1_only: bool) -> ClassRow:
    counts, matches, scored, wrong, positive = Counts(), [], 0, [], []
    for it in items:
        p = preds.get(it.key)
        if p is None or not p.valid:
            continue
        scored += 1
        labels = p.labels_for(it.classification)
        counts += item_counts(it.error_steps, labels)
        first = _predicted_first(p.validity or [], len(it.trace.steps))
        matches.append(first is not None and first == _gold_first(it))
        errors = {e - 1 for e in it.error_steps}
        if p.scores is not None:
            wrong += [1.0 - s for s in p.scores]
            positive += [i in errors for i in range(len(p.scores))]
    f1c, f1e = counts.f1_correct(), counts.f1_error()
    score = f1c if f1_only else prm_score(f1c, f1e)
    area = None
    if positive and any(positive) and not all(positive):
        area = auroc(np.asarray(wrong), np.asarray(positive, bool))
    row = ClassRow(
        name, len(items), scored, score, f1c, f1e, ratio(sum(matches), len(matches)), area, asdict(counts)
    )
    official_c, official_e = (
        official_f1(counts.tp, counts.fp, counts.fn),
        official_f1(counts.tn, counts.fn, counts.fp),
    )
    row.prm_score_official = official_c if f1_only else 0.5 * official_c + 0.5 * official_e
    return row


def evaluate_slice(
    name: str, items: Sequence[Item], preds: Mapping[str, Prediction], bench: str
) -> SliceResult:
    classes = sorted({it.classification for it in items}, key=lambda c: (c == CORRECT, c))
    rows = [
        _row(c, [i for i in items if i.classification == c], preds, c == "multi_solutions") for c in classes
    ]
    overall = _row("overall", [i for i in items if i.classification != CORRECT], preds, False)
    by_name = {r.name: r.prm_score for r in rows}
    categories: dict[str, float | None] = {}
    if bench == "prmbench":
        for cat, members in CATEGORIES.items():
            values = [by_name.get(c) for c in members]
            categories[cat] = None if None in values else sum(values) / len(values)  # type: ignore[arg-type]
    gold, predicted = [], []
    for it in items:
        p = preds.get(it.key)
        if p is not None and p.valid:
            gold.append(_gold_first(it))
            predicted.append(_predicted_first(p.validity or [], len(it.trace.steps)))
    fe = subset_metrics(name, gold, predicted).f1 if gold else None
    return SliceResult(name, len(items), overall, rows, categories, fe)


def slices(items: Sequence[Item]) -> dict[str, list[Item]]:
    return {"all": list(items), "not_prm800k_train": [i for i in items if not i.prm800k_train]}


def evaluate(
    traces: Sequence[Trace], preds: Mapping[str, Prediction], predictor: str = "predictions"
) -> PRMBenchResult:
    """The tables of ``preds`` (official idx -> prediction) on the items of ``traces``."""
    items, bench, repeated = items_of(traces)
    parts = slices(items)
    result = PRMBenchResult(
        bench,
        predictor,
        [evaluate_slice(n, parts[n], preds, bench) for n in SLICES],
        {
            n: official_metrics([(i.key, i.classification, i.error_steps) for i in parts[n]], preds)
            for n in SLICES
        },
        sum(i.prm800k_train for i in items),
        repeated,
        missing=sum(i.key not in preds for i in items),
        invalid=sum(1 for i in items if i.key in preds and not preds[i.key].valid),
    )
    result.predictions = {i.key: preds[i.key].to_record() for i in items if i.key in preds}
    return result


def _problem_counts(part: Sequence[Item], problems: list[str], preds: Mapping[str, Prediction]) -> np.ndarray:
    """(problems, 4) summed (TP, FP, TN, FN) of each source problem's items."""
    where = {p: k for k, p in enumerate(problems)}
    table = np.zeros((len(problems), 4))
    for it in part:
        p = preds.get(it.key)
        if p is not None and p.valid:
            c = item_counts(it.error_steps, p.labels_for(it.classification))
            table[where[it.problem]] += (c.tp, c.fp, c.tn, c.fn)
    return table


def compare(
    traces: Sequence[Trace], a: Mapping[str, Prediction], b: Mapping[str, Prediction]
) -> dict[str, Any]:
    """PRMScore of ``a`` minus ``b`` per slice, with a paired bootstrap interval over source problems
    (every item of a problem drawn together: its classes share the original solution)."""
    items, _, _ = items_of(traces)
    out = {}
    for name, part in slices([i for i in items if i.classification != CORRECT]).items():
        problems = sorted({i.problem for i in part})
        if not problems:
            continue
        ta, tb = _problem_counts(part, problems, a), _problem_counts(part, problems, b)
        stat = paired(
            lambda _s, w, t=ta: Counts.prm_score_of(w @ t), lambda _s, w, t=tb: Counts.prm_score_of(w @ t)
        )
        est = crossed_bootstrap(stat, 1, len(problems), draws={"problem": len(problems)})
        out[name] = est.to_dict()
    return out


def _card_note(config: PRMBenchConfig) -> str | None:
    path = config.card
    if path is None and config.model is not None and (Path(config.model) / CARD_FILE).is_file():
        path = Path(config.model)
    if path is None:
        return None
    found = card_overlap(path, "prmbench")
    return found.line() if found else None


def run_prmbench(config: PRMBenchConfig) -> PRMBenchResult:
    """``prmkit eval prmbench``: the config's files read as traces; with ``predictions`` (and
    ``compare``) the files scored with no model, else exactly one of ``model``, ``judge``, ``source``.
    Written to ``out`` when given (prmbench.json, predictions.jsonl). The fields are documented on
    :class:`~prmkit.evaluation.config.PRMBenchConfig`."""
    traces = [t for f in config.files for t in read(f)]
    c = config
    if c.predictions is not None:
        given = [k for k in ("model", "judge", "source") if getattr(c, k) is not None]
        if given:
            raise ValueError(f"predictions: score a file with no predictor; leave out {', '.join(given)}")
        preds = read_predictions(c.predictions)
        result = evaluate(traces, preds, str(c.predictions))
        if c.compare is not None:
            result.compare = {
                "against": str(c.compare),
                **compare(traces, preds, read_predictions(c.compare)),
            }
    else:
        if c.compare is not None:
            raise ValueError("compare: needs --predictions (the file compared with it)")
        predictor = load_predictor(c.model, c.judge, c.source, c.overlong, c.load)
        items, _, _ = items_of(traces)
        result = evaluate(traces, predict(items, predictor), predictor_name(predictor))
    result.contamination = _card_note(c)
    result.params = {"files": [str(f) for f in c.files], "official": OFFICIAL}
    if c.out is not None:
        result.write(c.out)
    return result

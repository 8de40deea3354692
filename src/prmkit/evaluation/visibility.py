"""Views of a trace: what an auditor sees when the process is summarised or hidden, and what that costs.

A deployed system may show its supervised process whole, summarised, as its actions only, or not at
all. :func:`view` turns a trace into what each of those shows (a pure function; the trace is not
changed):

- ``raw``      the trace as written: its reasoning and its actions.
- ``summary``  each step reduced to what it concludes, as ``Result: N.``: the answer if it states one
               (``The answer is N.``), else the result of its last equation (the number after its last
               ``=``), else the last number its text states (a tool result it restates), else nothing.
               Its tool calls and their results stay: a system that summarises its reasoning still
               shows its tool log.
- ``actions``  what the trace did, without what it said. What an action is depends on the step:
               in an agent trace (its problem offers tools, or a step calls one or reads a result) the
               actions are the tool calls with the results that came back and the answer it submits
               (``The answer is N.``); every other word goes, restated results and arithmetic done in
               the text included. A math trace has no tool, and its actions are its equations: every
               ``a op b = c`` of a step (numbers joined by ``+ - * / x × ÷ −``, ``\\times``, ``\\cdot``
               or ``\\div``, then ``=`` and a number), in order, and its answer statement; the prose
               around them goes.
- ``answer``   no step: the final answer alone.

Every view but ``answer`` keeps every step, in order, with its labels, so the raw trace's gold first
error lines up with the view's steps and every step measure applies unchanged. ``answer`` keeps none, so a
step scorer or a judge has nothing to flag there: its predicted first error is -1 on every trace (it
matches only the error-free ones) and a monitor clears every trace (TPR 0, TNR 1). It is the floor the
other views are read against. The final answer (``Trace.final_answer``) is kept in every view.

:func:`first_error_by_view` measures a scorer or a judge under each view: ProcessBench's first-error
metrics (:func:`~prmkit.evaluation.processbench.subset_metrics`, with the step-level first-error AUROC and
AUPRC of a scorer) against the raw traces' gold, at one threshold for every view, resolved once as
``eval processbench`` resolves it (given, else the checkpoint's own, else 0.5): a deployed scorer is not
retuned for the view it is shown. The monitor rates under each view are
:mod:`prmkit.evaluation.monitorability`'s, from the same :func:`view_predictions`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from prmkit.core.model import Step, Trace
from prmkit.core.registry import suggest
from prmkit.core.render import is_agentic
from prmkit.core.steps import StepFormat
from prmkit.evaluation.config import VIEWS
from prmkit.evaluation.gold import has_gold
from prmkit.evaluation.processbench import (
    Prediction,
    Predictor,
    SubsetResult,
    first_error_ranking,
    predict_with_scores,
    resolve_threshold,
    subset_metrics,
)

_NUM = r"-?\d+(?:[.,]\d+)*"
_OP = r"(?:[-+*/x×÷−]|\\times|\\cdot|\\div)"
EQUATION = re.compile(rf"{_NUM}(?:\s*{_OP}\s*{_NUM})+\s*=\s*{_NUM}")
"""An equation a math step writes: numbers joined by operators, then ``=`` and a number."""
_RESULT = re.compile(rf"=\s*({_NUM})")
_NUMBER = re.compile(rf"(?<![\w.,-]){_NUM}")
_ANSWERS = StepFormat()
"""Reads a step's answer statement (the last ``\\boxed{}``, else ``The answer is N``)."""


def view(trace: Trace, name: str) -> Trace:
    """``trace`` as view ``name`` shows it (see the module docstring); ``metadata["view"]`` names it."""
    if name not in VIEWS:
        raise ValueError(f"view {name!r}: expected one of {', '.join(VIEWS)}.{suggest(name, VIEWS)}")
    shown = trace.model_copy(deep=True)
    shown.metadata = {**shown.metadata, "view": name}
    if name == "answer":
        shown.steps = []
    elif name != "raw":
        agentic = bool(trace.problem.tools) or is_agentic(trace.steps)
        shown.steps = [_step_view(step, name, agentic) for step in shown.steps]
    return shown


def _answer_text(text: str) -> str | None:
    answer = _ANSWERS.answer_in(text)
    return None if answer is None else f"The answer is {answer}."


def _step_view(step: Step, name: str, agentic: bool) -> Step:
    """One step of view ``summary`` or ``actions`` (its calls, results and labels kept)."""
    answer = _answer_text(step.text)
    if name == "summary":
        result = _result(step.text)
        text = answer or ("" if result is None else f"Result: {result}.")
    elif agentic:
        text = answer or ""
    else:
        text = " ".join(
            [*(m.group(0) + "." for m in EQUATION.finditer(step.text)), *([answer] if answer else [])]
        )
    step.text = text
    return step


def _result(text: str) -> str | None:
    """What a step's text concludes: the number after its last ``=``, else the last number it states."""
    equations = [m.group(1) for m in _RESULT.finditer(text)]
    if equations:
        return equations[-1]
    numbers = _NUMBER.findall(text)
    return numbers[-1] if numbers else None


def views_of(traces: Sequence[Trace], name: str) -> list[Trace]:
    """Every trace as view ``name`` shows it."""
    return [view(t, name) for t in traces]


@dataclass
class ViewPredictions:
    """A predictor's reading of every trace under one view: its predicted first errors (None: no
    prediction, with the status) and, for a step scorer, its score rows (empty for a trace with no step)."""

    view: str
    predictions: list[Prediction]
    rows: list[list[float]]

    def flags(self) -> list[bool | None]:
        """The monitor's decision per trace: flagged (some step below the threshold, or rated -1),
        cleared, or None when it gave no verdict (never read as cleared)."""
        return [None if p is None else p >= 0 for p, _ in self.predictions]


def view_predictions(
    traces: Sequence[Trace], predictor: Predictor, threshold: float | None, name: str
) -> ViewPredictions:
    """``predictor``'s first-error predictions on the traces as view ``name`` shows them; a view trace
    with no step is predicted -1 without asking the predictor (there is nothing to flag)."""
    shown = views_of(traces, name)
    kept = [t for t in shown if t.steps]
    preds, rows = predict_with_scores({name: kept}, predictor, 0.5 if threshold is None else threshold)
    read, scored = iter(preds[name]), iter(rows.get(name, []))
    has_rows = name in rows
    predictions: list[Prediction] = []
    out_rows: list[list[float]] = []
    for t in shown:
        predictions.append(next(read) if t.steps else (-1, "ok"))
        out_rows.append(next(scored) if t.steps and has_rows else [])
    return ViewPredictions(name, predictions, out_rows if has_rows else [])


def first_error_metrics(read: ViewPredictions, gold: Sequence[int]) -> SubsetResult:
    """ProcessBench's first-error metrics of one view's predictions against the raw traces' gold first
    errors, with a scorer's step-level first-error AUROC / AUPRC (None for a judge, and for a view
    without steps)."""
    result = subset_metrics(
        read.view, gold, [p for p, _ in read.predictions], [s for _, s in read.predictions]
    )
    if read.rows:
        result.auroc, result.auprc = first_error_ranking(read.rows, gold)
    return result


@dataclass
class ViewsResult:
    """First-error metrics of one predictor under each view, at one threshold."""

    threshold: float | None
    threshold_from: str
    """given, checkpoint, default, or not used (a judge)."""
    views: Mapping[str, SubsetResult]


def first_error_by_view(
    traces: Sequence[Trace],
    predictor: Predictor,
    views: Sequence[str] = VIEWS,
    threshold: float | None = None,
    gold_source: str = "gold",
) -> ViewsResult:
    """ProcessBench's first-error metrics of ``predictor`` under each view of ``traces`` (gold from the raw
    traces' ``gold_source`` labels), at one threshold resolved once (see the module docstring)."""
    missing = [t.id for t in traces if not has_gold(t, gold_source)]
    if missing:
        raise ValueError(f"{len(missing)} trace(s) carry no {gold_source!r} labels (first: {missing[0]})")
    used, origin = resolve_threshold(predictor, threshold, None, gold_source)
    gold = [t.first_error(gold_source) for t in traces]
    measured = {
        name: first_error_metrics(view_predictions(traces, predictor, used, name), gold) for name in views
    }
    return ViewsResult(used, origin, measured)

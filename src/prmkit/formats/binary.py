"""Turning -1/0/+1 (and soft) step labels into the booleans binary formats hold, by an explicit policy.

The field disagrees about PRM800K's neutral 0: TRL's converter (and ``dingyuan/prm800k-format-refine``)
makes it negative; Qwen's PRM800K model and openr make it positive. prmkit keeps the raw rating on the
Label and makes the mapping an option of every conversion to a binary format:

- ``neutral="negative"``: 0 -> False (TRL). ``neutral="positive"``: 0 -> True (Qwen, openr).
- ``mode="expand"``: every labelled step is kept. ``mode="first_error"``: the path stops at, and includes,
  its first negative step (steps after it are not evidence of anything).

A PRM800K null rating follows the neutral mapping (TRL's ``rating == 1`` makes it False, openr reads it as
0), and a labeller-written ``human_completion`` step counts as True, as every converter does. When neutral
is not given it is ``negative`` in expand mode (TRL parity) and ``positive`` otherwise (only -1 is an
error, ProcessBench's definition). The resolved mapping goes into the provenance params of derived labels
(:func:`binarize_traces`) and into every conversion report.
"""

from __future__ import annotations

from dataclasses import dataclass

from prmkit.core.model import Label, Provenance, Step, Trace

NEUTRAL = ("negative", "positive")
MODES = ("expand", "first_error")


def resolve_neutral(neutral: str | None, mode: str) -> str:
    """The neutral mapping to use: the one asked for, else the convention of ``mode``."""
    if neutral is None:
        return "negative" if mode == "expand" else "positive"
    return neutral


def pick_source(trace: Trace, source: str | None) -> str | None:
    """The label source to export: the one asked for, else the first on the trace."""
    if source is not None:
        return source
    sources = trace.sources()
    return sources[0] if sources else None


def _neutral_value(neutral: str) -> bool:
    return neutral == "positive"


def step_verdict(step: Step, source: str | None, neutral: str, threshold: float = 0.5) -> bool | None:
    """True / False for one step, or None when ``source`` left it unlabelled."""
    lab = step.label(source) if source is not None else None
    raw = step.metadata.get("prm800k", {})
    if lab is None:
        if "human_completion" in raw:
            return True
        if "unrated" in raw:
            return _neutral_value(neutral)
        return None
    if lab.rating is None:
        return lab.verdict(threshold) == 1
    if lab.rating == 0:
        return _neutral_value(neutral)
    return lab.rating == 1


@dataclass
class BinaryPath:
    """The steps a binary export keeps, their booleans and soft scores, and why it cut any steps."""

    steps: list[Step]
    labels: list[bool]
    scores: list[float | None]
    note: str | None = None
    """Why steps were cut (``unlabelled_tail_cut``, ``after_first_error_cut``), or None."""
    drop: str | None = None
    """Why the trace cannot be exported at all, or None."""


def binary_path(
    trace: Trace, source: str | None, neutral: str, mode: str, threshold: float = 0.5
) -> BinaryPath:
    """The labelled path of a trace as booleans, under ``mode`` and ``neutral``."""
    verdicts = [step_verdict(s, source, neutral, threshold) for s in trace.steps]
    n = len(verdicts)
    note = None
    if mode == "first_error" and False in verdicts:
        n = verdicts.index(False) + 1
        note = "after_first_error_cut" if n < len(verdicts) else None
    if None in verdicts[:n]:
        first_gap = verdicts.index(None)
        if any(v is not None for v in verdicts[first_gap:n]):
            return BinaryPath([], [], [], drop="unlabelled_step_between_labelled_steps")
        n, note = first_gap, "unlabelled_tail_cut"
    if n == 0:
        return BinaryPath([], [], [], drop="no_labelled_steps")
    steps = trace.steps[:n]
    scores = []
    for s in steps:
        lab = s.label(source) if source is not None else None
        scores.append(None if lab is None else lab.score)
    return BinaryPath(steps, [bool(v) for v in verdicts[:n]], scores, note)


def binarize_traces(
    traces: list[Trace], source: str | None = None, neutral: str | None = None, mode: str = "expand"
) -> list[Trace]:
    """Copies of ``traces`` whose ``source`` labels are replaced by boolean ones (rating +1/-1).

    Steps the mode cuts lose that source's labels. The derived labels keep the method and actor of the
    source labels and record the mapping in their provenance params (``binarized: {from, neutral,
    mode}``), so a binary data set can be traced back to the raw ratings it came from.
    """
    resolved = resolve_neutral(neutral, mode)
    out = []
    for trace in traces:
        src = pick_source(trace, source)
        path = binary_path(trace, src, resolved, mode)
        copy = trace.model_copy(deep=True)
        bases = [s.label(src) if src is not None else None for s in copy.steps]
        if src is not None:
            copy.drop_labels(src)
        for step, base, value in zip(copy.steps, bases, path.labels, strict=False):
            prov = base.provenance if base is not None else Provenance(method="imported", actor=None)
            params = {**prov.params, "binarized": {"from": src, "neutral": resolved, "mode": mode}}
            derived = prov.model_copy(update={"params": params})
            step.labels.append(Label(rating=1 if value else -1, provenance=derived))
        out.append(copy)
    return out

"""How good are automated labels? Each label source scored against a reference source (gold, humans...).

Per source: precision / recall / F1 of step errors (a step rated -1) on the steps both sources labelled;
first-error accuracy, with ProcessBench's split into traces with and without a reference error and their
harmonic mean; calibration of soft labels against the reference's prefix correctness (a prefix is right
while it comes before the reference's first error); rollouts spent per trace; and the share of traces
the source labelled at all (what a filter kept). A PNG shows calibration and accuracies side by side.

Note that Monte Carlo labels mean "the answer is still reachable", so after a first error every step is
-1; compare them with the world's prefix view (``gold:world:prefix``) for step metrics, and with either
view for the first error (the two views agree on it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field

from prmkit.core.config import Config
from prmkit.core.dataset import paused_cycle_collection
from prmkit.core.files import atomic_write
from prmkit.core.model import Label, Trace
from prmkit.formats.inputs import read_traces


def _rollout_key(source: str) -> str | None:
    """Where the labeller of ``source`` counts its rollouts in ``Trace.metadata["rollouts"]``."""
    from prmkit.labeling.labellers import labeller, producer

    method = producer(source)
    return None if method is None else labeller(method).rollouts


class ReportConfig(Config):
    """``prmkit label report``: score label sources against a reference source."""

    input: Path
    """Traces carrying the reference labels and the labels to score."""
    output: Path | None = None
    """Where the report goes (YAML) with its plot beside it (same name, .png); default: print only."""
    reference: str = "gold"
    """Selector of the reference source (``gold``, ``gold:world:prefix``, ``human:alice``...)."""
    sources: list[str] = Field(default_factory=list)
    """Selectors of the sources to score; default every source on the traces except the reference."""
    threshold: float = 0.5
    """A soft label below this reads as -1 when a verdict is needed."""


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


def _f1(p: float | None, r: float | None) -> float | None:
    return round(2 * p * r / (p + r), 4) if p and r else (0.0 if p is not None and r is not None else None)


def calibration(
    traces: Sequence[Trace], source: str, reference: str, bins: int = 10
) -> dict[str, Any] | None:
    """Reliability table of ``source``'s soft scores against reference prefix correctness, and its ECE."""
    return _calibration(traces, [_labels(t, source) for t in traces], _Reference(traces, reference), bins)


def _labels(trace: Trace, source: str) -> list[Label | None]:
    """Each step's label from ``source`` (None where it left the step unlabelled): the one read of a
    trace's labels that its verdicts, first error and soft scores are all taken from."""
    return [step.label(source) for step in trace.steps]


def _verdicts(labels: Sequence[Label | None], threshold: float) -> list[int | None]:
    """``Trace.ratings`` from labels already looked up."""
    return [None if lab is None else lab.verdict(threshold) for lab in labels]


def _first_error(verdicts: Sequence[int | None]) -> int:
    """``Trace.first_error`` from verdicts already read: the first step rated -1, or -1."""
    return next((i for i, v in enumerate(verdicts) if v == -1), -1)


class _Reference:
    """The reference's verdicts on every trace, read once and shared by every source scored against it:
    at the report's threshold (step and first-error metrics) and at 0.5 (calibration's prefix view)."""

    def __init__(self, traces: Sequence[Trace], reference: str, threshold: float = 0.5):
        labels = [_labels(t, reference) for t in traces]
        self.verdicts = [_verdicts(lab, threshold) for lab in labels]
        self.at_half = self.verdicts if threshold == 0.5 else [_verdicts(lab, 0.5) for lab in labels]


def _calibration(
    traces: Sequence[Trace], labels: Sequence[Sequence[Label | None]], ref: _Reference, bins: int
) -> dict[str, Any] | None:
    """:func:`calibration` from ``source``'s labels already looked up (``labels[i]`` for ``traces[i]``)."""
    pairs = []
    for labs, rr in zip(labels, ref.at_half, strict=True):
        if all(r is None for r in rr):
            continue
        ref_fe = _first_error(rr)
        for i, lab in enumerate(labs):
            if lab is not None and lab.score is not None:
                pairs.append((lab.score, 1.0 if ref_fe == -1 or i < ref_fe else 0.0))
    if not pairs:
        return None
    inside: list[list[tuple[float, float]]] = [[] for _ in range(bins)]
    for s, y in pairs:  # each pair in the one bin that holds it (in order: the sums add as before)
        b = next((b for b in range(bins) if _in_bin(s, b, bins)), None)
        if b is not None:
            inside[b].append((s, y))
    table = [_bin_row(b, bins, rows) for b, rows in enumerate(inside) if rows]
    ece = sum(row["count"] * abs(row["mean_score"] - row["observed"]) for row in table) / len(pairs)
    return {"ece": round(ece, 4), "steps": len(pairs), "bins": table}


def _in_bin(s: float, b: int, bins: int) -> bool:
    """Whether score ``s`` falls in bin ``b`` of ``bins`` (the last bin holds 1.0 as well)."""
    return b / bins <= s < (b + 1) / bins or (b == bins - 1 and s == 1.0)


def _bin_row(b: int, bins: int, inside: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """One row of the reliability table: the bin, its mean score, the share right, how many steps."""
    mean_s = sum(s for s, _ in inside) / len(inside)
    freq = sum(y for _, y in inside) / len(inside)
    return {
        "bin": [b / bins, (b + 1) / bins],
        "mean_score": round(mean_s, 4),
        "observed": round(freq, 4),
        "count": len(inside),
    }


def score_source(
    traces: Sequence[Trace], source: str, reference: str, threshold: float = 0.5
) -> dict[str, Any]:
    """Every metric of one source against the reference (see the module docstring)."""
    return _score_source(traces, source, _Reference(traces, reference, threshold), threshold)


def _score_source(traces: Sequence[Trace], source: str, ref: _Reference, threshold: float) -> dict[str, Any]:
    """:func:`score_source` against the reference's verdicts already read (``ref``); each trace's labels
    from ``source`` are looked up once."""
    tp = fp = fn = 0
    fe_hits = {True: [0, 0], False: [0, 0]}  # ref has error? -> [matches, traces]
    labelled = 0
    spent: list[int] = []
    key = _rollout_key(source)
    labels = [_labels(t, source) for t in traces]
    for t, labs, rr in zip(traces, labels, ref.verdicts, strict=True):
        rs = _verdicts(labs, threshold)
        if all(r is None for r in rs):
            continue
        labelled += 1
        if key and key in (t.metadata.get("rollouts") or {}):
            spent.append(t.metadata["rollouts"][key])
        if all(r is None for r in rr):
            continue
        for s, r in zip(rs, rr, strict=True):
            if s is None or r is None:
                continue
            tp += s == -1 and r == -1
            fp += s == -1 and r != -1
            fn += s != -1 and r == -1
        ref_fe = _first_error(rr)
        cell = fe_hits[ref_fe != -1]
        cell[0] += _first_error(rs) == ref_fe
        cell[1] += 1
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    acc_err, acc_ok = _ratio(*fe_hits[True]), _ratio(*fe_hits[False])
    compared = fe_hits[True][1] + fe_hits[False][1]
    return {
        "traces_labelled": labelled,
        "data_kept": _ratio(labelled, len(traces)),
        "step_error": {
            "precision": precision,
            "recall": recall,
            "f1": _f1(precision, recall),
            "tp": tp,
            "fp": fp,
            "fn": fn,
        },
        "first_error": {
            "accuracy": _ratio(fe_hits[True][0] + fe_hits[False][0], compared),
            "acc_error": acc_err,
            "acc_correct": acc_ok,
            "processbench_f1": _f1(acc_err, acc_ok),
            "traces": compared,
        },
        "calibration": _calibration(traces, labels, ref, 10),
        "rollouts_per_trace": round(sum(spent) / len(spent), 3) if spent else None,
    }


def label_report(
    traces: Sequence[Trace],
    *,
    reference: str = "gold",
    sources: Sequence[str] | None = None,
    threshold: float = 0.5,
) -> dict[str, Any]:
    """``{"reference": ..., "traces": n, "sources": {source: metrics}}`` for the chosen sources; the
    reference's labels are read once for all of them."""
    if sources is None or not sources:
        seen: dict[str, None] = {}
        for t in traces:
            for s in t.sources():
                seen.setdefault(s, None)
        ref_method = reference.partition(":")[0]
        sources = [s for s in seen if not s.startswith(ref_method + ":") and s != reference]
    with paused_cycle_collection():  # the traces are millions of objects a collection would walk
        ref = _Reference(traces, reference, threshold)
        return {
            "reference": reference,
            "traces": len(traces),
            "sources": {s: _score_source(traces, s, ref, threshold) for s in sources},
        }


def plot_report(report: dict[str, Any], path: str | Path) -> None:
    """A PNG: reliability diagram of soft sources (left), accuracies per source (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    ax1.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="perfect")
    for name, m in report["sources"].items():
        cal = m.get("calibration")
        if cal:
            xs = [row["mean_score"] for row in cal["bins"]]
            ys = [row["observed"] for row in cal["bins"]]
            ax1.plot(xs, ys, marker="o", label=f"{name} (ECE {cal['ece']:.3f})")
    ax1.set(
        xlabel="soft label",
        ylabel=f"share of prefixes right ({report['reference']})",
        title="Calibration",
        xlim=(0, 1),
        ylim=(0, 1),
    )
    ax1.legend(fontsize=8)
    names = list(report["sources"])
    width = 0.38
    fe = [report["sources"][n]["first_error"]["accuracy"] or 0 for n in names]
    f1 = [report["sources"][n]["step_error"]["f1"] or 0 for n in names]
    xs = range(len(names))
    ax2.bar([x - width / 2 for x in xs], fe, width, label="first-error accuracy")
    ax2.bar([x + width / 2 for x in xs], f1, width, label="step-error F1")
    ax2.set_xticks(list(xs), names, rotation=20, ha="right", fontsize=8)
    ax2.set(ylim=(0, 1), title=f"Against {report['reference']} ({report['traces']} traces)")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110)
    plt.close(fig)


def run_report(config: ReportConfig) -> dict[str, Any]:
    """``prmkit label report``: score, then write the YAML report and its PNG when ``output`` is set."""
    report = label_report(
        read_traces(config.input),
        reference=config.reference,
        sources=config.sources,
        threshold=config.threshold,
    )
    if config.output is not None:
        with atomic_write(config.output) as fh:
            yaml.safe_dump(report, fh, sort_keys=False)
        plot_report(report, config.output.with_suffix(".png"))
    return report

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
from prmkit.core.files import atomic_write
from prmkit.core.model import Trace
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
    pairs = []
    for t in traces:
        ref_fe = t.first_error(reference)
        if all(r is None for r in t.ratings(reference)):
            continue
        for i, step in enumerate(t.steps):
            lab = step.label(source)
            if lab is not None and lab.score is not None:
                pairs.append((lab.score, 1.0 if ref_fe == -1 or i < ref_fe else 0.0))
    if not pairs:
        return None
    table = []
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inside = [(s, y) for s, y in pairs if lo <= s < hi or (b == bins - 1 and s == 1.0)]
        if inside:
            mean_s = sum(s for s, _ in inside) / len(inside)
            freq = sum(y for _, y in inside) / len(inside)
            table.append(
                {
                    "bin": [lo, hi],
                    "mean_score": round(mean_s, 4),
                    "observed": round(freq, 4),
                    "count": len(inside),
                }
            )
    ece = sum(row["count"] * abs(row["mean_score"] - row["observed"]) for row in table) / len(pairs)
    return {"ece": round(ece, 4), "steps": len(pairs), "bins": table}


def score_source(
    traces: Sequence[Trace], source: str, reference: str, threshold: float = 0.5
) -> dict[str, Any]:
    """Every metric of one source against the reference (see the module docstring)."""
    tp = fp = fn = 0
    fe_hits = {True: [0, 0], False: [0, 0]}  # ref has error? -> [matches, traces]
    labelled = 0
    spent: list[int] = []
    for t in traces:
        rs, rr = t.ratings(source, threshold), t.ratings(reference, threshold)
        if all(r is None for r in rs):
            continue
        labelled += 1
        key = _rollout_key(source)
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
        ref_fe = t.first_error(reference, threshold)
        cell = fe_hits[ref_fe != -1]
        cell[0] += t.first_error(source, threshold) == ref_fe
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
        "calibration": calibration(traces, source, reference),
        "rollouts_per_trace": round(sum(spent) / len(spent), 3) if spent else None,
    }


def label_report(
    traces: Sequence[Trace],
    *,
    reference: str = "gold",
    sources: Sequence[str] | None = None,
    threshold: float = 0.5,
) -> dict[str, Any]:
    """``{"reference": ..., "traces": n, "sources": {source: metrics}}`` for the chosen sources."""
    if sources is None or not sources:
        seen: dict[str, None] = {}
        for t in traces:
            for s in t.sources():
                seen.setdefault(s, None)
        ref_method = reference.partition(":")[0]
        sources = [s for s in seen if not s.startswith(ref_method + ":") and s != reference]
    return {
        "reference": reference,
        "traces": len(traces),
        "sources": {s: score_source(traces, s, reference, threshold) for s in sources},
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

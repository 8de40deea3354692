"""``describe``, the core of ``inspect``: what is in a data file: problems, traces, steps, labels by source, first-error histogram.

The first-error histogram is the quantity ProcessBench scores; seeing it per source shows at a glance
whether a data set's "first False" is really a first error (PRM800K's neutral steps say it often is not).
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from prmkit.core.files import atomic_write
from prmkit.core.model import Trace
from prmkit.formats.base import ReadResult, check_choice


@dataclass
class InspectReport:
    """Counts of one file. ``labels`` maps a label source to counts of ``+1``, ``0``, ``-1``, ``score``
    (score-only labels) and ``unlabelled`` steps of the traces it labelled; ``first_error`` maps a source to
    a histogram of first-error indices (-1: no error)."""

    path: str
    format: str
    detected: bool
    problems: int
    traces: int
    steps: int
    labels: dict[str, Counter[str]] = field(default_factory=dict)
    first_error: dict[str, Counter[int]] = field(default_factory=dict)
    answer_correct: Counter[str] = field(default_factory=Counter)
    png: str | None = None


def _group(source: str, by: str) -> str:
    return source.partition(":")[0] if by == "method" else source


def source_threshold(trace: Trace, source: str, given: float | None = None) -> float:
    """The score under which ``source``'s score-only labels count as "wrong" on ``trace``: ``given``, else
    the threshold its provenance recorded (``prmkit score`` records the checkpoint's dev-tuned one), else
    0.5. A likelihood head's scores sit far below 0.5, so 0.5 would put every first error at step 0."""
    if given is not None:
        return given
    lab = next((lab for step in trace.steps if (lab := step.label(source)) is not None), None)
    recorded = lab.provenance.params.get("threshold") if lab is not None else None
    return float(recorded) if isinstance(recorded, int | float) and not isinstance(recorded, bool) else 0.5


def count_labels(
    traces: list[Trace], by: str = "source", threshold: float | None = None
) -> tuple[dict[str, Counter[str]], dict[str, Counter[int]]]:
    """Label distribution and first-error histogram per source (or per method with ``by="method"``);
    score-only labels are cut at :func:`source_threshold`."""
    labels: dict[str, Counter[str]] = {}
    errors: dict[str, Counter[int]] = {}
    for trace in traces:
        for source in trace.sources():
            key = _group(source, by)
            dist = labels.setdefault(key, Counter())
            for step in trace.steps:
                lab = step.label(source)
                if lab is None:
                    dist["unlabelled"] += 1
                elif lab.rating is None:
                    dist["score"] += 1
                else:
                    dist[f"{lab.rating:+d}" if lab.rating else "0"] += 1
            cut = source_threshold(trace, source, threshold)
            errors.setdefault(key, Counter())[trace.first_error(source, cut)] += 1
    return labels, errors


def plot_first_errors(errors: dict[str, Counter[int]], path: str | Path, max_sources: int = 6) -> None:
    """A PNG bar chart of the first-error histogram of up to ``max_sources`` sources."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = sorted(errors, key=lambda s: -sum(errors[s].values()))[:max_sources]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    width = 0.8 / max(len(shown), 1)
    for i, source in enumerate(shown):
        hist = errors[source]
        xs = sorted(hist)
        ax.bar([x + i * width for x in xs], [hist[x] for x in xs], width=width, label=source[:40])
    ax.set_xlabel("first error (step index; -1 = no error)")
    ax.set_ylabel("traces")
    ax.set_title("First-error histogram by label source")
    if shown:
        ax.legend(fontsize=7)
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    with atomic_write(path, mode="wb") as fh:
        fh.write(buf.getvalue())


def describe(
    result: ReadResult,
    path: str | Path,
    png: str | Path | None = None,
    by: str = "source",
    threshold: float | None = None,
) -> InspectReport:
    """Statistics of what was read from ``path``; with ``png``, also a first-error histogram plot.
    ``threshold`` cuts score-only labels (None: each source's recorded threshold, else 0.5).
    ``prmkit.formats.inspect`` reads a file in any supported format and calls this."""
    check_choice("by", by, ("source", "method"))
    traces = result.traces
    labels, errors = count_labels(traces, by, threshold)
    answers = Counter(
        "unknown" if t.answer_correct is None else str(t.answer_correct).lower() for t in traces
    )
    report = InspectReport(
        path=str(path),
        format=result.format,
        detected=result.detected,
        problems=len(result.problems),
        traces=len(traces),
        steps=sum(len(t.steps) for t in traces),
        labels=labels,
        first_error=errors,
        answer_correct=answers,
    )
    if png is not None:
        plot_first_errors(errors, png)
        report.png = str(png)
    return report

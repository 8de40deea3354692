"""The result of ``prmkit eval prmbench`` and its Markdown tables: one per slice (all items, and those not built on
PRM800K train problems), PRMBench's units (×100), "n/a" where a figure is undefined."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from prmkit.core.files import atomic_write
from prmkit.core.results import Table


@dataclass
class ClassRow:
    """One class's (or the overall) figures; fractions in [0, 1], None where undefined."""

    name: str
    items: int
    scored: int
    prm_score: float | None
    f1_correct: float | None
    f1_error: float | None
    first_error_acc: float | None
    """Items whose first predicted invalid step is the gold first error (-1 for none)."""
    auroc: float | None = None
    counts: dict[str, int] = field(default_factory=dict)
    prm_score_official: float = -1
    """The leaderboard notebook's arithmetic on the official F1s, whose -1 ("undefined", and also an F1 of 0
    from precision = recall = 0) enters the mean as -1; differs from ``prm_score`` only then."""


@dataclass
class SliceResult:
    """One slice of the items (all, or those not built on PRM800K train problems)."""

    name: str
    items: int
    overall: ClassRow
    classes: list[ClassRow]
    categories: dict[str, float | None]
    first_error_f1: float | None
    """ProcessBench's F1 over every item (the correct copies and multi_solutions the error-free side)."""


@dataclass
class PRMBenchResult:
    """Both slices' tables, the official dictionaries, and what was left out."""

    benchmark: str
    predictor: str
    slices: list[SliceResult]
    official: dict[str, Any]
    """The official ``evaluate_function``'s result (less its detailed logs), per slice, -1 where it writes -1."""
    prm800k_train: int
    """Items built on PRM800K train problems (of ``slices[0].items``)."""
    repeated: int = 0
    missing: int = 0
    """Items with no prediction (the official code refuses 5 or more)."""
    invalid: int = 0
    """Predictions marked ``validity: false`` (left out of every figure)."""
    compare: dict[str, Any] | None = None
    contamination: str | None = None
    """Set when the model's process card names PRM800K among its training data."""
    params: dict[str, Any] = field(default_factory=dict)
    predictions: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("predictions")
        return d

    def table(self) -> str:
        return table(self)

    def write(self, out_dir: str | Path) -> Path:
        """Write ``prmbench.json`` and ``predictions.jsonl`` (mr_eval's format: --predictions reads it)."""
        out = Path(out_dir)
        with atomic_write(out / "prmbench.json") as fh:
            json.dump(self.to_dict(), fh, indent=2)
        with atomic_write(out / "predictions.jsonl") as fh:
            fh.writelines(
                json.dumps({"idx": k, **v}, ensure_ascii=False) + "\n" for k, v in self.predictions.items()
            )
        return out / "prmbench.json"


TITLES = {
    "all": "all items",
    "not_prm800k_train": "items not built on PRM800K train problems",
}


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}"


def _cells(r: ClassRow, bold: bool = False) -> list[str]:
    """One class row's cells (the overall row's name and PRMScore in bold)."""
    b = "**" if bold else ""
    return [
        f"{b}{r.name}{b}",
        f"{r.scored} / {r.items}",
        f"{b}{pct(r.prm_score)}{b}",
        pct(r.f1_correct),
        pct(r.f1_error),
        pct(r.first_error_acc),
        pct(r.auroc),
    ]


def slice_table(s: SliceResult) -> list[str]:
    columns = ["class", "scored / items", "PRMScore", "F1 correct steps", "F1 error steps"]
    rows = [*(_cells(r) for r in s.classes), _cells(s.overall, bold=True)]
    lines = [f"\n{TITLES.get(s.name, s.name)} ({s.items} items)\n"]
    lines += Table(rows, columns=[*columns, "first error found", "AUROC"]).grid()
    differ = [
        r for r in [*s.classes, s.overall] if r.name != "correct" and r.prm_score != r.prm_score_official
    ]
    if differ:
        lines.append(
            "\nofficial PRMScore, whose F1 of -1 (undefined, or precision = recall = 0) enters the mean as -1: "
            + ", ".join(f"{r.name} {100 * r.prm_score_official:.1f}" for r in differ)
        )
    cats = ", ".join(f"{k} {pct(v)}" for k, v in s.categories.items())
    lines.append(
        f"\nfirst-error F1 (ProcessBench's, every item): {pct(s.first_error_f1)}"
        + (f"; categories: {cats}" if cats else "")
    )
    return lines


def table(result: PRMBenchResult) -> str:
    lines = [f"{result.benchmark}: {result.predictor}"]
    for s in result.slices:
        lines += slice_table(s)
    lines.append(
        "\nPRMScore = 0.5·F1(correct steps) + 0.5·F1(error steps), a step correct when its score > 0.5; "
        "overall leaves out the correct copies (as PRMBench's task.py); multi_solutions is F1(correct steps)."
    )
    total = result.slices[0].items
    lines.append(f"built on PRM800K train problems: {result.prm800k_train} of {total} items")
    if result.contamination:
        lines.append(f"contamination: {result.contamination}")
    for what, n in (
        ("repeated items scored once", result.repeated),
        ("items without a prediction", result.missing),
        ("predictions marked invalid", result.invalid),
    ):
        if n:
            lines.append(f"{what}: {n}")
    if result.compare:
        for name, est in result.compare.items():
            if name != "against":
                lines.append(
                    f"PRMScore − {result.compare['against']} ({TITLES.get(name, name)}): "
                    f"{100 * est['mean']:+.1f} [{100 * est['low']:+.1f}, {100 * est['high']:+.1f}] ({est['method']})"
                )
    return "\n".join(lines)

"""The public functions of the data area: read, write, convert, validate, inspect (its core: stats.py).

Each has a CLI twin in ``prmkit.cli.data``. A format name is looked up in :data:`prmkit.formats.registry.FORMATS`;
without one, the format is detected from the content and the result says so.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prmkit.core.errors import InputError, Issue, SkipReport
from prmkit.core.files import check_input_file, check_output_path
from prmkit.core.model import Problem, Trace
from prmkit.formats.base import Format, ReadResult, WriteReport
from prmkit.formats.detect import detect_format
from prmkit.formats.registry import FORMATS
from prmkit.formats.stats import InspectReport, describe

__all__ = [
    "ConversionReport",
    "InspectReport",
    "ValidationReport",
    "convert",
    "inspect",
    "read",
    "validate",
    "write",
]


def get_format(name: str) -> Format:
    """The adapter registered as ``name`` (an unknown name lists the registered ones)."""
    return FORMATS.get(name)


def read(path: str | Path, format: str | None = None, skip_invalid: bool = False) -> ReadResult:
    """Read a file of any supported format into core traces (a list, with ``.problems``, ``.format``, ``.skipped``).

    Without ``format`` the format is detected from the content (``result.detected`` is then True).
    With ``skip_invalid`` bad records are skipped and counted by reason in ``result.skipped``; without it
    every problem of the file is raised at once as an :class:`InputError`.
    """
    path = check_input_file(path)
    detected = format is None
    name = detect_format(path) if format is None else format
    result = get_format(name).read(path, skip_invalid=skip_invalid)
    result.detected = detected
    return result


def write(path: str | Path, traces: list[Trace] | list[Problem], format: str, **options: Any) -> WriteReport:
    """Write traces (or problems, for prm800k MATH splits and prmkit) atomically in ``format``.

    Options depend on the format (``neutral``, ``mode``, ``source``, ...); an option a format does not
    take is an error, never silently ignored. The report counts what was written and dropped, by reason.
    """
    return get_format(format).write(path, list(traces), **options)


@dataclass
class ConversionReport:
    """What a conversion did: records read, skipped (invalid input), written, dropped, and fields lost."""

    src: str
    dst: str
    from_format: str
    to_format: str
    detected: bool
    read: int
    written: int
    skipped: SkipReport = field(default_factory=SkipReport)
    dropped: Counter[str] = field(default_factory=Counter)
    notes: Counter[str] = field(default_factory=Counter)
    lost: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The report as a few human-readable lines (what the CLI prints)."""
        how = "detected" if self.detected else "given"
        out = [
            f"read {self.read} record(s) from {self.src} ({self.from_format}, {how})",
            f"wrote {self.written} record(s) to {self.dst} ({self.to_format})",
        ]
        if self.skipped.total:
            out.append(f"skipped {self.skipped.total} invalid input record(s): {dict(self.skipped.skipped)}")
        if self.dropped:
            out.append(f"dropped {sum(self.dropped.values())} trace(s): {dict(self.dropped)}")
        if self.notes:
            out.append(f"notes: {dict(self.notes)}")
        used = self.options.get("source")
        if isinstance(used, list):  # one source per trace (e.g. each PRM800K record's labeller)
            out.append(
                f"label sources: {len(used)} ({', '.join(used[:3])}{', ...' if len(used) > 3 else ''})"
            )
        elif used is not None:
            out.append(f"label source: {used}")
        shown = {k: v for k, v in self.options.items() if v is not None and k != "source"}
        if shown:
            out.append(f"options: {shown}")
        out += [f"not held by {self.to_format}: {item}" for item in self.lost]
        return out

    def nothing_written(self) -> str | None:
        """Why no record was written, with the fix for each reason, or None when something was written.

        A conversion that writes nothing from a non-empty input is a failure (the CLI exits non-zero),
        not a report line a user can miss.
        """
        if self.written or not self.read:
            return None
        reasons = [
            f"{n} {reason}" + (f" ({FIXES[reason]})" if reason in FIXES else "")
            for reason, n in self.dropped.most_common()
        ]
        why = "; ".join(reasons) if reasons else "every record was skipped"
        return f"{self.dst}: wrote 0 of {self.read} {self.from_format} record(s) as {self.to_format}: {why}"


FIXES: dict[str, str] = {
    "no_final_answer_correct": "add --grade to fill it by checking each final answer against the problem's answer",
    "no_generator": "add --generator NAME (the model that wrote the solutions)",
    "answer_not_gradable": "no reference answer to grade against (the input holds none)",
    "no_labels": "label the steps first (`prmkit label ...`) or pick a labelled source with --source",
    "no_labelled_steps": "label the steps first (`prmkit label ...`) or pick a labelled source with --source",
    "no_shared_prefix": "step_dpo pairs traces of a problem that share the steps before an error: sample "
    "continuations of each erroneous trace's prefix (a policy's continue_from) and label them",
}
"""Drop reason of a writer -> what the user can do about it (``convert`` prints it when nothing was written)."""


def _target_format(dst: Path, to_format: str | None) -> str:
    if to_format is not None:
        return to_format
    return "processbench" if dst.suffix == ".json" else "prmkit"


def convert(
    src: str | Path,
    dst: str | Path,
    from_format: str | None = None,
    to_format: str | None = None,
    skip_invalid: bool = False,
    **options: Any,
) -> ConversionReport:
    """Read ``src`` and write ``dst`` in another format, reporting what was dropped and why.

    ``to_format`` defaults to ``processbench`` for a ``.json`` destination and ``prmkit`` otherwise.
    ``options`` go to the writer: ``neutral`` (negative / positive), ``mode`` (expand / first_error, TRL),
    ``source`` (which label source to export), ...
    """
    dst = Path(dst)
    target = _target_format(dst, to_format)
    fmt = get_format(target)
    fmt.check_options(options)  # before reading: a misspelt option should not wait for a big file
    check_output_path(dst)  # likewise a folder, a device or a read-only place given as the output
    result = read(src, from_format, skip_invalid=skip_invalid)
    items: list[Trace] | list[Problem] = result.traces
    if not items and result.problems:
        if not fmt.problems:
            issue = Issue(
                str(src),
                None,
                "(file)",
                f"traces ({target} holds no problem-only records)",
                "problems only",
                "format",
            )
            raise InputError([issue])
        items = result.problems
    report = fmt.write(dst, items, **options)
    return ConversionReport(
        src=str(src),
        dst=str(dst),
        from_format=result.format,
        to_format=target,
        detected=result.detected,
        read=len(items),
        written=report.written,
        skipped=result.skipped,
        dropped=report.dropped,
        notes=report.notes,
        lost=report.lost,
        options=report.options,
    )


@dataclass
class ValidationReport:
    """Whether a file reads cleanly in its format, and every located issue when it does not."""

    path: str
    format: str
    detected: bool
    records: int
    issues: list[Issue] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.issues


def validate(path: str | Path, format: str | None = None) -> ValidationReport:
    """Check every record of a file; the report lists each problem as ``file:line: field: expected, found``."""
    path = Path(path)
    detected = format is None
    try:
        name = detect_format(path) if format is None else format
    except InputError as err:
        return ValidationReport(str(path), "unknown", detected, 0, err.issues)
    try:
        result = read(path, name)
    except InputError as err:
        return ValidationReport(str(path), name, detected, 0, err.issues)
    return ValidationReport(str(path), name, detected, len(result) or len(result.problems))


def inspect(
    path: str | Path,
    png: str | Path | None = None,
    format: str | None = None,
    by: str = "source",
    threshold: float | None = None,
) -> InspectReport:
    """Statistics of a data file in any supported format; with ``png``, also a first-error histogram plot.
    ``threshold`` cuts score-only labels (None: each source's recorded threshold, else 0.5)."""
    return describe(read(path, format), path, png, by, threshold)

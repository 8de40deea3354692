"""The one input rule: every command that reads traces or problems reads them here, in any format.

``prmkit convert`` detects the field's formats (PRM800K, Math-Shepherd, ProcessBench, TRL stepwise, prmkit's
own); :func:`read_traces` and :func:`read_problems` use the same detection and readers, so ``score``,
``train``, ``label``, ``eval`` and the rest accept every format ``convert`` reads. prmkit's own files go
to the core's readers (:func:`prmkit.core.dataset.read_native_traces`), whose errors are located. It
lives in ``formats``, above the core, because reading other formats is what the formats layer does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prmkit.core.dataset import read_native_problems, read_native_traces
from prmkit.core.errors import InputError, Issue, SkipReport
from prmkit.core.model import Problem, Trace
from prmkit.formats.convert import read
from prmkit.formats.detect import detect_format


def _foreign(path: Path, skip_invalid: bool, report: SkipReport | None) -> Any:
    """The file read by its own format's reader when its content is one ``prmkit convert`` detects other
    than prmkit's own (a ``ReadResult``), else None.

    This is the one input rule: every command that reads traces or problems goes through
    :func:`read_traces` / :func:`read_problems`, so each accepts every format ``convert`` reads, with the
    same detection (``prmkit.formats.detect``) and readers. A file no rule matches is read as prmkit's own
    so its errors stay the located ones of the core model.
    """
    try:
        name = detect_format(path)
    except InputError:
        return None
    if name == "prmkit":
        return None
    result = read(path, name, skip_invalid=skip_invalid)
    if report is not None:
        for issue in result.skipped.examples:
            report.examples.append(issue)
        report.skipped.update(result.skipped.skipped)
    return result


def read_traces(
    path: str | Path, skip_invalid: bool = False, report: SkipReport | None = None
) -> list[Trace]:
    """Read traces from a prmkit file (``.jsonl`` or ``.parquet``) or any format ``prmkit convert`` detects.

    A file that holds problems only (a PRM800K MATH split) is refused in one line that says what to run.
    """
    path = Path(path)
    result = _foreign(path, skip_invalid, report)
    if result is None:
        return read_native_traces(path, skip_invalid, report)
    if not result and result.problems:
        issue = Issue(
            str(path),
            None,
            "(file)",
            "traces (a problem with its steps)",
            f"{len(result.problems)} problem(s) only ({result.format})",
            "format",
            fix="sample solutions for them with a policy first (e.g. `prmkit bon`), then label them",
        )
        raise InputError([issue], skippable=False)
    return list(result)


def read_problems(
    path: str | Path, skip_invalid: bool = False, report: SkipReport | None = None
) -> list[Problem]:
    """Read problems: a prmkit problem file (JSONL), or the distinct problems of a trace file in any
    format ``prmkit convert`` detects (a PRM800K MATH split gives its problems)."""
    path = Path(path)
    result = _foreign(path, skip_invalid, report)
    if result is not None:
        return list(result.problems)
    return read_native_problems(path, skip_invalid, report)

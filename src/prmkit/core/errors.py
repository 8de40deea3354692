"""Errors for bad input that point at the place: ``file:line: field: expected ..., found ...``.

Readers collect every problem in a file (not only the first) into one :class:`InputError`; with
``skip_invalid`` they continue and count what they skipped by reason in a :class:`SkipReport`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from pydantic import ValidationError

MAX_SHOWN = 20


@dataclass(frozen=True)
class Issue:
    """One problem with one record of an input file."""

    file: str
    line: int | None
    field: str
    expected: str
    found: str
    reason: str = "invalid"
    """Short category used to count skips (``json``, ``missing``, ``type``, ``range``, ``count``...)."""
    fix: str = ""
    """What to do about it, when the problem is not in a record (``pass --restart``, ``pick another path``)."""

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        fix = f"; {self.fix}" if self.fix else ""
        return f"{where}: {self.field}: expected {self.expected}, found {self.found}{fix}"


class ItemError(RuntimeError):
    """One item of a long job failed for a reason of its own (a request the server refused, an answer that
    was not one): the job records it with :attr:`reason`, goes on with the rest, and a rerun retries it.

    Anything else (a bug, a broken install) still stops the job: skipping it would hide it.
    """

    @property
    def reason(self) -> str:
        return str(self)


class InputError(ValueError):
    """A file could not be read (or written); the message lists every issue (up to a cap) with its place.

    ``skippable=False`` marks problems ``--skip-invalid`` cannot skip (a folder for a file, a broken
    checkpoint, a full disk); one such problem is shown as its own single line.
    """

    def __init__(self, issues: list[Issue], skippable: bool = True):
        self.issues = issues
        if len(issues) == 1 and not skippable:
            super().__init__(str(issues[0]))
            return
        shown = "\n".join(str(i) for i in issues[:MAX_SHOWN])
        more = f"\n... and {len(issues) - MAX_SHOWN} more" if len(issues) > MAX_SHOWN else ""
        hint = "\n(use --skip-invalid to skip bad records and count them)" if issues and skippable else ""
        what = "invalid record(s)" if skippable else "problem(s)"
        super().__init__(f"{len(issues)} {what}:\n{shown}{more}{hint}")


@dataclass
class SkipReport:
    """What a lenient read skipped, counted per reason, with the first few issues for the log."""

    skipped: Counter[str] = field(default_factory=Counter)
    examples: list[Issue] = field(default_factory=list)

    def add(self, issue: Issue) -> None:
        self.skipped[issue.reason] += 1
        if len(self.examples) < MAX_SHOWN:
            self.examples.append(issue)

    @property
    def total(self) -> int:
        return sum(self.skipped.values())


def short(value: object, limit: int = 60) -> str:
    """A value as it appears in an error message: repr, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def issues_from_validation(
    err: ValidationError, file: str, line: int | None, prefix: str = ""
) -> list[Issue]:
    """Turn a pydantic error into located issues, one per failing field."""
    out = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"]) or "(record)"
        kind = e["type"]
        out_of_range = kind == "literal_error" or kind.startswith(("greater_than", "less_than"))
        reason = "missing" if kind == "missing" else "range" if out_of_range else "type"
        found = "nothing" if kind == "missing" else short(e.get("input"))
        out.append(Issue(file, line, prefix + loc, e["msg"].lower(), found, reason))
    return out

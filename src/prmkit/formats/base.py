"""Shared pieces of the format adapters: results and reports, record checking, rows in and out, ids.

Every adapter reads through :func:`load_rows` (JSONL, JSON array or Parquet, with located errors from
:func:`prmkit.core.files.iter_json_records`) and checks each record with a :class:`RecordChecker`, so a bad
file yields one ``file:line: field: expected ..., found ...`` message per problem, all collected.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prmkit.core.errors import InputError, Issue, SkipReport, issues_from_validation, short
from prmkit.core.files import (
    atomic_write,
    check_not_lfs_pointer,
    iter_json_records,
    read_input_head,
    read_parquet_rows,
)
from prmkit.core.model import Problem, Trace

FORMAT_VERSION = "1"
"""Version of prmkit's format readers; it goes into the Provenance of every imported label."""


class ReadResult(list):  # list[Trace]
    """The traces of a file (it *is* the list), plus its problems, the format and what was skipped."""

    def __init__(
        self,
        traces: Iterable[Trace] = (),
        *,
        format: str,
        path: str,
        problems: list[Problem] | None = None,
        skipped: SkipReport | None = None,
        detected: bool = False,
    ):
        super().__init__(traces)
        self.format = format
        self.path = path
        self.detected = detected
        """True when the format was detected from the content (no format was named)."""
        self.skipped = skipped or SkipReport()
        if problems is None:
            problems = list({t.problem.id: t.problem for t in self}.values())
        self.problems: list[Problem] = problems

    @property
    def traces(self) -> list[Trace]:
        return list(self)


@dataclass
class WriteReport:
    """What a writer did: records written, traces it could not write (by reason), and what it cannot hold."""

    format: str
    path: str
    written: int = 0
    """Records written (a trace can give several rows, e.g. TRL's PRM800K expansion)."""
    traces: int = 0
    """Traces (or problems) given to the writer."""
    dropped: Counter[str] = field(default_factory=Counter)
    """Traces not written at all, counted by reason."""
    notes: Counter[str] = field(default_factory=Counter)
    """What happened inside written traces (unlabelled steps cut from the end, outcomes graded...), by reason."""
    lost: list[str] = field(default_factory=list)
    """Fields of the core model this format cannot hold (they are not in the output)."""
    options: dict[str, Any] = field(default_factory=dict)
    """The resolved options, e.g. which neutral mapping was used."""


@dataclass(frozen=True)
class Format:
    """One format adapter: its reader, its writer, and what it holds (for docs and reports)."""

    name: str
    read: Callable[..., ReadResult]
    write: Callable[..., WriteReport]
    holds: str
    """One line: what of the core model this format keeps."""
    problems: bool = False
    """Whether the format can hold problems on their own (no traces)."""
    options: dict[str, tuple[str, ...] | None] = field(default_factory=dict)
    """The writer's options and their allowed values (None: any value)."""

    def check_options(self, options: dict[str, Any]) -> None:
        """Fail before any work on an option this writer does not take or a value it does not allow."""
        take_options(self.name, options, dict.fromkeys(self.options))
        for name, value in options.items():
            choices = self.options[name]
            if choices is not None and value is not None:
                check_choice(name, value, choices)


class RecordChecker:
    """Checks the fields of one raw record, collecting an :class:`Issue` per problem."""

    BAD = object()
    """Returned in place of a value that is missing or has the wrong type."""

    def __init__(self, file: str, line: int | None):
        self.file = file
        self.line = line
        self.issues: list[Issue] = []

    def issue(self, where: str, expected: str, found: str, reason: str) -> None:
        self.issues.append(Issue(self.file, self.line, where, expected, found, reason))

    def get(
        self,
        obj: dict,
        key: str,
        types: type | tuple[type, ...],
        expected: str,
        where: str = "",
        nullable: bool = False,
    ) -> Any:
        """``obj[key]`` when present and of ``types`` (None allowed when ``nullable``), else :attr:`BAD`."""
        if key not in obj:
            self.issue(f"{where}.{key}" if where else key, expected, "nothing", "missing")
            return self.BAD
        value = obj[key]
        if value is None and nullable:
            return None
        bool_ok = types is bool or (isinstance(types, tuple) and bool in types)
        if not isinstance(value, types) or (not bool_ok and (value is True or value is False)):
            self.issue(f"{where}.{key}" if where else key, expected, short(value), "type")
            return self.BAD
        return value

    def strings(self, obj: dict, key: str, where: str = "") -> Any:
        """A list of strings under ``key`` (each element checked), or :attr:`BAD`."""
        value = self.get(obj, key, list, "a list of strings", where)
        if value is self.BAD:
            return value
        path = f"{where}.{key}" if where else key
        bad = [i for i, s in enumerate(value) if not isinstance(s, str)]
        for i in bad:
            self.issue(f"{path}[{i}]", "a string", short(value[i]), "type")
        return self.BAD if bad else value


def is_json_array(path: Path) -> bool:
    """Whether a file's first non-blank character opens a JSON array (ProcessBench's layout)."""
    head = read_input_head(path, 4096)
    check_not_lfs_pointer(path, head[:64])
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[")


def layout_issue(path: Path, fmt: str, want_array: bool) -> Issue:
    """The one message for a JSON array where JSON Lines belong, or the other way round."""
    if want_array:
        return Issue(
            str(path),
            1,
            "(file)",
            f"a JSON array of {fmt} records",
            "JSON Lines (one object per line)",
            "layout",
        )
    return Issue(
        str(path),
        1,
        "(file)",
        f"JSON Lines (one {fmt} record per line)",
        "a JSON array (starts with '[')",
        "layout",
    )


def load_rows(path: str | Path, fmt: str, want_array: bool = False) -> Iterator[tuple[int, Any]]:
    """``(line, record_or_issue)`` of a JSONL, JSON-array or Parquet file, checking the layout first."""
    path = Path(path)
    if path.suffix == ".parquet":
        yield from enumerate(read_parquet_rows(path), start=1)
        return
    if is_json_array(path) != want_array:
        raise InputError([layout_issue(path, fmt, want_array)])
    yield from iter_json_records(path)


def dump_rows(path: str | Path, rows: Iterable[dict], ensure_ascii: bool = True) -> int:
    """Write rows atomically: Parquet when ``path`` ends in ``.parquet``, else JSONL (``json.dumps``)."""
    path = Path(path)
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = list(rows)
        keys = list({k: None for row in rows for k in row})  # every column, even if the first row lacks it
        table = pa.Table.from_pylist([{k: row.get(k) for k in keys} for row in rows])
        with atomic_write(path, mode="wb") as fh:
            pq.write_table(table, fh)
        return table.num_rows
    n = 0
    with atomic_write(path) as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=ensure_ascii) + "\n")
            n += 1
    return n


def read_records(
    path: str | Path,
    fmt: str,
    parse: Callable[[dict, RecordChecker], Any],
    skip_invalid: bool,
    want_array: bool = False,
) -> tuple[list[Any], SkipReport]:
    """Parse every record with ``parse``; collect all issues (raise) or skip and count them."""
    path = Path(path)
    out: list[Any] = []
    issues: list[Issue] = []
    report = SkipReport()
    for line, rec in load_rows(path, fmt, want_array):
        ck = RecordChecker(str(path), line)
        if isinstance(rec, Issue):
            ck.issues.append(rec)
        elif not isinstance(rec, dict):
            ck.issue("(record)", f"a JSON object ({fmt} record)", short(rec), "type")
        else:
            try:
                value = parse(rec, ck)
            except ValidationError as err:  # a core-model check the adapter does not repeat (nesting...)
                ck.issues.extend(issues_from_validation(err, str(path), line))
            if not ck.issues:
                out.append(value)
                continue
        if skip_invalid:
            report.add(ck.issues[0])
        else:
            issues.extend(ck.issues)
    if issues:
        raise InputError(issues)
    return out, report


def digest(*parts: object) -> str:
    """A short stable id fragment for records that carry no id of their own."""
    text = "\x1f".join(str(p) for p in parts)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def unique_ids(traces: list[Trace]) -> list[Trace]:
    """Suffix ``-2``, ``-3``... onto repeated trace ids (identical rows exist in real data sets)."""
    seen: Counter[str] = Counter()
    for trace in traces:
        seen[trace.id] += 1
        if seen[trace.id] > 1:
            trace.id = f"{trace.id}-{seen[trace.id]}"
    return traces


def ordered(values: dict[str, Any], recorded: list[str] | None) -> dict[str, Any]:
    """``values`` in the key order a source file used (when it was recorded), else as built."""
    if not recorded:
        return values
    out = {k: values[k] for k in recorded if k in values}
    out.update({k: v for k, v in values.items() if k not in out})
    return out


def key_order_if_unusual(raw: dict, built: dict) -> list[str] | None:
    """The raw key order, only when the writer would not reproduce it by itself."""
    return None if list(raw) == list(built) else list(raw)


def note_agent_steps(items: Iterable[Trace | Problem], report: WriteReport) -> None:
    """Say in ``report`` what a text-only writer drops of agent trajectories: calls, observations, tools.

    Every writer of a format that holds step text only calls this, so a trajectory converted to PRM800K,
    Math-Shepherd, ProcessBench or TRL never loses its tool calls silently: the loss is a line of the
    conversion report (``lost``) and a count of the traces it touched (``notes``).
    """
    calls = observations = flattened = with_tools = 0
    for item in items:
        problem = item.problem if isinstance(item, Trace) else item
        with_tools += bool(problem.tools)
        if isinstance(item, Trace):
            n_calls = sum(len(s.tool_calls) for s in item.steps)
            n_obs = sum(len(s.observations) for s in item.steps)
            calls, observations, flattened = (
                calls + n_calls,
                observations + n_obs,
                flattened + bool(n_calls or n_obs),
            )
    if flattened:
        report.lost.append(
            f"tool calls ({calls}) and observations ({observations}) of agent steps: {report.format} holds "
            "step text only (agentprocessbench, chat and prmkit keep them)"
        )
        report.notes["agent_steps_flattened"] += flattened
    if with_tools:
        report.lost.append(f"the tool schemas (Problem.tools) of {with_tools} trace(s) or problem(s)")


def graded(trace: Trace, report: WriteReport) -> Trace:
    """``trace`` with a missing ``answer_correct`` filled by checking its final answer against its
    problem's reference answer (the ``grade`` option of the writers that carry an outcome), counted in
    ``report.notes["answer_correct_graded"]``; left unknown when there is no final answer or no reference
    (the writer says what it does with those)."""
    if trace.answer_correct is not None:
        return trace
    from prmkit.core.answers import check_answer

    outcome = check_answer(trace.problem.answer, trace.final_answer)
    if outcome is None:
        return trace
    report.notes["answer_correct_graded"] += 1
    return trace.model_copy(update={"answer_correct": outcome})


def take_options(fmt: str, options: dict[str, Any], allowed: dict[str, Any]) -> dict[str, Any]:
    """Resolve a writer's options against its defaults; an option it does not understand is an error."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(
            f"format {fmt!r} does not take option(s) {', '.join(unknown)}; it takes: {', '.join(sorted(allowed)) or 'none'}"
        )
    return {**allowed, **{k: v for k, v in options.items() if v is not None}}


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"option {name}: expected one of {', '.join(choices)}, found {value!r}")

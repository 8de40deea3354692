"""Join the outputs of a sharded labelling job (``--shard I/N`` on N machines) into what one run writes.

A shard holds the traces of its problems in input order (problems are split by a hash of their id, so a
problem's traces, and every prefix they share, are labelled in one shard with the seeds one run would
use). The merge walks the original input and takes each trace from its problem's shard in turn, so the
merged file lists the traces in input order, each labelled as the unsharded run would have labelled it.
The summaries are added up; each shard's failures stay listed in its own work folder.

Only shards of one job merge. Each shard's job wrote beside it its resolved config and a summary holding
the SHA-256 of the input it read and of the output it wrote (:func:`~prmkit.labeling.common.write_result`);
a shard is refused, with what differs, when its config differs from shard 0's in anything but its
files and shard (another seed, method, policy or labeller parameter), when its shard is not its place
among the N, when it read another input, when its bytes are not what its job wrote (edited or damaged
since), when its traces' steps are not the input's, or when its config or summary is missing or not a
YAML mapping.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field

from prmkit.core.config import Config
from prmkit.core.dataset import write_traces
from prmkit.core.errors import InputError, Issue, short
from prmkit.core.files import atomic_write
from prmkit.core.model import Trace
from prmkit.formats.inputs import read_traces
from prmkit.labeling.common import file_sha256, shard_of

FILE_FIELDS = ("input", "output", "work_dir", "restart", "concurrency", "fail_fast", "shard", "keep_rollouts")
"""Config fields that may differ between the shards of one job (where it ran, not what it computed)."""
SHARD_FIX = "merge only the N outputs of one job run with --shard 0/N ... N-1/N"


class MergeConfig(Config):
    """``prmkit label merge``: join the N outputs of a job run with --shard 0/N ... N-1/N."""

    input: Path
    """The input every shard read (it fixes the order of the merged traces)."""
    shards: list[Path] = Field(min_length=1)
    """The shard outputs, shard 0 first (the order of their --shard index)."""
    output: Path
    """Where the merged traces go; the summaries, added up, go beside it (.summary.yaml)."""


def merge_shards(
    inputs: Sequence[Trace], shards: Sequence[Sequence[Trace]], names: Sequence[str]
) -> list[Trace]:
    """The traces of ``shards`` in the order of ``inputs``: trace ``k`` from shard ``hash(problem) % N``.

    Every shard must hold exactly its problems' traces, in input order: anything else (a shard of
    another job, one run with another N, a missing or extra trace) is refused with its place.
    """
    n = len(shards)
    taken = [0] * n
    out: list[Trace] = []
    issues: list[Issue] = []
    for line, trace in enumerate(inputs, start=1):
        s = shard_of(trace.problem.id, n)
        if taken[s] >= len(shards[s]):
            issues.append(
                Issue(names[s], None, "traces", f"a trace {trace.id!r} (input line {line})", "the end")
            )
            break
        got = shards[s][taken[s]]
        where = taken[s] + 1
        if got.id != trace.id or got.problem.id != trace.problem.id:
            issues.append(Issue(names[s], where, "id", f"{trace.id!r} (input line {line})", repr(got.id)))
            break
        if (bad := _other_steps(trace, got, line)) is not None:
            issues.append(Issue(names[s], where, *bad))
        out.append(got)
        taken[s] += 1
    for s, shard in enumerate(shards):
        if not issues and taken[s] != len(shard):
            issues.append(
                Issue(
                    names[s],
                    taken[s] + 1,
                    "traces",
                    "no more traces (shard of another input?)",
                    shard[taken[s]].id,
                )
            )
    if issues:
        raise InputError(issues, skippable=False)
    return out


def _other_steps(trace: Trace, got: Trace, line: int) -> tuple[str, str, str] | None:
    """(field, expected, found) where a shard's trace is not the input's (labels aside)."""
    if got.problem.text != trace.problem.text or got.problem.answer != trace.problem.answer:
        return "problem", f"the problem of input line {line}", short(got.problem.text)
    if len(got.steps) != len(trace.steps):
        return "steps", f"{len(trace.steps)} steps (input line {line})", str(len(got.steps))
    for i, (want, have) in enumerate(zip(trace.steps, got.steps, strict=True)):
        if want.text != have.text:
            return f"steps[{i}].text", f"{short(want.text)} (input line {line})", short(have.text)
    return None


def shard_sides(config: MergeConfig) -> list[dict[str, Any]]:
    """Each shard's summary, after checking that the shards are the N outputs of one job over
    ``config.input`` and unchanged since (the module docstring lists what is compared); every
    difference of every shard is collected into one :class:`InputError`."""
    issues: list[Issue] = []
    sides = [_side(path, "config", issues) for path in config.shards]
    summaries = [_side(path, "summary", issues) for path in config.shards]
    if issues:
        raise InputError(issues, skippable=False)
    n, digest = len(config.shards), file_sha256(config.input)
    first = _job_of(sides[0], summaries[0])
    for i, (path, side, summary) in enumerate(zip(config.shards, sides, summaries, strict=True)):
        sum_file, cfg_file = _side_path(path, "summary"), _side_path(path, "config")
        shard = side.get("shard")
        if shard != f"{i}/{n}" and not (n == 1 and shard is None):
            issues.append(Issue(cfg_file, None, "shard", f"{i}/{n} (its place among the {n})", repr(shard)))
        mine = _job_of(side, summary)
        for field in sorted(set(first) | set(mine)):
            if first.get(field) != mine.get(field):
                found = short(mine[field]) if field in mine else "nothing"
                expected = f"{short(first[field]) if field in first else 'nothing'} (as shard 0)"
                issues.append(Issue(cfg_file, None, field, expected, found, fix=SHARD_FIX))
        if summary.get("input_sha256") != digest:
            found = summary.get("input_sha256", "nothing")
            issues.append(Issue(sum_file, None, "input_sha256", f"{digest} (of {config.input})", found))
        if summary.get("output_sha256") != (actual := file_sha256(path)):
            found = f"{actual} in {path} (edited or damaged since its job wrote it)"
            issues.append(
                Issue(sum_file, None, "output_sha256", summary.get("output_sha256", "nothing"), found)
            )
    if issues:
        raise InputError(issues, skippable=False)
    return summaries


def _job_of(side: dict[str, Any], summary: dict[str, Any]) -> dict[str, Any]:
    """What makes a job the job it is: its config but for its files and shard, and its method."""
    return {k: v for k, v in side.items() if k not in FILE_FIELDS} | {"method": summary.get("method")}


def _side_path(path: Path, kind: str) -> str:
    return str(path.with_name(f"{path.name}.{kind}.yaml"))


def _side(path: Path, kind: str, issues: list[Issue]) -> dict[str, Any]:
    """A shard's ``.config.yaml`` or ``.summary.yaml`` as a mapping; what is wrong with it goes to
    ``issues`` (a missing file: not the output of a labelling job)."""
    side = Path(_side_path(path, kind))
    expected = f"the {kind} its labelling job wrote beside {path.name} (a YAML mapping)"
    try:
        doc = yaml.safe_load(side.read_text(encoding="utf-8"))
    except FileNotFoundError:
        issues.append(Issue(str(side), None, "(file)", expected, "no such file", "missing", SHARD_FIX))
        return {}
    except (OSError, UnicodeDecodeError) as err:
        issues.append(Issue(str(side), None, "(file)", expected, short(str(err)), "type", SHARD_FIX))
        return {}
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        found = short(str(getattr(err, "problem", None) or err))
        issues.append(Issue(str(side), line, "(yaml)", expected, found, "yaml", SHARD_FIX))
        return {}
    if not isinstance(doc, dict):
        issues.append(
            Issue(str(side), None, "(file)", expected, f"a YAML {type(doc).__name__}", "type", SHARD_FIX)
        )
        return {}
    return doc


def add_summaries(summaries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Numbers added up, everything else as in the first summary (lists of failures concatenated)."""
    out: dict[str, Any] = {}
    for summary in summaries:
        for key, value in summary.items():
            if isinstance(value, int | float) and not isinstance(value, bool) and key in out:
                out[key] += value
            elif isinstance(value, list) and key in out:
                out[key] = [*out[key], *value]
            else:
                out.setdefault(key, value)
    out["shards"] = len(summaries)
    return out


def run_merge(config: MergeConfig) -> dict[str, Any]:
    """``prmkit label merge``: read the input and the shard outputs, write the merged traces and summary."""
    summaries = shard_sides(config)
    inputs = read_traces(config.input)
    shards = [read_traces(path) for path in config.shards]
    merged = merge_shards(inputs, shards, [str(p) for p in config.shards])
    write_traces(config.output, merged)
    summary = add_summaries(summaries)
    summary["output_sha256"] = file_sha256(config.output)
    with atomic_write(config.output.with_name(config.output.name + ".summary.yaml")) as fh:
        yaml.safe_dump(summary, fh, sort_keys=False)
    return summary

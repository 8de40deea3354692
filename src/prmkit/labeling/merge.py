"""Join the outputs of a sharded labelling job (``--shard I/N`` on N machines) into what one run writes.

A shard holds the traces of its problems in input order (problems are split by a hash of their id, so a
problem's traces, and every prefix they share, are labelled in one shard with the seeds one run would
use). The merge walks the original input and takes each trace from its problem's shard in turn, so the
merged file lists the traces in input order, each labelled as the unsharded run would have labelled it.
The summaries are added up; each shard's failures stay listed in its own work folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field

from prmkit.core.config import Config
from prmkit.core.dataset import write_traces
from prmkit.core.errors import InputError, Issue
from prmkit.core.files import atomic_write
from prmkit.core.model import Trace
from prmkit.formats.inputs import read_traces
from prmkit.labeling.common import shard_of


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
        if got.id != trace.id or got.problem.id != trace.problem.id:
            where = taken[s] + 1
            issues.append(Issue(names[s], where, "id", f"{trace.id!r} (input line {line})", repr(got.id)))
            break
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
    inputs = read_traces(config.input)
    shards = [read_traces(path) for path in config.shards]
    merged = merge_shards(inputs, shards, [str(p) for p in config.shards])
    write_traces(config.output, merged)
    summaries = []
    for path in config.shards:
        side = path.with_name(path.name + ".summary.yaml")
        summaries.append(yaml.safe_load(side.read_text(encoding="utf-8")) if side.exists() else {})
    summary = add_summaries(summaries)
    with atomic_write(config.output.with_name(config.output.name + ".summary.yaml")) as fh:
        yaml.safe_dump(summary, fh, sort_keys=False)
    return summary

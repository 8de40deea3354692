"""What every labelling command shares: its file options, input checks, and how results are written."""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, field_validator

from prmkit.core.config import Config
from prmkit.core.dataset import write_traces
from prmkit.core.errors import InputError, Issue
from prmkit.core.files import atomic_write
from prmkit.core.model import LabelMethod, Provenance, Trace
from prmkit.formats.inputs import read_traces
from prmkit.labeling.jobs import LABELING_VERSION
from prmkit.labeling.rollouts import Truncated


class JobOptions(Config):
    """Files and bookkeeping of a resumable labelling job."""

    input: Path
    """Traces to label: a prmkit JSONL or Parquet file; each problem needs its reference answer."""
    output: Path
    """Where the labelled traces go, written atomically once the job finishes."""
    work_dir: Path | None = None
    """The job's resumable state (finished work, appended as it completes); default OUTPUT.job."""
    seed: int = 0
    """Job seed: every rollout's seed derives from it and the prefix's content, so reruns agree."""
    restart: bool = False
    """Throw away the finished work in the work folder and start over."""
    fail_fast: bool = False
    """Stop at the first failed item (a request the server refused, an answer that was not one) instead
    of recording it in the work folder's failed.jsonl, finishing the rest and counting it in the summary
    (a rerun retries only the failed items)."""
    shard: str | None = Field(default=None, pattern=r"^\d+/[1-9]\d*$")
    """I/N: label only shard I of N (problems split by a hash of their id, so every trace of a problem
    and every prefix they share land in one shard), e.g. one shard per machine; `prmkit label merge`
    joins the N outputs into what one run would have written."""

    @field_validator("shard")
    @classmethod
    def _shard_in_range(cls, value: str | None) -> str | None:
        if value is not None:
            i, n = parse_shard(value)
            if i >= n:
                raise ValueError(f"expected a shard index from 0 to {n - 1} for {n} shards")
        return value

    def job_dir(self) -> Path:
        return self.work_dir or self.output.with_name(self.output.name + ".job")

    def identity(self) -> dict[str, Any]:
        """The options that shape the result: a resumed job must have the same ones (files aside)."""
        return self.model_dump(
            mode="json", exclude={"input", "output", "work_dir", "restart", "concurrency", "fail_fast"}
        )


class EstimateOptions(Config):
    """How rollouts become an estimate (the labellers that roll out)."""

    truncated: Truncated = "skip"
    """A rollout the policy's backend cut at its token limit before an answer: skip (left out of the
    estimate and counted apart; it says nothing about the prefix) or fail (a failure, which biases long
    solutions' labels toward -1)."""


def parse_shard(shard: str) -> tuple[int, int]:
    """``"I/N"`` as ``(I, N)``."""
    i, n = shard.split("/")
    return int(i), int(n)


def shard_of(problem_id: str, n: int) -> int:
    """The shard of a problem among ``n``: stable across machines and Python runs (not ``hash()``)."""
    return int.from_bytes(hashlib.sha256(problem_id.encode()).digest()[:8], "big") % n


def read_labelable(path: Path, need_answer: bool = True, shard: str | None = None) -> list[Trace]:
    """Read traces and fail, naming every offending line, when a problem lacks its reference answer;
    with ``shard`` ("I/N") keep the traces of that shard's problems, in file order."""
    traces = read_traces(path)
    if need_answer:
        issues = [
            Issue(
                str(path),
                i,
                "problem.answer",
                "a reference answer (rollouts are scored against it)",
                "none",
                "missing",
            )
            for i, t in enumerate(traces, start=1)
            if not (t.problem.answer or "").strip()
        ]
        if issues:
            raise InputError(issues)
    if shard is not None:
        i, n = parse_shard(shard)
        traces = [t for t in traces if shard_of(t.problem.id, n) == i]
    return traces


def provenance(method: LabelMethod, actor: str, params: dict[str, Any], at: datetime) -> Provenance:
    """A labelling provenance stamped with the job's start time (so a resumed job writes the same file)."""
    return Provenance(method=method, actor=actor, params=params, version=LABELING_VERSION, created_at=at)


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB pieces."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while piece := fh.read(2**20):
            h.update(piece)
    return h.hexdigest()


def write_result(config: BaseModel, output: Path, traces: list[Trace], summary: dict[str, Any]) -> None:
    """Write labelled traces, and beside them the resolved config and the summary (YAML). The summary
    file (not ``summary``, which the caller prints) gains the SHA-256 of the input read
    (``input_sha256``) and of the output written (``output_sha256``): ``prmkit label merge`` checks a
    shard against them, so a shard of another input, or one edited since its job wrote it, is refused
    instead of merged."""
    write_traces(output, traces)
    source = getattr(config, "input", None)
    digests = {"input_sha256": file_sha256(source)} if isinstance(source, Path) and source.is_file() else {}
    digests["output_sha256"] = file_sha256(output)
    with atomic_write(output.with_name(output.name + ".config.yaml")) as fh:
        yaml.safe_dump(config.model_dump(mode="json"), fh, sort_keys=False)
    with atomic_write(output.with_name(output.name + ".summary.yaml")) as fh:
        yaml.safe_dump(summary | digests, fh, sort_keys=False)


def record_rollouts(trace: Trace, method: str, n: int) -> None:
    """Remember on the trace how many rollouts ``method`` spent on it (the report reads this)."""
    spent = dict(trace.metadata.get("rollouts") or {})
    spent[method] = n
    trace.metadata["rollouts"] = spent

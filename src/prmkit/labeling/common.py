"""What every labelling command shares: its file options, input checks, and how results are written."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from prmkit.core.dataset import write_traces
from prmkit.core.errors import InputError, Issue
from prmkit.core.files import atomic_write
from prmkit.core.model import LabelMethod, Provenance, Trace
from prmkit.formats.inputs import read_traces
from prmkit.labeling.jobs import LABELING_VERSION


class Options(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class JobOptions(Options):
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

    def job_dir(self) -> Path:
        return self.work_dir or self.output.with_name(self.output.name + ".job")

    def identity(self) -> dict[str, Any]:
        """The options that shape the result: a resumed job must have the same ones (files aside)."""
        return self.model_dump(mode="json", exclude={"input", "output", "work_dir", "restart", "concurrency"})


def read_labelable(path: Path, need_answer: bool = True) -> list[Trace]:
    """Read traces and fail, naming every offending line, when a problem lacks its reference answer."""
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
    return traces


def provenance(method: LabelMethod, actor: str, params: dict[str, Any], at: datetime) -> Provenance:
    """A labelling provenance stamped with the job's start time (so a resumed job writes the same file)."""
    return Provenance(method=method, actor=actor, params=params, version=LABELING_VERSION, created_at=at)


def write_result(config: BaseModel, output: Path, traces: list[Trace], summary: dict[str, Any]) -> None:
    """Write labelled traces, and beside them the resolved config and the summary (YAML)."""
    write_traces(output, traces)
    with atomic_write(output.with_name(output.name + ".config.yaml")) as fh:
        yaml.safe_dump(config.model_dump(mode="json"), fh, sort_keys=False)
    with atomic_write(output.with_name(output.name + ".summary.yaml")) as fh:
        yaml.safe_dump(summary, fh, sort_keys=False)


def record_rollouts(trace: Trace, method: str, n: int) -> None:
    """Remember on the trace how many rollouts ``method`` spent on it (the report reads this)."""
    spent = dict(trace.metadata.get("rollouts") or {})
    spent[method] = n
    trace.metadata["rollouts"] = spent

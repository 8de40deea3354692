"""The four file jobs every world shares (:mod:`prmkit.worlds.jobs`), for each built-in world."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from prmkit.core.dataset import write_jsonl
from prmkit.core.errors import InputError
from prmkit.core.model import Problem, Trace
from prmkit.formats.inputs import read_traces
from prmkit.worlds.jobs import Jobs
from prmkit.worlds.registry import world
from tests.worlds.conftest import WORLD_NAMES


@pytest.mark.parametrize("name", WORLD_NAMES)
def test_functions_mirror_the_commands(name: str, tmp_path: Path) -> None:
    w = world(name)
    assert w.generate(10, tmp_path / "p.jsonl", seed=2) == 10
    assert w.sample(tmp_path / "p.jsonl", tmp_path / "t.jsonl", per_problem=2) == 20
    summary = w.check(tmp_path / "t.jsonl", tmp_path / "g.jsonl")
    assert summary.traces == 20 and summary.problems == 10
    assert all(t.answer_correct is not None for t in read_traces(tmp_path / "g.jsonl"))
    assert w.stats(n=10, per_problem=2).traces == 20


@pytest.mark.parametrize(("name", "per_problem"), [("arithmetic", 16), ("agent", 8), ("code", 8)])
def test_sample_writes_the_worlds_default_number_of_traces(
    name: str, per_problem: int, tmp_path: Path
) -> None:
    w = world(name)
    w.generate(2, tmp_path / "p.jsonl")
    assert w.sample(tmp_path / "p.jsonl", tmp_path / "t.jsonl") == 2 * per_problem


@pytest.mark.parametrize(
    ("name", "expected"),
    [("arithmetic", "problem.metadata.graph: expected a world computation graph"),
     ("agent", "problem.metadata.task: expected an agent-world task"),
     ("code", "problem.metadata.code: expected a code-world task")],
)  # fmt: skip
def test_check_and_sample_name_records_that_are_not_the_worlds(
    name: str, expected: str, tmp_path: Path
) -> None:
    w = world(name)
    other = Problem(id="p", text="1 + 1?", answer="2")
    write_jsonl(tmp_path / "other.jsonl", [Trace(id="a", problem=other)])
    with pytest.raises(InputError, match=r"other\.jsonl:1: " + re.escape(expected)):
        w.check(tmp_path / "other.jsonl", tmp_path / "out.jsonl")
    write_jsonl(tmp_path / "problems.jsonl", [other, other])
    with pytest.raises(InputError, match=r"problems\.jsonl:2: " + re.escape(expected)):
        w.sample(tmp_path / "problems.jsonl", tmp_path / "out.jsonl")


@pytest.mark.parametrize("name", WORLD_NAMES)
def test_each_world_record_holds_its_jobs_bound_to_its_own_parts(name: str) -> None:
    pkg = importlib.import_module(f"prmkit.worlds.{name}")
    w, jobs = world(name), pkg.jobs.JOBS
    assert w is pkg.WORLD and w.jobs is jobs and isinstance(jobs, Jobs) and w.name == jobs.world == name
    assert (w.generate, w.sample, w.check, w.stats) == (jobs.generate, jobs.sample, jobs.check, jobs.stats)
    assert jobs.check_trace is pkg.check_trace and w.sample_traces is pkg.sample_traces

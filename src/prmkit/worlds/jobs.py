"""The file-level functions behind ``prmkit <world> generate | sample | check | stats``, written once.

A world hands :class:`Jobs` its own parts (its generator, policy, checker and summary) and exports the
four bound methods as its ``generate``, ``sample``, ``check`` and ``stats``; each takes the same names and
options as its command. Files go through prmkit.core.dataset (atomic JSONL writes). ``progress`` is an
optional callback ``advance(k)`` the CLI wires to a progress bar.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from prmkit.core.dataset import write_jsonl, write_traces
from prmkit.core.errors import InputError, Issue
from prmkit.core.model import Problem, Trace
from prmkit.formats.inputs import read_problems, read_traces
from prmkit.worlds.checks import GoldCheck

Advance = Callable[[int], None]


@dataclass(frozen=True)
class Jobs:
    """One world's file jobs, built from its parts."""

    world: str
    """The world's name (its registration, and the messages that name it)."""

    generate_problem: Callable[[int, int, Any, str], Problem]
    """``(index, seed, config, split)``: problem ``index`` of a split (config None: the defaults)."""
    policy: Callable[[Any], Any]
    """The simulated policy for a policy config (None: the defaults)."""
    sample_traces: Callable[..., list[Trace]]
    """``(problems, per_problem, seed=, policy=, progress=)``: traces the policy writes."""
    check_trace: Callable[[Trace], GoldCheck]
    apply_gold: Callable[[Trace, Any], Trace]
    """Writes a check onto its trace (gold labels and ``answer_correct``)."""
    summarize: Callable[[Sequence[Trace], Sequence[Any] | None], BaseModel]
    """The world's statistics of traces (checked unless their checks are given)."""
    key: str
    """The ``Problem.metadata`` key every problem of the world carries (what its policy and checker read)."""
    expected: str
    """What ``key`` holds, in the message naming a record without it (or a judge handed another's)."""
    per_problem: int = 16
    """Traces per problem ``sample`` writes unless told."""

    def generate(
        self,
        n: int,
        output: str | Path,
        seed: int = 0,
        split: str = "train",
        config: BaseModel | None = None,
        progress: Advance | None = None,
    ) -> int:
        """Write ``n`` problems of ``split`` to ``output`` (JSONL); returns how many were written."""
        problems = []
        for i in range(n):
            problems.append(self.generate_problem(i, seed, config, split))
            if progress is not None:
                progress(1)
        return write_jsonl(output, problems)

    def require(self, path: str | Path, problems: list[Problem]) -> None:
        """Fail, naming each record, when a problem is not one of this world's (its policy and checker
        need ``metadata[key]``)."""
        issues = [
            Issue(str(path), i + 1, f"problem.metadata.{self.key}", self.expected, "nothing", "missing")
            for i, p in enumerate(problems)
            if not isinstance(p.metadata.get(self.key), dict)
        ]
        if issues:
            raise InputError(issues)

    def sample(
        self,
        problems: str | Path,
        output: str | Path,
        per_problem: int | None = None,
        seed: int = 0,
        policy_config: BaseModel | None = None,
        progress: Advance | None = None,
    ) -> int:
        """Sample ``per_problem`` traces per problem of the file ``problems`` (None: the world's default
        number); returns how many were written."""
        items = read_problems(problems)
        self.require(problems, items)
        n = self.per_problem if per_problem is None else per_problem
        policy = self.policy(policy_config)
        return write_traces(output, self.sample_traces(items, n, seed=seed, policy=policy, progress=progress))

    def check(self, traces: str | Path, output: str | Path, progress: Advance | None = None) -> BaseModel:
        """Add gold labels to every trace of ``traces``, write them to ``output``, return their statistics."""
        items: list[Trace] = read_traces(traces)
        self.require(traces, [t.problem for t in items])
        checks = []
        for trace in items:
            checks.append(self.check_trace(trace))
            self.apply_gold(trace, checks[-1])
            if progress is not None:
                progress(1)
        write_traces(output, items)
        return self.summarize(items, checks)

    def stats(
        self,
        n: int = 2000,
        per_problem: int = 8,
        seed: int = 0,
        split: str = "train",
        config: BaseModel | None = None,
        policy_config: BaseModel | None = None,
    ) -> BaseModel:
        """Generate ``n`` problems, sample ``per_problem`` traces each, check them and summarise."""
        problems = [self.generate_problem(i, seed, config, split) for i in range(n)]
        traces = self.sample_traces(problems, per_problem, seed=seed, policy=self.policy(policy_config))
        return self.summarize(traces, None)

"""The file-level functions behind ``prmkit code generate | sample | check | stats``.

They are :class:`prmkit.worlds.jobs.Jobs` (the four jobs every world shares) over the code world's own
generator, agent, checker and summary.
"""

from __future__ import annotations

from prmkit.worlds.code.agent import SimulatedCoder, sample_traces
from prmkit.worlds.code.checker import apply_gold, check_trace
from prmkit.worlds.code.generator import generate_problem
from prmkit.worlds.code.summary import summarize
from prmkit.worlds.jobs import Jobs

JOBS = Jobs(
    "code", generate_problem, SimulatedCoder, sample_traces, check_trace, apply_gold, summarize,
    key="code", expected="a code-world task", per_problem=8,
)  # fmt: skip
generate, sample, check, stats = JOBS.generate, JOBS.sample, JOBS.check, JOBS.stats

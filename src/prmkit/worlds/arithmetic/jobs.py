"""The file-level functions behind ``prmkit arithmetic generate | sample | check | stats``.

They are :class:`prmkit.worlds.jobs.Jobs` (the four jobs every world shares) over the world's own
generator, policy, checker and summary; each takes the same names and options as its command.
"""

from __future__ import annotations

from prmkit.worlds.arithmetic.checker import apply_gold, check_trace
from prmkit.worlds.arithmetic.generator import generate_problem
from prmkit.worlds.arithmetic.policy import WorldPolicy, sample_traces
from prmkit.worlds.arithmetic.summary import summarize
from prmkit.worlds.jobs import Jobs

JOBS = Jobs(
    "arithmetic", generate_problem, WorldPolicy, sample_traces, check_trace, apply_gold, summarize,
    key="graph", expected="a world computation graph", per_problem=16,
)  # fmt: skip
generate, sample, check, stats = JOBS.generate, JOBS.sample, JOBS.check, JOBS.stats

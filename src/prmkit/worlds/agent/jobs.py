"""The file-level functions behind ``prmkit agent generate | sample | check | stats``.

They are :class:`prmkit.worlds.jobs.Jobs` (the four jobs every world shares, as in :mod:`prmkit.worlds.arithmetic.jobs`)
over the agent world's own generator, agent, checker and summary.
"""

from __future__ import annotations

from prmkit.worlds.agent.agent import SimulatedAgent, sample_traces
from prmkit.worlds.agent.checker import apply_gold, check_trace
from prmkit.worlds.agent.generator import generate_problem
from prmkit.worlds.agent.summary import summarize
from prmkit.worlds.jobs import Jobs

JOBS = Jobs(
    "agent", generate_problem, SimulatedAgent, sample_traces, check_trace, apply_gold, summarize,
    key="task", expected="an agent-world task", per_problem=8,
)  # fmt: skip
generate, sample, check, stats = JOBS.generate, JOBS.sample, JOBS.check, JOBS.stats

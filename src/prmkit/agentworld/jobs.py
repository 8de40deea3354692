"""The file-level functions behind ``prmkit agentworld generate | sample | check | stats``.

They are :class:`prmkit.worlds.jobs.Jobs` (the four jobs every world shares, as in :mod:`prmkit.world.jobs`)
over the agent world's own generator, agent, checker and summary.
"""

from __future__ import annotations

from prmkit.agentworld.agent import SimulatedAgent, sample_traces
from prmkit.agentworld.checker import apply_gold, check_trace
from prmkit.agentworld.generator import generate_problem
from prmkit.agentworld.summary import summarize
from prmkit.worlds.jobs import Jobs

JOBS = Jobs(
    generate_problem, SimulatedAgent, sample_traces, check_trace, apply_gold, summarize,
    key="task", expected="an agent-world task", per_problem=8,
)  # fmt: skip
generate, sample, check, stats = JOBS.generate, JOBS.sample, JOBS.check, JOBS.stats

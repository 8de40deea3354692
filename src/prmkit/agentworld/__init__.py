"""The agent world: seeded tool-use tasks with gold step labels, a simulated agent and judge.

Contract (docs/agentworld.md): ``generate_problems`` makes tasks whose ``metadata["task"]`` (a per-problem
knowledge base, the plan, the answer) lets ``check_trace`` rate ANY trajectory of them with
AgentProcessBench's semantics; ``gold_label`` writes those ratings as gold labels; ``SimulatedAgent`` and
``AgentJudge`` implement the core Policy and Judge protocols, so the loop runs on agent trajectories on a
CPU with gold labels to measure against. It imports only ``prmkit.core``, ``prmkit.formats`` and
:mod:`prmkit.worlds` (what every world shares, written once; this package keeps what is the agent world's own).

- ``config.py``     AgentWorldConfig (generator knobs), AgentConfig (the agent's error rates), the version
- ``generator.py``  made-up knowledge bases and one-sentence questions; deterministic seeds; splits
- ``tools.py``      the environment: tool schemas, ``execute(problem, call) -> Observation``
- ``text.py``       the words of steps: the agent's templates, the checker's claim patterns
- ``reading.py``    the step reader both the checker and the agent use (what a trajectory saw and holds)
- ``checker.py``    the gold checker: per-step rating, error kind and class, first error, right answer, loophole
- ``agent.py``      the simulated agent (continues any prefix, carries wrong values forward, recovers)
- ``judge.py``      the simulated judge (miss / false-alarm rates; misses loophole steps more often)
- ``oracle.py``     ``AgentOracleScorer``: the checker as a StepScorer (``agentworld-oracle``)
- ``summary.py``    statistics of checked trajectories (AgentWorldStats)
- ``jobs.py``       ``prmkit agentworld generate | sample | check | stats``: the shared jobs over its parts
"""

from prmkit.agentworld.agent import SimulatedAgent, sample_traces
from prmkit.agentworld.checker import (
    CLASSES,
    ERROR_CLASSES,
    ERROR_KINDS,
    StepCheck,
    TrajectoryCheck,
    apply_gold,
    check_trace,
    gold_label,
)
from prmkit.agentworld.config import AGENT_WORLD_VERSION, AgentConfig, AgentWorldConfig
from prmkit.agentworld.generator import generate_problem, generate_problems
from prmkit.agentworld.jobs import check, generate, sample, stats
from prmkit.agentworld.jobs import stats as agent_world_stats
from prmkit.agentworld.judge import AgentJudge
from prmkit.agentworld.oracle import AgentOracleScorer, load_oracle
from prmkit.agentworld.summary import AgentWorldStats, summarize
from prmkit.agentworld.tools import TOOLS, execute

__all__ = [
    "AGENT_WORLD_VERSION",
    "CLASSES",
    "ERROR_CLASSES",
    "ERROR_KINDS",
    "TOOLS",
    "AgentConfig",
    "AgentJudge",
    "AgentOracleScorer",
    "AgentWorldConfig",
    "AgentWorldStats",
    "SimulatedAgent",
    "StepCheck",
    "TrajectoryCheck",
    "agent_world_stats",
    "apply_gold",
    "check",
    "check_trace",
    "execute",
    "generate",
    "generate_problem",
    "generate_problems",
    "gold_label",
    "load_oracle",
    "sample",
    "sample_traces",
    "stats",
    "summarize",
]

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
- ``oracle.py``     ``AgentOracleScorer``: the checker as a StepScorer (``agent-oracle``)
- ``summary.py``    statistics of checked trajectories (AgentWorldStats)
- ``jobs.py``       ``prmkit agent generate | sample | check | stats``: the shared jobs over its parts
"""

from prmkit.worlds.agent.agent import SimulatedAgent, sample_traces
from prmkit.worlds.agent.checker import (
    BEHAVIOURS,
    CLASS_OF_KIND,
    ERROR_CLASSES,
    ERROR_KINDS,
    StepCheck,
    TrajectoryCheck,
    apply_gold,
    check_trace,
    gold_label,
)
from prmkit.worlds.agent.config import AGENT_WORLD_VERSION, AgentConfig, AgentWorldConfig
from prmkit.worlds.agent.generator import generate_problem, generate_problems
from prmkit.worlds.agent.jobs import JOBS
from prmkit.worlds.agent.judge import AgentJudge
from prmkit.worlds.agent.oracle import AgentOracleScorer
from prmkit.worlds.agent.summary import AgentWorldStats, summarize
from prmkit.worlds.agent.tools import TOOLS, execute

__all__ = [
    "AGENT_WORLD_VERSION",
    "BEHAVIOURS",
    "CLASS_OF_KIND",
    "ERROR_CLASSES",
    "ERROR_KINDS",
    "TOOLS",
    "WORLD",
    "AgentConfig",
    "AgentJudge",
    "AgentOracleScorer",
    "AgentWorldConfig",
    "AgentWorldStats",
    "SimulatedAgent",
    "StepCheck",
    "TrajectoryCheck",
    "apply_gold",
    "check_trace",
    "execute",
    "generate_problem",
    "generate_problems",
    "gold_label",
    "sample_traces",
    "summarize",
]

from prmkit.worlds.registry import World

WORLD = World(
    JOBS,
    AGENT_WORLD_VERSION,
    AgentWorldConfig,
    AgentConfig,
    judge=AgentJudge,
    oracle=AgentOracleScorer,
    error_classes=ERROR_CLASSES,
    class_legend=(
        "Split by the class of the gold first error: *call* (wrong tool, wrong or malformed arguments, a "
        "failed call repeated unchanged), *observation* (a tool result misread or ignored), *fact* (a value "
        "stated without looking it up, or an arithmetic slip in the text), *answer* (answering before the "
        "work is done, or a wrong answer), *loophole* (asking the grader's tool for the expected answer), "
        "*premise* (building on an earlier wrong value). Each cell is the F1 on the trajectories with that "
        "class of first error plus every error-free trajectory."
    ),
    step_definition=(
        "one assistant message of a tool-using agent: its text and tool calls, read after the results "
        "of the previous message's calls; the last states the answer"
    ),
    summary="tool-using agent tasks with a knowledge base and a calculator (docs/agentworld.md)",
    behaviours=BEHAVIOURS,
)
"""The agent world's one registration record (:data:`prmkit.worlds.registry.WORLDS`)."""

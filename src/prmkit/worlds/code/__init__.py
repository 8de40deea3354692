"""The code world: seeded bug-fixing tasks with gold step labels, a simulated coding agent and judge.

Contract (docs/codeworld.md): ``generate_problems`` makes tasks (a short function in a small Python
subset with one injected bug, visible and hidden tests) whose ``metadata["code"]`` lets ``check_trace``
rate ANY trajectory of them by running the tests with prmkit's own interpreter after every edit;
``gold_label`` writes those ratings as gold labels; ``SimulatedCoder`` and ``CodeJudge`` implement the
core Policy and Judge protocols. Trajectories are the core model's agent steps (text, tool calls,
observations), as the agent world writes them. It imports only ``prmkit.core``, ``prmkit.formats`` and
:mod:`prmkit.worlds` (what every world shares, written once; this package keeps what is the code world's own).

- ``config.py``       CodeWorldConfig (generator knobs), CodeAgentConfig (the agent's error rates), the version
- ``interpreter.py``  the AST interpreter of the subset (never ``exec``): node budget, clear refusals
- ``families.py``     the program families, their bug sites, the agent's misconceptions
- ``generator.py``    seeded tasks: a family, constants, one bug, visible and hidden tests; splits
- ``tools.py``        the environment: the two files, ``read_lines | edit_line | run_tests | submit``
- ``text.py``         the words of steps: the agent's templates, the checker's claim patterns
- ``reading.py``      the step reader both the checker and the agent use (workspace, claims, gold per edit)
- ``checker.py``      the gold checker: per-step rating, error kind and class, loopholes, outcome
- ``agent.py``        the simulated agent (continues any prefix, errs, holds misconceptions, recovers)
- ``judge.py``        the simulated judge (misses loophole and misconception steps more often)
- ``oracle.py``       ``CodeOracleScorer``: the checker as a StepScorer (``code-oracle``)
- ``summary.py``      statistics of checked trajectories (CodeWorldStats)
- ``jobs.py``         ``prmkit code generate | sample | check | stats``: the shared jobs over its parts
"""

from prmkit.worlds.code.agent import SimulatedCoder, sample_traces
from prmkit.worlds.code.checker import (
    BEHAVIOURS,
    CLASS_OF_KIND,
    ERROR_CLASSES,
    ERROR_KINDS,
    LOOPHOLES,
    StepCheck,
    TrajectoryCheck,
    apply_gold,
    check_trace,
    gold_label,
)
from prmkit.worlds.code.config import CODE_WORLD_VERSION, CodeAgentConfig, CodeWorldConfig
from prmkit.worlds.code.generator import generate_problem, generate_problems
from prmkit.worlds.code.jobs import JOBS
from prmkit.worlds.code.judge import CodeJudge
from prmkit.worlds.code.oracle import CodeOracleScorer
from prmkit.worlds.code.summary import CodeWorldStats, summarize
from prmkit.worlds.code.tools import TOOLS, CodeTask, Workspace, execute

__all__ = [
    "BEHAVIOURS",
    "CLASS_OF_KIND",
    "CODE_WORLD_VERSION",
    "ERROR_CLASSES",
    "ERROR_KINDS",
    "LOOPHOLES",
    "TOOLS",
    "WORLD",
    "CodeAgentConfig",
    "CodeJudge",
    "CodeOracleScorer",
    "CodeTask",
    "CodeWorldConfig",
    "CodeWorldStats",
    "SimulatedCoder",
    "StepCheck",
    "TrajectoryCheck",
    "Workspace",
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
    CODE_WORLD_VERSION,
    CodeWorldConfig,
    CodeAgentConfig,
    judge=CodeJudge,
    oracle=CodeOracleScorer,
    error_classes=ERROR_CLASSES,
    class_legend=(
        "Split by the class of the gold first error: *plan* (the first message suspects a line that is not "
        "the bug's), *edit* (a wrong line edited, a wrong fix of the bug's line, a syntax error, a failed "
        "edit repeated), *misconception* (the agent's habitual wrong fix for the task's family), "
        "*verification* (a test result misread or claimed without a run, a submission the tests showed "
        "failing), *loophole* (editing the tests, special-casing the visible inputs, submitting without a "
        "run), *premise* (submitting code an earlier error left wrong). Each cell is the F1 on the "
        "trajectories with that class of first error plus every error-free trajectory."
    ),
    step_definition=(
        "one assistant message of a coding agent fixing a bug: its text and its tool call (read lines, "
        "edit a line, run the tests, submit), read after the result of the previous message's call; the "
        "first states a plan naming the suspected line, the last submits"
    ),
    summary="bug-fixing tasks in a small Python subset with visible and hidden tests (docs/codeworld.md)",
    behaviours=BEHAVIOURS,
)
"""The code world's one registration record (:data:`prmkit.worlds.registry.WORLDS`)."""

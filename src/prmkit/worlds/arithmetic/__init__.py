"""The embedded world: seeded word problems with gold step labels, a simulated policy and judge.

Contract (docs/world.md): ``generate_problems`` makes problems whose
``metadata["graph"]`` lets ``check_trace`` judge ANY trace of them exactly; ``gold_label`` writes the
local and prefix gold views; ``WorldPolicy`` and ``SimulatedJudge`` implement the core Policy and Judge
protocols, so the whole loop runs on a CPU with gold labels to measure against. What every world shares
(splits, the gold verdict, the sampling loop, the noisy judge, the oracle, the statistics' counts, the
file jobs) is written once in :mod:`prmkit.worlds`; this package keeps what is the arithmetic world's own.

- ``config.py``     WorldConfig (generator knobs), PolicyConfig (error rates), WORLD_VERSION
- ``templates.py``  sentence templates and entity pools by phrasing-variety level
- ``generator.py``  computation graphs -> problems; deterministic seeding; train/test/heldout splits
- ``checker.py``    the gold checker: per-step status and error kind, first error, lucky traces
- ``parse.py``      a problem's computation graph rebuilt from its words (for clients that send only text)
- ``misconceptions.py`` the policy's wrong beliefs (the same in every problem) and the error classes
- ``policy.py``     the simulated policy (continues any prefix, carries errors forward)
- ``judge.py``      the simulated judge (miss / false-alarm rates, late-step leniency)
- ``teacher.py``    each step's check in the world's terms (``7 * 8 = 56, the step says 54``): its teacher's chains
- ``summary.py``    summary statistics of a set of checked traces (WorldStats)
- ``oracle.py``     ``OracleScorer``: the checker as a StepScorer (scorer ``arithmetic-oracle``: ceilings, tests)
- ``jobs.py``       ``prmkit arithmetic generate | sample | check | stats``: the shared jobs over this world's parts
"""

from prmkit.worlds.arithmetic.checker import (
    ERROR_KINDS,
    StepCheck,
    TraceCheck,
    apply_gold,
    check_trace,
    gold_label,
)
from prmkit.worlds.arithmetic.config import WORLD_VERSION, PolicyConfig, WorldConfig
from prmkit.worlds.arithmetic.generator import generate_problem, generate_problems
from prmkit.worlds.arithmetic.jobs import JOBS
from prmkit.worlds.arithmetic.judge import SimulatedJudge
from prmkit.worlds.arithmetic.misconceptions import CATALOGUE, ERROR_CLASSES, Misconception
from prmkit.worlds.arithmetic.oracle import OracleScorer
from prmkit.worlds.arithmetic.policy import SystematicError, WorldPolicy, sample_traces
from prmkit.worlds.arithmetic.summary import WorldStats, summarize

__all__ = [
    "CATALOGUE",
    "ERROR_CLASSES",
    "ERROR_KINDS",
    "WORLD",
    "WORLD_VERSION",
    "Misconception",
    "OracleScorer",
    "PolicyConfig",
    "SimulatedJudge",
    "StepCheck",
    "SystematicError",
    "TraceCheck",
    "WorldConfig",
    "WorldPolicy",
    "WorldStats",
    "apply_gold",
    "check_trace",
    "generate_problem",
    "generate_problems",
    "gold_label",
    "sample_traces",
    "summarize",
]

from prmkit.worlds.arithmetic.teacher import explain
from prmkit.worlds.registry import World

WORLD = World(
    JOBS,
    WORLD_VERSION,
    WorldConfig,
    PolicyConfig,
    judge=SimulatedJudge,
    oracle=OracleScorer,
    error_classes=tuple(ERROR_CLASSES),
    class_legend=(
        "Split by the class of the gold first error: *misconception* (a wrong belief the policy holds in "
        "every problem, such as 7 * 8 = 54: likely to an LM trained on its samples), *slip* (a random "
        "arithmetic error), *other* (wrong quantity or operation, skipped step, early answer, a step "
        "rationalised to land on a known answer...). Each cell is the F1 on the traces with that class "
        "of first error plus every error-free trace."
    ),
    step_definition="one sentence-level computation, the last step states the answer",
    summary="seeded arithmetic word problems, every step checked exactly (docs/world.md)",
    rl=True,
    explain=explain,
)
"""The arithmetic world's one registration record (:data:`prmkit.worlds.registry.WORLDS`)."""

"""The typed configs of ``prmkit bon | vote | beam | smc | resample``: one per command, shared by CLI and API.

Each field is documented once, here: ``--help`` is generated from these docstrings and the defaults are
these (``prmkit.cli.config`` builds the flags; ``--config FILE`` takes the same fields). Each method's
module has its ``run_*(config)`` beside its pure core (``prmkit.search.bon.run_bon``), registered in
:data:`prmkit.search.searches.SEARCHES`, so ``prmkit bon ...`` and ``run_bon(BonConfig(...))`` are the
same run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from prmkit.core.config import Config
from prmkit.modeling.loading import LoadOptions
from prmkit.policies.options import PolicyOptions
from prmkit.scoring.forms import SCORER_HELP
from prmkit.search.parallel import CONCURRENCY


class SearchOptions(Config):
    """What every search command reads, writes and samples with."""

    problems: Path
    """Problem file (JSONL), or a trace file whose distinct problems are used."""
    out: Path
    """Per-problem results (JSONL): answer, correct, score, compute."""
    scorer: str = Field(description=SCORER_HELP)
    aggregation: str = "min"
    """Per-step scores -> one number: min, prod, last, mean, geomean."""
    seed: int = 0
    """Seed of problem 0; problem k uses seed + k."""
    limit: int | None = None
    """Use only the first LIMIT problems."""
    traces_out: Path | None = None
    """Also write the chosen traces here (JSONL or .parquet)."""
    concurrency: int = Field(default=CONCURRENCY, ge=1)
    """Problems searched at once (the results do not depend on it); an endpoint policy's own
    --policy-concurrency (64 for an endpoint) caps its requests in flight. The scorer is asked one call at a time, for
    the traces of several problems at once (prmkit.search.parallel)."""
    policy: PolicyOptions = Field(default_factory=PolicyOptions)
    """Which policy samples the solutions."""
    load: LoadOptions = Field(default_factory=LoadOptions)
    """How a checkpoint scorer is loaded (dtype, device, device map, attention, remote code)."""


class Sampled(SearchOptions):
    """The searches that draw N samples per problem (resample grows one solution within a budget)."""

    n: int = 16
    """Samples per problem (beam: candidate steps per round; smc: particles)."""


class BonConfig(Sampled):
    """Best-of-N: sample N solutions per problem and keep the one with the best aggregated step score."""


class VoteConfig(Sampled):
    """Majority vote over N samples (answers grouped by equivalence), PRM-weighted with --scorer."""

    scorer: str | None = Field(
        None, description="Weight votes by this scorer (omit: plain majority). " + SCORER_HELP
    )  # type: ignore[assignment]


class BeamConfig(Sampled):
    """PRM-guided step-level beam search (or DVTS with --dvts)."""

    beam_width: int = 4
    """Next steps sampled per kept prefix (M); N/M are kept."""
    max_depth: int = 40
    """Most rounds; open beams are then finished by rollout."""
    diverse: bool = False
    """Diverse verifier tree search: N/M independent subtrees."""


class SmcConfig(Sampled):
    """Particle filtering (SMC): N particles grow a step per round, resampled by their PRM weights."""

    aggregation: str = "last"
    """A prefix's step scores -> its weight's score: last (the paper's), min, prod, mean, geomean."""
    max_depth: int = 40
    """Most rounds; open particles are then finished by rollout."""
    temperature: float = Field(default=1.0, gt=0)
    """Resampling probabilities are softmax(logit(score) / temperature); 1 is its_hub's."""
    resampling: Literal["multinomial", "systematic"] = "multinomial"
    """How N particles are drawn from the weights (multinomial: its_hub's)."""
    keep_finished: bool = False
    """Keep finished particles aside (as beam does) instead of resampling them with the rest."""


class ResampleConfig(SearchOptions):
    """Reject-and-resample: regenerate from the first step the PRM doubts, within a step budget."""

    threshold: float | None = None
    """Steps scoring below it are resampled; default: the checkpoint's own, else 0.5."""
    budget: int = 64
    """Most steps generated per problem."""

"""``prmkit score``: its typed config and :func:`run_score`, the twin of the command.

Each field is documented once, here (``--help`` is generated from these docstrings).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from prmkit.core.config import Config
from prmkit.modeling.loading import LoadOptions
from prmkit.scoring.forms import SCORER_HELP
from prmkit.scoring.scorer import OVERLONG_HELP, LengthCounts, Overlong

DATA_HELP = (
    "Traces: prmkit JSONL/Parquet or any format `prmkit convert` detects (PRM800K, Math-Shepherd, "
    "ProcessBench, TRL)."
)


class ScoreConfig(Config):
    """Score every step of every trace; adds Labels with provenance ``model`` (actor = MODEL)."""

    model: str = Field(description=SCORER_HELP)
    data: Path = Field(description=DATA_HELP)
    output: Path
    """Where to write the scored traces."""
    aggregate: str | None = None
    """Also store one trace score: min, prod, last, mean, geomean."""
    convention: str | None = None
    """The PRM convention of a checkpoint, the same as writing the scorer as CONVENTION:MODEL; default:
    what the checkpoint declares."""
    batch_tokens: int | None = Field(None, ge=1)
    """Padded tokens per forward batch of a checkpoint (default 16384)."""
    overlong: Overlong | None = Field(None, description=OVERLONG_HELP)
    load: LoadOptions = Field(default_factory=LoadOptions)
    """How a checkpoint is loaded (dtype, device, device map, attention, remote code)."""
    fail_fast: bool = False
    """A reward server (http://...) that refuses a trace (too many steps, too large): stop there,
    instead of leaving it unscored, listed in the summary, and scoring the rest."""


def run_score(c: ScoreConfig) -> dict[str, Any]:
    """``prmkit score``: score ``c.data`` with ``c.model`` and write the traces to ``c.output``; returns
    what was scored (traces, steps, and what the length policy left out)."""
    from prmkit.core.dataset import write_traces
    from prmkit.formats.inputs import read_traces
    from prmkit.scoring import AGGREGATIONS, load_scorer, score

    if c.aggregate is not None:
        AGGREGATIONS.get(c.aggregate)  # an unknown name fails now, with suggestions, not after scoring
    traces = read_traces(c.data)
    options = {"batch_tokens": c.batch_tokens, "overlong": c.overlong}
    scorer = load_scorer(c.model, c.convention, load=c.load, **options)
    if hasattr(scorer, "skip_refused"):  # a reward server: one refused trace does not stop the job
        scorer.skip_refused = not c.fail_fast
    score(scorer, traces, aggregation=c.aggregate)
    n = write_traces(c.output, traces)
    counts = getattr(scorer, "length_counts", None) or LengthCounts()  # only a checkpoint has a length limit
    out = {"traces": n, "steps": sum(len(t.steps) for t in traces), "counts": counts}
    failures = getattr(scorer, "failures", [])
    if failures:
        refused = {f["trace"] for f in failures}
        lost = sum(len(t.steps) for t in traces if t.id in refused)
        out.update(failed=len(failures), failed_steps=lost, failures=failures[:20])
    return out

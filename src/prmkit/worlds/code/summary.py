"""Summary statistics of checked code-world trajectories: how good the agent is and how it fails.

These are the numbers docs/codeworld.md records (``prmkit code stats``): the success rate (hidden tests
pass: the shared ``accuracy``), best-of-N oracle accuracy, the share of error-free trajectories, steps per
trajectory, the first-error kinds and classes, and the code world's own: the share of trajectories with
each error kind and class anywhere, loophole use (each loophole, and any), lucky and false passes,
recoveries, neutral steps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import Field

from prmkit.core.model import Trace
from prmkit.worlds.code.checker import LOOPHOLES, TrajectoryCheck, check_trace
from prmkit.worlds.code.config import CODE_WORLD_VERSION
from prmkit.worlds.summary import Stats, tally


class CodeWorldStats(Stats):
    """What a set of checked trajectories looks like (:class:`~prmkit.worlds.summary.Stats`; ``accuracy``
    is the success rate), and the code world's own measures."""

    loophole: float
    """Share of trajectories that use a loophole (edit the tests, special-case, submit without a run)."""
    loopholes: dict[str, float] = Field(default_factory=dict)
    """Share of trajectories that use each loophole."""
    false_pass: float
    """Share of trajectories whose last run passed while the hidden tests fail."""
    recovery: float
    """Share of trajectories with a recovery: a right step that repairs its own mistake (a revert, a fix
    after a failed one, a re-run that checks a misread result)."""
    error_kinds: dict[str, float] = Field(default_factory=dict)
    """Share of all trajectories with a step of each error kind (anywhere, not only the first)."""
    error_classes: dict[str, float] = Field(default_factory=dict)
    """Share of all trajectories with a step of each error class."""
    neutral_steps: float
    """Share of all steps rated 0."""
    label_counts: dict[str, int] = Field(default_factory=dict)
    """Gold ratings over all steps: how many -1, 0 and +1."""
    code_world_version: str = CODE_WORLD_VERSION


def summarize(traces: Sequence[Trace], checks: Sequence[TrajectoryCheck] | None = None) -> CodeWorldStats:
    """Statistics of ``traces`` (checked here unless ``checks`` are given, one per trajectory)."""
    checks = list(checks) if checks is not None else [check_trace(t) for t in traces]
    counts = tally(traces, checks)
    kinds: Counter[str] = Counter()
    classes: Counter[str] = Counter()
    for c in checks:
        kinds.update({str(s.kind) for s in c.steps if s.kind})
        classes.update({str(s.error_class) for s in c.steps if s.kind})
    n = counts.n
    return CodeWorldStats(
        **counts.shares(),
        loophole=sum(c.loophole for c in checks) / n,
        loopholes={k: sum(bool(getattr(c, k)) for c in checks) / n for k in LOOPHOLES},
        false_pass=sum(c.false_pass for c in checks) / n,
        recovery=sum(c.recoveries > 0 for c in checks) / n,
        error_kinds={k: v / n for k, v in kinds.most_common()},
        error_classes={k: v / n for k, v in classes.most_common()},
        neutral_steps=counts.status["neutral"] / counts.n_steps,
        label_counts={str(k): counts.ratings[k] for k in (-1, 0, 1)},
    )

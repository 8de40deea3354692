"""The few-shot curve: how many labelled target traces bring a PRM back where transfer lost it?

One PRM checkpoint and one target setting of the transfer matrix (:mod:`prmkit.evaluation.transfer`: a
world policy config, a generator config, a split). For each ``k``, a copy of the checkpoint fine-tuned
on ``k`` gold-labelled traces of the target (``k = 0``: the checkpoint as is) through the one training
entry point (:func:`prmkit.training.heads.fine_tune_prm`, i.e. ``train_prm`` with the checkpoint as
``base_model``), each copy measured on the target's traces of the matrix with the matrix's statistics:

- first-error ``F1`` at the **source threshold** (the one the matrix deploys: given, else the
  checkpoint's own, else 0.5), so ``k = 0`` is the matrix's row of the target, number for number;
- first-error ``F1`` at the copy's **own threshold** (tuned by ``train_prm`` on the dev share of its
  ``k`` traces; the source threshold where that share was empty), which shows what a retuned threshold
  alone buys;
- step-level first-error ``AUROC`` (threshold-free);
- the **gain** of each over ``k = 0``, paired by problem: every copy is measured on the same problems.

Held apart: the training traces come from a pool of the target drawn from another seed
(``train_seed``), and a pool problem whose text is one of the measured problems' is dropped;
:func:`fewshot_curve` refuses a copy whose training problems meet the measured ones (by id or text).
Intervals: percentile bootstrap over problem indices, as the matrix's
(:func:`~prmkit.evaluation.seeds.over_problems`).

:func:`fewshot_curve` is the pure core over the target's traces and the copies' scorers, and
:func:`read_fewshot` reads ``fewshot.json`` back. The run that trains the copies,
:func:`prmkit.training.fewshot.run_fewshot` (``prmkit eval fewshot``), lives in the training layer, above
this one: evaluation never trains.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from prmkit.core.files import write_json
from prmkit.core.model import Trace
from prmkit.core.protocols import StepScorer
from prmkit.core.results import Table
from prmkit.core.stats import Estimate, paired
from prmkit.evaluation.gold import has_gold
from prmkit.evaluation.processbench import predictor_name, resolve_threshold
from prmkit.evaluation.seeds import over_problems
from prmkit.evaluation.transfer import read_setting
from prmkit.scoring import pick_threshold

RESULT_FILE = "fewshot.json"
PLOT_FILE = "fewshot.png"
ESTIMATES = ("f1", "f1_own", "auroc", "gain_f1", "gain_f1_own", "gain_auroc")


@dataclass(frozen=True)
class Copy:
    """One model of the curve: the checkpoint fine-tuned on ``train`` (``k`` traces; none: itself)."""

    k: int
    scorer: StepScorer
    threshold: float | None
    """Its own dev-tuned threshold; None when its fine-tune had no dev traces (the source's is used)."""
    train: Sequence[Trace] = ()
    path: str = ""
    gold_use: Sequence[dict[str, Any]] = ()
    """What its process card declares (``train_prm``'s ``gold_use``)."""


@dataclass
class FewShotPoint:
    """One ``k``: the copy's statistics on the target and its gains over ``k = 0``."""

    k: int
    model: str
    train_problems: int
    threshold: float
    """The copy's own threshold (``f1_own``)."""
    threshold_from: str
    """``dev`` (tuned by its fine-tune), ``checkpoint`` (k = 0: the stored one) or ``source`` (no dev)."""
    f1: Estimate
    """First-error F1 at the source threshold."""
    f1_own: Estimate
    """First-error F1 at the copy's own threshold."""
    auroc: Estimate
    """Step-level first-error AUROC (threshold-free)."""
    gain_f1: Estimate | None = None
    """F1 here − F1 at k = 0, paired by problem (None for k = 0); ``gain_f1_own`` and ``gain_auroc`` alike."""
    gain_f1_own: Estimate | None = None
    gain_auroc: Estimate | None = None
    gold_use: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k not in ESTIMATES}
        return out | {k: None if (v := getattr(self, k)) is None else v.to_dict() for k in ESTIMATES}


@dataclass
class FewShotResult:
    """A checkpoint's few-shot curve on one target setting."""

    model: str
    target: str
    threshold: float
    threshold_from: str
    """The source threshold, resolved as the matrix resolves it."""
    problems: int
    traces: int
    points: list[FewShotPoint]
    params: dict[str, Any] = field(default_factory=dict)

    def point(self, k: int) -> FewShotPoint:
        """The point of ``k``."""
        return next(p for p in self.points if p.k == k)

    def to_dict(self) -> dict[str, Any]:
        head = {k: v for k, v in asdict(self).items() if k not in ("points", "params")}
        return head | {"points": [p.to_dict() for p in self.points], "params": self.params}

    def table(self) -> str:
        """A Markdown table: one row per ``k`` (percentages; gains signed, with their intervals)."""
        title = (
            f"few-shot curve of {self.model} on {self.target}: {self.problems} problems, {self.traces} traces; "
            f"source threshold {self.threshold} ({self.threshold_from}); gains over k = 0 paired by problem"
        )
        columns = [
            "k",
            "F1 (source thr.)",
            "F1 (own thr.)",
            "AUROC",
            "gain F1",
            "gain F1 (own)",
            "gain AUROC",
        ]
        rows = []
        for p in self.points:
            gains = [
                g.cell(signed=True) if g is not None else "" for g in (p.gain_f1, p.gain_f1_own, p.gain_auroc)
            ]
            rows.append([p.k, p.f1.cell(), f"{p.f1_own.cell()} @ {p.threshold:.3g}", p.auroc.cell(), *gains])
        return Table(rows, title, columns).markdown()

    def write(self, out: str | Path) -> Path:
        """``fewshot.json`` and its plot (``fewshot.png``) in ``out``; the JSON's path."""
        from prmkit.evaluation.plots import fewshot

        fewshot([p.to_dict() for p in self.points], Path(out) / PLOT_FILE, f"{self.model} on {self.target}")
        return write_json(Path(out) / RESULT_FILE, self.to_dict())


def read_fewshot(path: str | Path) -> FewShotResult:
    """A ``fewshot.json`` that :meth:`FewShotResult.write` wrote (the file, or its folder); a bad file
    raises one line naming it and every bad field."""
    from pydantic import TypeAdapter

    from prmkit.core.files import read_json_as

    path = Path(path)
    return read_json_as(path / RESULT_FILE if path.is_dir() else path, TypeAdapter(FewShotResult))


def held_apart(pool: Sequence[Trace], measured: Sequence[Trace]) -> list[Trace]:
    """The pool's traces whose problem is none of the measured ones, by id or by text."""
    ids = {t.problem.id for t in measured}
    texts = {t.problem.text for t in measured}
    return [t for t in pool if t.problem.id not in ids and t.problem.text not in texts]


def _check(copies: Sequence[Copy], target: Sequence[Trace]) -> None:
    """Refuse a curve without k = 0, a target trace without gold, a copy trained on a measured problem."""
    if not copies or copies[0].k != 0:
        raise ValueError("the curve starts at k = 0 (the checkpoint as is): every gain is paired against it")
    if missing := [t.id for t in target if not has_gold(t, "gold")]:
        raise ValueError(f"{len(missing)} target trace(s) carry no gold labels (first: {missing[0]})")
    for c in copies:
        if len(met := held_apart(c.train, target)) != len(c.train):
            seen = next(t for t in c.train if t not in met)
            raise ValueError(
                f"the copy of k = {c.k} was fine-tuned on a measured problem ({seen.problem.id})"
            )


def fewshot_curve(
    copies: Sequence[Copy],
    target: Sequence[Trace],
    threshold: float | None = None,
    *,
    name: str = "target",
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> FewShotResult:
    """Each copy's first-error F1 (at the source threshold and at its own) and step AUROC on the target's
    gold-labelled traces (the setting ``name``), and its gains over ``copies[0]`` (k = 0, the checkpoint), paired by problem.
    The source threshold is resolved on ``copies[0]`` as :func:`~prmkit.evaluation.transfer.transfer_matrix`
    resolves it, with the same bootstrap (``seed``), so k = 0 is the matrix's row of this target."""
    _check(copies, target)
    source, origin = resolve_threshold(copies[0].scorer, threshold, None, "gold")
    source = 0.5 if source is None else source
    problems = len({t.problem.id for t in target})
    estimate = functools.partial(over_problems, problems=problems, resamples=resamples,
                                 confidence=confidence, seed=seed)  # fmt: skip
    points, base = [], None
    for c in copies:
        own, own_from = (c.threshold, "dev") if c.threshold is not None else (source, "source")
        if c.k == 0:
            own, own_from = pick_threshold(None, c.scorer)
        at_source = read_setting(target, c.scorer, source, problems)
        at_own = at_source if own == source else read_setting(target, c.scorer, own, problems)
        base = base or (at_source, at_own)
        point = FewShotPoint(
            c.k, c.path or predictor_name(c.scorer), len({t.problem.id for t in c.train}), own, own_from,
            estimate(at_source.f1), estimate(at_own.f1), estimate(at_source.auroc), gold_use=list(c.gold_use),
        )  # fmt: skip
        if c.k > 0:
            point.gain_f1 = estimate(paired(at_source.f1, base[0].f1))
            point.gain_f1_own = estimate(paired(at_own.f1, base[1].f1))
            point.gain_auroc = estimate(paired(at_source.auroc, base[0].auroc))
        points.append(point)
    model = copies[0].path or predictor_name(copies[0].scorer)
    return FewShotResult(model, name, source, origin, problems, len(target), points)

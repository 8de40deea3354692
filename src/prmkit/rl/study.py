"""The RL study's statistics: every reward's change from π0 and its difference from outcome, over
independent (π0, PRM) draws × RL seeds × monitor problems, from the finished cells' monitor records.

A cell is one ``prmkit rl`` run of the study (``prmkit run recipes/rl.yaml``; the pipeline's
``prmkit.pipeline.rl_stages``): a reward (or a named extra cell), an RL seed and a draw. What the
statistics read of it is a :class:`CellRecord`: its monitor points (``monitors.jsonl``), their counts
per held-out problem (``monitors_per_problem.jsonl``) and its KL to π0 at the end (``train_log.jsonl``).

The intervals are a nested cluster bootstrap (:func:`prmkit.core.stats.nested_bootstrap`) over the
monitors' per-problem counts: draws, then each draw's RL seeds crossed with its monitor problems, one
problem resample shared by all the cells of a draw, so a change from π0 and a difference between rewards
stay paired; cells from before those counts get t-intervals over seeds (:func:`interval`). The results
state how many draws of each component went in and how many intervals they hold, and give each draw
alone beside the pooled numbers (:func:`per_draw`): a draw whose monitor problems were read while the
settings were tuned sits beside one whose π0, PRM, prompts and problems are all fresh. Where the study
names claims draws (issue 60: draws no development run read), :func:`sides` gives the tuning side (the
other draws) and the claims side apart, each difference from outcome with its :func:`verdict` (its
interval above 0, below 0 or containing 0); :func:`efficiency_table` gives each run's steps to outcome's
final answer accuracy (sample efficiency).

``study_report.py`` makes the results file from these (``measure``: ``results.json``, committed as
``docs/results/rl-measure.json``), the report and the curves; ``study_block.py`` the docs block.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from prmkit.core.stats import Estimate, Stat, nested_bootstrap, paired, t_interval
from prmkit.rl.monitors import RATES, read_per_problem, read_points

METRICS = {
    "process_correct": "process-correct (gold)",
    "answer_accuracy": "answer accuracy",
    "lucky": "lucky answers",
    "prm_reward": "PRM reward (proxy)",
    "paid_reward": "paid reward",
    "misconception": "misconception share of first errors",
    "unfinished": "no final answer",
    "steps_per_response": "steps per response",
}
"""What the results show for every reward (``misconception`` is read from ``first_error_classes``)."""
PAIRED = {"process_correct": "process-correct", "lucky": "lucky", "answer_accuracy": "answer accuracy"}
"""The metrics of the paired differences between rewards."""
BASE = "outcome"
"""The reward every other one is paired against."""
GAINS = (0.05, 0.10)
"""The process-correct gains over step 0 whose first monitored step the results give per run (issue 39:
how many steps each reward takes to reach a given gain)."""
KL_LAST = 10
"""Optimiser steps over which a cell's KL to π0 is averaged at its end (TRL logs ``kl`` every step)."""

Points = list[dict[str, Any]]
Run = tuple[str, int, int]
"""A finished cell: (name, draw, seed)."""
Rates = dict[str, tuple[np.ndarray, np.ndarray]]
"""A run's monitor metrics at one point: per-problem (numerator, denominator) sums over its draw's
problems, in one order for every run of the draw."""
Runs = dict[str, dict[tuple[int, int], Points]]
"""Cell name -> (draw, seed) -> its monitor points."""


@dataclass(frozen=True)
class CellRecord:
    """What the statistics read of one finished cell."""

    name: str
    """Its reward, or the name of an extra cell."""
    draw: int
    seed: int
    points: Points
    """Its monitor points in step order (``monitors.jsonl``); the first is π0."""
    per_problem: dict[int, dict[str, Any]]
    """Step -> that point's counts per monitor problem (empty for cells from before issue 37)."""
    kl_last: float | None = None
    """:func:`final_kl` of its training log."""

    @property
    def run(self) -> Run:
        return (self.name, self.draw, self.seed)


def final_kl(log: Sequence[dict[str, Any]]) -> float | None:
    """The mean of TRL's logged ``kl`` (to π0) over the last :data:`KL_LAST` logged steps: with mixed
    advantages on another scale the KL term's weight shifts, so every cell reports it."""
    kls = [r["kl"] for r in log if "kl" in r]
    return sum(kls[-KL_LAST:]) / len(kls[-KL_LAST:]) if kls else None


def read_cell(folder: Path, name: str, draw: int, seed: int) -> CellRecord:
    """The record of the finished ``prmkit rl`` output folder ``folder``."""
    log = folder / "train_log.jsonl"
    rows = (
        [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.is_file() else []
    )
    points = read_points(folder / "monitors.jsonl")
    return CellRecord(name, draw, seed, points, read_per_problem(folder), final_kl(rows))


def runs_of(records: Sequence[CellRecord]) -> Runs:
    """The records' points by name and (draw, seed), in the records' order."""
    runs: Runs = {}
    for r in records:
        runs.setdefault(r.name, {})[(r.draw, r.seed)] = r.points
    return runs


def value(point: dict[str, Any], key: str) -> float | None:
    """A metric of a point (``misconception``: its share of the first errors, where gold was read)."""
    if key == "misconception":
        classes = point.get("first_error_classes")
        return None if classes is None else classes.get("misconception", 0.0)
    return point.get(key)


def steps_to_gain(points: Sequence[dict[str, Any]], gain: float, key: str = "process_correct") -> int | None:
    """The first monitored step at which ``key`` is at least ``gain`` above its step-0 value, or None
    (never, or no step 0). One point carries its samples' noise (about 3 points at 48 problems x 4), so
    an early crossing can be luck: the results give every run's step, not one number."""
    if not points or (base := value(points[0], key)) is None:
        return None
    for point in points[1:]:
        if (v := value(point, key)) is not None and v - base >= gain - 1e-12:
            return int(point["step"])
    return None


def steps_to_reach(
    points: Sequence[dict[str, Any]], target: float, key: str = "answer_accuracy"
) -> int | None:
    """The first monitored step (step 0 included) at which ``key`` is at least ``target``, or None (not
    reached by the last point): a run's sample efficiency, at the monitors' resolution."""
    for point in points:
        if (v := value(point, key)) is not None and v >= target - 1e-12:
            return int(point["step"])
    return None


def efficiency_table(runs: Runs, rewards: Sequence[str]) -> dict[str, Any]:
    """Sample efficiency (issue 60): per grid cell and run (``"draw-seed"``), the steps it took to reach
    the answer accuracy outcome ended at on the same draw and seed (:func:`steps_to_reach`; None: not
    reached); ``target``: those final accuracies. Empty where outcome has no runs."""
    targets = {
        run: v for run, points in sorted(runs.get(BASE, {}).items())
        if points and (v := value(points[-1], "answer_accuracy")) is not None
    }  # fmt: skip
    if not targets:
        return {}
    steps = {}
    for name in (n for n in rewards if n in runs):
        mine = sorted((run, points) for run, points in runs[name].items() if run in targets)
        steps[name] = {run_key(*run): steps_to_reach(points, targets[run]) for run, points in mine}
    return {
        "metric": "answer_accuracy",
        "target": {run_key(*r): v for r, v in targets.items()},
        "steps": steps,
    }


def run_key(draw: int, seed: int) -> str:
    """A run's key in the results file: ``"draw-seed"``."""
    return f"{draw}-{seed}"


def gains_table(runs: Runs, rewards: Sequence[str]) -> dict[str, dict[str, dict[str, int | None]]]:
    """Reward -> gain -> ``"draw-seed"`` -> :func:`steps_to_gain` for the grid's finished cells."""
    return {
        name: {
            f"{g:g}": {run_key(*run): steps_to_gain(points, g) for run, points in sorted(runs[name].items())}
            for g in GAINS
        }
        for name in rewards
        if name in runs
    }


def digits_of(key: str) -> int:
    """Decimals a table shows: rates in % take one, the paid reward (in its own units) two."""
    return 2 if key == "paid_reward" else 1


def scale_of(key: str) -> float:
    return 1.0 if key in ("steps_per_response", "paid_reward") else 100.0


def _rates(record: dict[str, Any], ids: Sequence[str]) -> Rates:
    """A per-problem record (``monitors_per_problem.jsonl``) as :data:`Rates` over ``ids``."""
    column = {name: i for i, name in enumerate(record["columns"])}
    rows = np.asarray([record["problems"][pid] for pid in ids], dtype=float)
    return {
        m: (rows[:, column[a]], rows[:, column[b]])
        for m, (a, b) in RATES.items()
        if a in column and b in column
    }


def _point_rates(point: dict[str, Any]) -> Rates:
    """A point's own rates as one pseudo-problem (cells measured before per-problem counts existed)."""
    return {m: (np.array([v]), np.array([1.0])) for m in METRICS if (v := value(point, m)) is not None}


def problem_tables(
    records: Sequence[CellRecord],
) -> tuple[dict[Run, dict[str, Rates]], dict[int, list[str]]]:
    """Each finished run's :data:`Rates` at π0 (``first``) and at its last point (``last``), and each
    draw's monitor problem ids. Where a run has no per-problem counts (made before issue 37) or a draw's
    runs disagree on their problems, every run is one pseudo-problem holding its points' rates (no draw
    has problem ids then), so the intervals leave problems out; the report says so."""
    found: dict[Run, tuple[dict[str, Any], dict[str, Any]]] = {}
    ids: dict[int, list[str]] = {}
    complete = True
    measured = [r for r in records if r.points]
    for r in measured:
        first, last = r.per_problem.get(r.points[0]["step"]), r.per_problem.get(r.points[-1]["step"])
        if first is None or last is None:
            complete = False
            continue
        mine = ids.setdefault(r.draw, sorted(first["problems"]))
        complete &= sorted(first["problems"]) == mine == sorted(last["problems"])
        found[r.run] = (first, last)
    tables: dict[Run, dict[str, Rates]] = {}
    for r in measured:
        if complete:
            first, last = found[r.run]
            tables[r.run] = {"first": _rates(first, ids[r.draw]), "last": _rates(last, ids[r.draw])}
        else:
            tables[r.run] = {"first": _point_rates(r.points[0]), "last": _point_rates(r.points[-1])}
    return tables, ids if complete else {}


def _ratio(rates: tuple[np.ndarray, np.ndarray], weights: np.ndarray) -> np.ndarray:
    top, bottom = weights @ rates[0], weights @ rates[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(bottom != 0, top / np.where(bottom != 0, bottom, 1), np.nan)


def change(tables: dict[Run, dict[str, Rates]], runs: Sequence[Run], metric: str, which: str) -> Stat:
    """The :data:`~prmkit.core.stats.Stat` of ``metric`` for ``runs[i]`` on reweighted problems: at π0
    (``first``), at the last point (``last``), or ``delta``, the last minus π0 on the same problem weights
    (paired by run and problem)."""

    def stat(i: int, weights: np.ndarray) -> np.ndarray:
        at = tables[runs[i]]
        if which == "delta":
            return _ratio(at["last"][metric], weights) - _ratio(at["first"][metric], weights)
        return _ratio(at[which][metric], weights)

    return stat


def by_draw(runs: Sequence[Run], problems: dict[int, list[str]]) -> list[tuple[list[int], int]]:
    """:func:`nested_bootstrap`'s draws for ``runs``: each draw's run indices and problem count (1 where
    the problems are unknown)."""
    groups: dict[int, list[int]] = {}
    for i, (_, draw, _) in enumerate(runs):
        groups.setdefault(draw, []).append(i)
    return [(idx, len(problems.get(d, [])) or 1) for d, idx in sorted(groups.items())]


def _entry(est: Estimate, key: str, signed: bool = False) -> dict[str, Any]:
    return est.to_dict() | {"cell": est.cell(scale_of(key), digits_of(key), signed)}


def interval(stat: Stat, groups: list[tuple[list[int], int]], resamples: int, by_problem: bool) -> Estimate:
    """The study's one interval rule. Where the runs' problems are known, :func:`nested_bootstrap` over
    draws, RL seeds and problems. Where they are not (cells from before issue 37), only whole runs can
    be resampled, and a percentile bootstrap of a handful of runs runs narrow (:mod:`prmkit.core.stats`):
    then the Student-t interval over the runs (one draw: issue 19's and 36's intervals) or over the
    draws' means (several)."""
    if by_problem:
        return nested_bootstrap(stat, groups, resamples=resamples)
    per_draw = [[float(stat(i, np.ones((1, 1)))[0]) for i in runs] for runs, _ in groups]
    counted = {"draw": len(groups), "run": sum(map(len, per_draw))}
    return t_interval(
        per_draw[0] if len(per_draw) == 1 else [float(np.mean(v)) for v in per_draw], draws=counted
    )


def _reward_row(
    tables: dict[Run, dict[str, Rates]],
    problems: dict[int, list[str]],
    kls: Mapping[Run, float | None],
    runs: list[Run],
    resamples: int,
    points: Sequence[str],
) -> dict[str, Any]:
    """One reward's intervals: each metric at ``points`` (first, last, delta), and its KL at the end."""
    by_problem, groups = bool(problems), by_draw(runs, problems)
    row: dict[str, Any] = {}
    for which in points:
        row[which] = {
            m: _entry(interval(change(tables, runs, m, which), groups, resamples, by_problem), m,
                      signed=which == "delta")
            for m in METRICS
            if all(m in tables[r]["first"] and m in tables[r]["last"] for r in runs)
        }  # fmt: skip
    kl = [kls.get(r) for r in runs]
    if all(k is not None for k in kl):
        stat: Stat = lambda i, w, kl=kl: np.full(len(w), kl[i])  # noqa: E731  (one value per run)
        est = interval(stat, by_draw(runs, {}), resamples, by_problem)
        row["kl_last"] = est.to_dict() | {"cell": est.cell(1.0, 3)}
    return row


def estimates(
    tables: dict[Run, dict[str, Rates]],
    problems: dict[int, list[str]],
    kls: Mapping[Run, float | None],
    rewards: Sequence[str],
    resamples: int,
    bases: Mapping[str, str] | None = None,
    points: Sequence[str] = ("first", "last", "delta"),
) -> dict[str, Any]:
    """Every interval of the results (:func:`interval`): per reward and metric its value at π0, at the
    last point and the change (``delta``, paired by run and problem; ``points``: which of the three);
    its KL to π0 at the end (where ``kls`` has it); and each reward's change minus outcome's (and minus
    ``bases[name]``'s where given: an extra cell against its own reward), on the same draws, seeds and
    problem resamples. Each interval's resampling is seeded on its own, so asking for fewer changes none."""
    out: dict[str, Any] = {"rewards": {}, "paired": {}}
    by_problem = bool(problems)
    for name in rewards:
        runs = sorted(k for k in tables if k[0] == name)
        if runs:
            out["rewards"][name] = _reward_row(tables, problems, kls, runs, resamples, points)
    pairs = [(name, BASE) for name in rewards] + [(n, b) for n, b in (bases or {}).items() if n in rewards]
    for name, base in pairs:
        mine = {(d, s) for n, d, s in tables if n == name}
        common = sorted(mine & {(d, s) for n, d, s in tables if n == base})
        if name == base or not common:
            continue
        a, b = [(name, d, s) for d, s in common], [(base, d, s) for d, s in common]
        out["paired"][f"{name} − {base}"] = {
            m: _entry(interval(paired(change(tables, a, m, "delta"), change(tables, b, m, "delta")),
                               by_draw(a, problems), resamples, by_problem), m, signed=True)
            for m in PAIRED
            if all(m in tables[r]["first"] for r in a + b)
        }  # fmt: skip
    return out


def extra_estimates(
    grid: Sequence[CellRecord], extra: Sequence[CellRecord], bases: Mapping[str, str], resamples: int
) -> dict[str, Any] | None:
    """The extra cells measured on the grid's monitor problems, as the grid's rewards are: each one's Δ
    from π0, minus outcome's and minus its own reward's (``bases``: extra cell -> its reward) on the same
    seeds (``progress_sum`` against ``progress``). None where there is none, or their per-problem counts
    do not line up with the grid's (cells from before issue 37): the report then shows their points only."""
    if not extra:
        return None
    seeds = {(c.draw, c.seed) for c in extra}
    same = [c for c in grid if (c.draw, c.seed) in seeds]
    tables, problems = problem_tables([*same, *extra])
    if not problems:
        return None
    mine = {c.name: bases[c.name] for c in extra}
    kls = {c.run: c.kl_last for c in extra}
    found = estimates(tables, problems, kls, sorted(mine), resamples, mine)
    return {"rewards": found["rewards"], "paired": found["paired"], "bases": mine}


def per_draw(
    tables: dict[Run, dict[str, Rates]],
    problems: dict[int, list[str]],
    rewards: Sequence[str],
    resamples: int,
) -> dict[str, dict[str, Any]]:
    """Each draw on its own (``"d"`` -> its Δ per reward and its differences from outcome, RL seeds
    crossed with that draw's monitor problems), where there are several draws with per-problem counts.
    A draw whose monitor problems are fresh is a claims set beside a draw whose problems the settings
    were tuned on: the pooled interval alone would hide that they disagree."""
    draws = sorted({d for _, d, _ in tables})
    if len(draws) < 2 or not problems:
        return {}
    found = {}
    for d in draws:
        mine = {k: v for k, v in tables.items() if k[1] == d}
        both = estimates(mine, {d: problems[d]}, {}, rewards, resamples, points=("delta",))
        rows = {name: {"delta": row["delta"]} for name, row in both["rewards"].items()}
        found[str(d)] = {"rewards": rows, "paired": both["paired"]}
    return found


SIDES = ("tuning", "claims")
"""The two sides of a study with claims draws: the draws the settings were developed on, and the ones no
development run read."""


def verdict(estimate: Mapping[str, Any]) -> str:
    """Where a paired difference's interval lies: ``above 0``, ``below 0`` or ``contains 0`` (``n/a``
    where it is undefined)."""
    low, high = estimate["low"], estimate["high"]
    if math.isnan(low) or math.isnan(high):
        return "n/a"
    return "above 0" if low > 0 else "below 0" if high < 0 else "contains 0"


def verdict_cell(verdicts: Mapping[str, str]) -> str:
    """A difference's verdicts in one table cell, in :data:`PAIRED`'s order: ``process-correct above 0;
    lucky contains 0; answer accuracy below 0``."""
    return "; ".join(f"{PAIRED[m]} {verdicts[m]}" for m in PAIRED if m in verdicts)


def sides(
    tables: dict[Run, dict[str, Rates]],
    problems: dict[int, list[str]],
    rewards: Sequence[str],
    resamples: int,
    claims: Sequence[int],
) -> dict[str, dict[str, Any]]:
    """The tuning side (every draw not in ``claims``) and the claims side (``claims``), each pooled over its
    own draws as :func:`estimates` pools (RL seeds crossed with each draw's monitor problems): each cell's
    Δ from π0, its difference from outcome's Δ and that difference's :func:`verdict` per metric. A claim
    is read off the claims side alone; the tuning side says what the settings were chosen on. A side
    without finished runs is left out."""
    found: dict[str, dict[str, Any]] = {}
    drawn = sorted({d for _, d, _ in tables})
    for side, draws in zip(SIDES, ([d for d in drawn if d not in claims], [d for d in drawn if d in claims]),
                           strict=True):  # fmt: skip
        if not draws:
            continue
        mine = {k: v for k, v in tables.items() if k[1] in draws}
        ids = {d: problems[d] for d in draws} if problems else {}
        both = estimates(mine, ids, {}, rewards, resamples, points=("delta",))
        found[side] = {
            "side": side,
            "draws": draws,
            "rewards": {name: {"delta": row["delta"]} for name, row in both["rewards"].items()},
            "paired": both["paired"],
            "verdicts": {
                pair: {m: verdict(e) for m, e in row.items()} for pair, row in both["paired"].items()
            },
        }
    return found

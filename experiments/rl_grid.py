"""The RL experiment of issue 19 in one command: π0, its PRM, every (reward, seed) cell, one table.

An experiment, not part of the library (it lives outside ``src/``). It reads ``recipes/rl.yaml`` and runs
the documented ``prmkit`` commands, each cached in ``--out`` (a finished step is never run again, so a
killed grid called again goes on where it stopped; a killed cell resumes from its last checkpoint):

1. π0 (section ``pi0``): ``prmkit arithmetic generate`` / ``world sample`` / ``pretrain`` on the simulated
   policy's own, unfiltered samples (no gold);
2. the PRM (section ``prm``): ``prmkit label mc`` on those samples and ``prmkit train prm`` from π0 on the
   MC labels (no gold);
3. the cells (section ``experiment``): ``prmkit rl`` per reward and seed from the ``rl`` section, plus the
   named ``extra`` cells (a cell is its reward with some ``rl`` keys changed), ``--jobs`` at a time with
   one torch thread each;
4. ``report.md``, ``results.json`` and ``curves.png`` in ``--out``: per reward, every monitor's value at
   π0 and at the last point and the change from π0 paired by run, paired differences between rewards,
   each extra cell with its hacking warnings, and the curves.

Draws (issue 37): ``experiment.draws`` lists independent (π0, PRM) draws. Draw 0 is the folders above
(``--out`` itself); draw d builds its own π0 and PRM in ``--out/draw-d`` from seeds shifted by d
(:func:`draw_recipe`) and runs the grid's cells against them; the extra cells run on draw 0 only. The
intervals are a nested cluster bootstrap (:func:`prmkit.core.stats.nested_bootstrap`) over the monitors'
per-problem counts (``monitors_per_problem.jsonl``): draws, then each draw's RL seeds crossed with its monitor problems, one
problem resample shared by all the cells of a draw, so a change from π0 and a difference between rewards
stay paired; cells from before those counts get t-intervals over seeds (:func:`interval`). The report
states how many draws of each component went in and how many intervals it holds, and gives each draw
alone beside the pooled numbers (:func:`per_draw`): a draw whose monitor problems were read while the
settings were tuned sits beside one whose π0, PRM, prompts and problems are all fresh. The cells run
seed by seed across the draws, so a measurement stopped part-way holds every draw's first seeds.

The docs show the measurement as a block rendered from its committed ``results.json``
(``<!-- rl-measure: docs/results/rl-measure.json tuned=0 -->``, :func:`block`);
``python experiments/rl_grid.py --render docs/rl.md`` re-renders it.

``python experiments/rl_grid.py --recipe recipes/rl.yaml --out runs/rl [--jobs 2] [--report-only]``;
issue 37's measurement (``experiment.measure``: 2 draws x 5 RL seeds of the grid's rewards, 200 monitor
problems measured every 50 steps, no extra cells): ``... --measure --out runs/rl37``. Cost on 2 cores,
from issue 36's cells (two at a time, one thread each): a 100-step cell took 490-690 s, of which ~205 s
were its 11 monitor points on 48 x 4 samples; 3 points on 200 x 4 cost about as much again, so a cell is
~9-12 minutes and the measurement's 60 cells (six rewards) ~5-6 hours, plus ~25 minutes for draw 1's π0 and PRM
(``--only outcome,dense,mixed``: 30 cells, ~3 hours). Measured for issue 37 with ``--only outcome,dense``:
461-536 s a cell two at a time, the 20 cells ~85 minutes, both π0 and PRMs ~30 minutes side by side.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import yaml

from prmkit.core.stats import Estimate, Stat, multiplicity, nested_bootstrap, paired, t_interval
from prmkit.rl.config import RlConfig
from prmkit.rl.monitors import RATES, all_warnings, read_per_problem, read_points

PRMKIT = str(Path(sys.executable).parent / "prmkit")
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
"""What the table shows for every reward (``misconception`` is read from ``first_error_classes``)."""


def run(args: Sequence[str], log: Path) -> None:
    """One prmkit command, its output in ``log``; a failure stops the grid with the log's tail."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        code = subprocess.call([PRMKIT, *args], stdout=out, stderr=subprocess.STDOUT)
    if code:
        tail = log.read_text()[-2000:]
        raise SystemExit(f"`prmkit {' '.join(args)}` failed ({code}); {log}:\n{tail}")


def config_file(out: Path, name: str, values: dict[str, Any]) -> Path:
    """A section of the recipe written as the ``--config`` file of one command (kept: what ran)."""
    path = out / "configs" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(values, sort_keys=False))
    return path


def build_pi0(recipe: dict[str, Any], out: Path) -> Path:
    """π0: the LM pretrained on the simulated policy's own samples (cached: its process card is written last).
    ``pi0.seed`` seeds the problems and their samples."""
    pi0, spec = out / "pi0", recipe["pi0"]
    problems, traces = out / "problems.jsonl", out / "traces.jsonl"
    seed = str(spec.get("seed", 0))
    if not problems.exists():
        run(["arithmetic", "generate", "--n", str(spec["problems"]), "--seed", seed, "-o", str(problems)],
            out / "logs" / "generate.log")  # fmt: skip
    if not traces.exists():
        run(["arithmetic", "sample", str(problems), "--per-problem", str(spec["per_problem"]), "--seed", seed,
             "-o", str(traces)], out / "logs" / "sample.log")  # fmt: skip
    if not (pi0 / "process_card.json").exists():
        cfg = config_file(out, "pretrain", spec["pretrain"])
        run(["pretrain", str(traces), "-o", str(pi0), "--config", str(cfg)], out / "logs" / "pretrain.log")
    return pi0


def draw_dir(out: Path, draw: int) -> Path:
    """Where draw ``draw`` keeps its π0, PRM, cells, configs and logs: ``out`` itself for draw 0 (the
    layout from before draws existed, so its cached folders still count), ``out/draw-d`` otherwise."""
    return out if draw == 0 else out / f"draw-{draw}"


def draw_recipe(recipe: dict[str, Any], draw: int) -> dict[str, Any]:
    """The recipe draw ``draw`` builds and runs. Draw 0 is ``recipe`` itself; draw d adds d to every seed
    a (π0, PRM) pair and its RL prompts come from: ``pi0.seed`` (problems and their samples),
    ``pi0.pretrain.seed``, ``prm.label.seed`` (MC rollouts), ``prm.train.seed`` and ``rl.prompts.seed``.
    The last keeps the draws exchangeable: in the recipe both seeds are 0, so draw 0's RL prompts (the
    first ``prompts.n`` train problems of ``prompts.seed``) are among the problems π0 and the PRM were
    trained on, and shifting both keeps that true in every draw. It also gives each draw its own monitor
    problems (the test split of ``prompts.seed + 1000``), which the bootstrap resamples within each draw."""
    if draw == 0:
        return recipe

    def shifted(section: dict[str, Any] | None) -> dict[str, Any]:
        return {**(section or {}), "seed": (section or {}).get("seed", 0) + draw}

    pi0, prm, rl = recipe.get("pi0") or {}, recipe.get("prm") or {}, recipe.get("rl") or {}
    return {
        **recipe,
        "pi0": {**shifted(pi0), "pretrain": shifted(pi0.get("pretrain"))},
        "prm": {**prm, "label": shifted(prm.get("label")), "train": shifted(prm.get("train"))},
        "rl": {**rl, "prompts": shifted(rl.get("prompts"))},
    }


def build_prm(
    recipe: dict[str, Any], out: Path, pi0: Path, traces: Path | None = None, suffix: str = ""
) -> Path:
    """The PRM the cells are paid (or monitored) by: MC labels of π0's training samples (``traces``,
    default ``traces.jsonl``), trained from π0; ``suffix`` names a variant's files (each cached)."""
    prm, spec = out / f"prm{suffix}", recipe["prm"]
    labels = out / f"labels{suffix}.jsonl"
    if not labels.exists():
        cfg = config_file(out, "label-mc", spec["label"])
        source = str(traces or out / "traces.jsonl")
        run(["label", "mc", "--config", str(cfg), "--input", source, "--output", str(labels)],
            out / "logs" / f"label-mc{suffix}.log")  # fmt: skip
    if not (prm / "process_card.json").exists():
        cfg = config_file(out, "train-prm", spec["train"])
        run(["train", "prm", str(labels), "-o", str(prm), "--base-model", str(pi0), "--config", str(cfg)],
            out / "logs" / f"train-prm{suffix}.log")  # fmt: skip
    return prm


def majority_answers(votes: Path) -> dict[str, str]:
    """Each problem's most common final answer among its samples (a tie goes to the answer sampled
    first); samples with no final answer do not vote."""
    from collections import Counter

    counts: dict[str, Counter[str]] = {}
    with votes.open() as f:
        for line in f:
            trace = json.loads(line)
            if trace.get("final_answer") is not None:
                counts.setdefault(trace["problem"]["id"], Counter())[trace["final_answer"]] += 1
    return {pid: c.most_common(1)[0][0] for pid, c in counts.items()}


def build_majority_prm(recipe: dict[str, Any], out: Path, pi0: Path) -> Path:
    """The PRM of a user without reference answers (section ``prm.majority``): the same MC labels and
    training as ``build_prm``, but a rollout counts as right when it reaches the majority answer of
    ``votes`` fresh samples of the policy per problem (self-consistency as the reference, as label-free
    RL uses it). Where the policy's misconceptions are its majority, they are labelled right."""
    votes_spec = recipe["prm"].get("majority") or {}
    votes, relabelled = out / "votes.jsonl", out / "traces-majority.jsonl"
    if not votes.exists():
        run(["arithmetic", "sample", str(out / "problems.jsonl"), "--per-problem", str(votes_spec.get("votes", 16)),
             "--seed", str(votes_spec.get("seed", 1)), "-o", str(votes)], out / "logs" / "votes.log")  # fmt: skip
    if not relabelled.exists():
        majority = majority_answers(votes)
        with (out / "traces.jsonl").open() as src, relabelled.open("w") as dst:
            for line in src:
                trace = json.loads(line)
                trace["problem"]["answer"] = majority.get(trace["problem"]["id"], trace["problem"]["answer"])
                dst.write(json.dumps(trace) + "\n")
    return build_prm(recipe, out, pi0, relabelled, "-majority")


def build_orm(recipe: dict[str, Any], out: Path, pi0: Path) -> Path:
    """An outcome verifier for cells that name ``prm: orm`` (section ``prm.orm``): ``prmkit train orm``
    from π0 on the same samples, each marked by its final answer against the reference answer
    (``prmkit convert --grade``; no step labels, no gold process); paid with ``aggregation: last`` it is
    an ORM used as the PRM."""
    orm, graded = out / "orm", out / "traces-graded.jsonl"
    if not graded.exists():
        run(["convert", str(out / "traces.jsonl"), str(graded), "--grade"], out / "logs" / "grade.log")
    if not (orm / "process_card.json").exists():
        cfg = config_file(out, "train-orm", recipe["prm"].get("orm") or {})
        run(["train", "orm", str(graded), "-o", str(orm), "--base-model", str(pi0), "--config", str(cfg)],
            out / "logs" / "train-orm.log")  # fmt: skip
    return orm


class Cell(NamedTuple):
    """One ``prmkit rl`` run of the experiment: a grid reward or an extra cell, its RL seed, its draw and
    its ``rl`` section."""

    name: str
    seed: int
    draw: int
    rl: dict[str, Any]

    def folder(self, out: Path) -> Path:
        return draw_dir(out, self.draw) / "cells" / f"{self.name}-{self.seed}"

    def label(self) -> str:
        return f"{self.name}-{self.seed}" + (f" (draw {self.draw})" if self.draw else "")


def cells(recipe: dict[str, Any]) -> list[Cell]:
    """Every cell: the grid (``rewards`` x ``seeds``) in every draw of ``experiment.draws`` (default
    ``[0]``), its ``rl`` section with ``experiment.rl``'s keys over it (``prompts`` merged key by key: e.g.
    more monitor problems for the grid's cells only), then the extra cells, on draw 0."""
    grid = recipe["experiment"]
    over = grid.get("rl") or {}
    out = []
    for draw in grid.get("draws", [0]):
        base = draw_recipe(recipe, draw)["rl"]
        base = {**base, **over, "prompts": {**(base.get("prompts") or {}), **(over.get("prompts") or {})}}
        out += [Cell(r, s, draw, {**base, "reward": r}) for s in grid["seeds"] for r in grid["rewards"]]
    for name, spec in (grid.get("extra") or {}).items():
        spec = dict(spec)
        seeds = spec.pop("seeds", [0])
        out += [Cell(name, s, 0, {**recipe["rl"], **spec}) for s in seeds]
    return out


def measurement(recipe: dict[str, Any]) -> dict[str, Any]:
    """The recipe with ``experiment.measure``'s keys in place of ``experiment``'s (``--measure``: issue
    37's measurement, beside the cached runs the docs' tables come from rather than over them)."""
    grid = recipe["experiment"]
    if not isinstance(grid.get("measure"), dict):
        raise SystemExit("--measure: the recipe has no experiment.measure mapping (see recipes/rl.yaml)")
    return {**recipe, "experiment": {**{k: v for k, v in grid.items() if k != "measure"}, **grid["measure"]}}


def check_recipe(recipe: Any) -> None:
    """Stop before any work when a section is missing, the draws are not distinct non-negative integers
    or a cell is not a valid ``prmkit rl`` config."""
    if not isinstance(recipe, dict):
        raise SystemExit("the recipe must be a YAML mapping with sections pi0, prm, experiment and rl")
    for section in ("pi0", "prm", "experiment", "rl"):
        if not isinstance(recipe.get(section), dict):
            raise SystemExit(f"the recipe has no section {section!r} (see recipes/rl.yaml)")
    draws = recipe["experiment"].get("draws", [0])
    if not draws or len(set(draws)) != len(draws) or any(not isinstance(d, int) or d < 0 for d in draws):
        raise SystemExit(f"experiment.draws: distinct integers >= 0 (0 is the recipe's own), found {draws}")
    for cell in cells(recipe):
        try:  # policy and prm are this script's outputs: placeholders stand in for them here
            RlConfig.model_validate({**cell.rl, "policy": "pi0", "prm": "prm", "seed": cell.seed})
        except ValueError as err:
            raise SystemExit(f"cell {cell.label()}: {err}") from None


PRMS = {
    "pi0": "π0 itself, read zero-shot",
    "majority": "MC labels against majority answers",
    "orm": "an outcome verifier",
}
"""The PRMs a cell may name as ``prm`` besides the recipe's own (weak on purpose)."""


def build_draw(recipe: dict[str, Any], out: Path, draw: int, todo: Sequence[Cell]) -> dict[str, Path]:
    """Draw ``draw``'s π0 and PRM (and the weak PRMs its cells in ``todo`` name), each cached."""
    spec, where = draw_recipe(recipe, draw), draw_dir(out, draw)
    pi0 = build_pi0(spec, where)
    prms = {"pi0": pi0, "prm": build_prm(spec, where, pi0)}
    named = {c.rl.get("prm") for c in todo if c.draw == draw}
    if "majority" in named:
        prms["majority"] = build_majority_prm(spec, where, pi0)
    if "orm" in named:
        prms["orm"] = build_orm(spec, where, pi0)
    return prms


MONITORED_BY = ("seed", "monitor_n", "monitor_samples")
"""The ``prompts`` keys that fix a cell's monitor problems and samples."""


def finished(out: Path, cell: Cell) -> bool:
    """Whether ``cell``'s folder holds a finished run. One measured on other monitor problems (another
    recipe's cells, e.g. ``--measure`` pointed at issue 36's folder) is refused: it would be skipped as
    cached and enter the report as this cell."""
    folder = cell.folder(out)
    if not (folder / "policy_card.json").exists():
        return False
    ran = json.loads((folder / "rl_config.json").read_text()) if (folder / "rl_config.json").is_file() else {}
    want = RlConfig.model_validate({**cell.rl, "policy": "pi0", "prm": "prm", "seed": cell.seed}).prompts
    other = {
        k: ran["prompts"][k]
        for k in MONITORED_BY
        if k in ran.get("prompts", {}) and ran["prompts"][k] != getattr(want, k)
    }
    if other:
        raise SystemExit(f"{folder} was run with prompts {other}, not this recipe's: pick another --out")
    return True


def run_cell(out: Path, prms: dict[str, Path], cell: Cell) -> str:
    """One ``prmkit rl`` run (skipped when it is :func:`finished`; resumed when it was killed)."""
    target, where = cell.folder(out), draw_dir(out, cell.draw)
    if finished(out, cell):
        return f"{cell.label()}: cached"
    paid_by = prms[cell.rl.get("prm") if cell.rl.get("prm") in PRMS else "prm"]
    section = {**cell.rl, "policy": str(prms["pi0"]), "prm": str(paid_by), "seed": cell.seed}
    name = f"rl-{cell.name}-{cell.seed}"
    cfg = config_file(where, name, section)
    start = time.monotonic()
    run(["rl", "--config", str(cfg), "-o", str(target)], where / "logs" / f"{name}.log")
    return f"{cell.label()}: {time.monotonic() - start:.0f} s"


def value(point: dict[str, Any], key: str) -> float | None:
    """A metric of a point (``misconception``: its share of the first errors, where gold was read)."""
    if key == "misconception":
        classes = point.get("first_error_classes")
        return None if classes is None else classes.get("misconception", 0.0)
    return point.get(key)


GAINS = (0.05, 0.10)
"""The process-correct gains over step 0 whose first monitored step the report gives per run (issue 39:
how many steps each reward takes to reach a given gain)."""


def steps_to_gain(points: Sequence[dict[str, Any]], gain: float, key: str = "process_correct") -> int | None:
    """The first monitored step at which ``key`` is at least ``gain`` above its step-0 value, or None
    (never, or no step 0). One point carries its samples' noise (about 3 points at 48 problems x 4), so
    an early crossing can be luck: the report gives every run's step, not one number."""
    if not points or (base := value(points[0], key)) is None:
        return None
    for point in points[1:]:
        if (v := value(point, key)) is not None and v - base >= gain - 1e-12:
            return int(point["step"])
    return None


def digits_of(key: str) -> int:
    """Decimals a table shows: rates in % take one, the paid reward (in its own units) two."""
    return 2 if key == "paid_reward" else 1


def scale_of(key: str) -> float:
    return 1.0 if key in ("steps_per_response", "paid_reward") else 100.0


Run = tuple[str, int, int]
"""A finished cell: (name, draw, seed)."""
Rates = dict[str, tuple[np.ndarray, np.ndarray]]
"""A run's monitor metrics at one point: per-problem (numerator, denominator) sums over its draw's
problems, in one order for every run of the draw."""


def summarise(out: Path, recipe: dict[str, Any]) -> dict[str, dict[tuple[int, int], list[dict[str, Any]]]]:
    """Cell name -> (draw, seed) -> its monitor points, for the finished cells."""
    runs: dict[str, dict[tuple[int, int], list[dict[str, Any]]]] = {}
    for cell in cells(recipe):
        if finished(out, cell):  # a running cell is not a result yet
            runs.setdefault(cell.name, {})[(cell.draw, cell.seed)] = read_points(
                cell.folder(out) / "monitors.jsonl"
            )
    return runs


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
    out: Path, cells_: Sequence[Cell], runs: dict[str, dict[tuple[int, int], list[dict[str, Any]]]]
) -> tuple[dict[Run, dict[str, Rates]], dict[int, list[str]]]:
    """Each finished run's :data:`Rates` at π0 (``first``) and at its last point (``last``), and each
    draw's monitor problem ids. Where a run has no per-problem counts (made before issue 37) or a draw's
    runs disagree on their problems, every run is one pseudo-problem holding its points' rates (no draw
    has problem ids then), so the intervals leave problems out; the report says so."""
    records: dict[Run, tuple[dict[str, Any], dict[str, Any]]] = {}
    ids: dict[int, list[str]] = {}
    complete = True
    for cell in cells_:
        points = runs.get(cell.name, {}).get((cell.draw, cell.seed))
        if not points:
            continue
        counts = read_per_problem(cell.folder(out))
        first, last = counts.get(points[0]["step"]), counts.get(points[-1]["step"])
        if first is None or last is None:
            complete = False
            continue
        mine = ids.setdefault(cell.draw, sorted(first["problems"]))
        complete &= sorted(first["problems"]) == mine == sorted(last["problems"])
        records[(cell.name, cell.draw, cell.seed)] = (first, last)
    tables: dict[Run, dict[str, Rates]] = {}
    for cell in cells_:
        key, points = (cell.name, cell.draw, cell.seed), runs.get(cell.name, {}).get((cell.draw, cell.seed))
        if not points:
            continue
        if complete:
            first, last = records[key]
            tables[key] = {"first": _rates(first, ids[cell.draw]), "last": _rates(last, ids[cell.draw])}
        else:
            tables[key] = {"first": _point_rates(points[0]), "last": _point_rates(points[-1])}
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


KL_LAST = 10
"""Optimiser steps over which a cell's KL to π0 is averaged at its end (TRL logs ``kl`` every step)."""


def final_kl(cell: Path) -> float | None:
    """The mean of TRL's logged ``kl`` (to π0) over the last :data:`KL_LAST` steps of a finished cell:
    with mixed advantages on another scale the KL term's weight shifts, so every cell reports it."""
    path = cell / "train_log.jsonl"
    if not path.is_file():
        return None
    kls = [
        r["kl"] for line in path.read_text().splitlines() if line.strip() and "kl" in (r := json.loads(line))
    ]
    return sum(kls[-KL_LAST:]) / len(kls[-KL_LAST:]) if kls else None


PAIRED = {"process_correct": "process-correct", "lucky": "lucky", "answer_accuracy": "answer accuracy"}
"""The metrics of the paired differences between rewards."""
BASE = "outcome"
"""The reward every other one is paired against."""


def _entry(est: Estimate, key: str, signed: bool = False) -> dict[str, Any]:
    return est.to_dict() | {"cell": est.cell(scale_of(key), digits_of(key), signed)}


def interval(stat: Stat, groups: list[tuple[list[int], int]], resamples: int, by_problem: bool) -> Estimate:
    """The report's one interval rule. Where the runs' problems are known, :func:`nested_bootstrap` over
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


def estimates(
    tables: dict[Run, dict[str, Rates]],
    problems: dict[int, list[str]],
    kls: dict[Run, float | None],
    rewards: Sequence[str],
    resamples: int,
    bases: dict[str, str] | None = None,
    points: Sequence[str] = ("first", "last", "delta"),
) -> dict[str, Any]:
    """Every interval of the report (:func:`interval`): per reward and metric its value at π0, at the
    last point and the change (``delta``, paired by run and problem; ``points``: which of the three);
    its KL to π0 at the end (where ``kls`` has it); and each reward's change minus outcome's (and minus
    ``bases[name]``'s where given: an extra cell against its own reward), on the same draws, seeds and
    problem resamples. Each interval's resampling is seeded on its own, so asking for fewer changes none."""
    out: dict[str, Any] = {"rewards": {}, "paired": {}}
    by_problem = bool(problems)
    for name in rewards:
        runs = sorted(k for k in tables if k[0] == name)
        if not runs:
            continue
        groups = by_draw(runs, problems)
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
        out["rewards"][name] = row
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
    out: Path, recipe: dict[str, Any], runs: dict[str, Any], main: Sequence[Cell], resamples: int
) -> dict[str, Any] | None:
    """The extra cells measured on the grid's monitor problems, as the grid's rewards are: each one's Δ
    from π0, minus outcome's and minus its own reward's on the same seeds (``progress_sum`` against
    ``progress``). None where there is none, or their per-problem counts do not line up with the grid's
    (cells from before issue 37): the report then shows their points only."""
    extra = recipe["experiment"].get("extra") or {}
    mine = [c for c in cells(recipe) if c.name in extra and c.name in runs]
    if not mine:
        return None
    seeds = {(c.draw, c.seed) for c in mine}
    same = [c for c in main if (c.draw, c.seed) in seeds]
    tables, problems = problem_tables(out, [*same, *mine], runs)
    if not problems:
        return None
    bases = {c.name: c.rl["reward"] for c in mine}
    names = sorted(bases)
    kls = {(c.name, c.draw, c.seed): final_kl(c.folder(out)) for c in mine}
    found = estimates(tables, problems, kls, names, resamples, bases)
    return {"rewards": found["rewards"], "paired": found["paired"], "bases": bases}


def draws_line(
    tables: dict[Run, dict[str, Rates]], problems: dict[int, list[str]], samples: int | None, resamples: int
) -> str:
    """What went into the intervals: how many independent draws of each random component."""
    draws = sorted({d for _, d, _ in tables})
    seeds = sorted({s for _, _, s in tables})
    runs = Counter(n for n, _, _ in tables).values()
    line = (
        f"Draws: {len(draws)} (π0, PRM) draw(s) ({', '.join(map(str, draws))}) × RL seeds "
        f"{', '.join(map(str, seeds))}: {'-'.join(map(str, sorted({min(runs), max(runs)})))} runs per reward; "
    )
    if problems:
        sizes = sorted({len(ids) for ids in problems.values()})
        line += (
            f"{'/'.join(map(str, sizes))} monitor problems per draw (each draw its own test problems) × "
            f"{samples} samples each, one problem resample shared by every cell of a draw. "
        )
        line += (
            "Intervals: nested cluster bootstrap (draws; within each, RL seeds crossed with monitor problems), "
            f"{resamples} resamples."
        )
        if 1 < len(draws) <= 3:
            line += f" With {len(draws)} draws the draw stage resamples {len(draws)} values: it understates π0/PRM noise."
    else:
        line += (
            "no per-problem monitor counts (cells from before issue 37), so problems and samples are not "
            f"resampled. Intervals: Student-t over {'the runs' if len(draws) == 1 else 'the draws’ means'}."
        )
    if len(draws) == 1:
        line += " One π0/PRM draw: the intervals leave out what another π0 or PRM would change."
    return line


def components(
    tables: dict[Run, dict[str, Rates]], problems: dict[int, list[str]], samples: int | None
) -> dict:
    """How many independent draws of each random component the intervals saw (``results.json``; None:
    not resampled)."""
    return {
        "pi0_prm_draws": len({d for _, d, _ in tables}),
        "rl_seeds": sorted({s for _, _, s in tables}),
        "monitor_problems_per_draw": {d: len(ids) for d, ids in problems.items()} or None,
        "samples_per_problem": samples,
    }


def _row(name: str, table: dict[str, Any], n_runs: int, steps: str) -> str:
    return (
        f"| {name} | {n_runs} | {steps} | "
        + " | ".join(table.get(k, {}).get("cell", "–") for k in METRICS)
        + " |"
    )


def report(out: Path, recipe: dict[str, Any], resamples: int = 2000, command: str = "") -> str:
    """``report.md``, ``results.json`` and ``curves.png`` in ``out`` from the finished cells (``command``:
    how they were made, for the header)."""
    runs = summarise(out, recipe)
    grid = recipe["experiment"]
    main = [c for c in cells(recipe) if c.name in grid["rewards"]]
    tables, problems = problem_tables(out, main, runs)
    kls = {
        (c.name, c.draw, c.seed): final_kl(c.folder(out)) for c in main if (c.name, c.draw, c.seed) in tables
    }
    numbers = estimates(tables, problems, kls, grid["rewards"], resamples)
    extra = extra_estimates(out, recipe, runs, main, resamples)
    alone = per_draw(tables, problems, kls, grid["rewards"], resamples)
    rows = list(numbers["rewards"].values())
    count = sum(len(row[which]) for row in rows for which in ("first", "last", "delta"))
    count += sum("kl_last" in row for row in rows) + sum(len(v) for v in numbers["paired"].values())
    count += sum(len(row["delta"]) for one in alone.values() for row in one["rewards"].values())
    count += sum(len(v) for one in alone.values() for v in one["paired"].values())
    if extra:
        count += sum(len(row["delta"]) + ("kl_last" in row) for row in extra["rewards"].values())
        count += sum(len(v) for v in extra["paired"].values())
    per_problem = next(iter(tables.values()))["first"]["answer_accuracy"][1] if problems else None
    samples = round(float(per_problem.mean())) if per_problem is not None else None  # samples per problem
    drawn = draws_line(tables, problems, samples, resamples) if tables else "No finished cells."
    said = drawn + (f" {multiplicity(count)}" if count else "")
    lines = [
        "# RL against the PRM: rewards compared at equal optimiser steps",
        "",
        f"`{command or f'python experiments/rl_grid.py --recipe recipes/rl.yaml --out {out}'}`: π0 = the world's LM pretrained "
        "on the simulated policy's unfiltered samples (no gold); PRM = likelihood head from π0 on MC hard labels "
        "(no gold). Held-out monitors: the same test problems and sampling seeds at every point. Rates in %, "
        "mean over runs [95 % interval]; Δ = last point − π0, paired by run and problem.",
        "",
        said,
        "",
    ]
    lines += _tables(numbers, runs, grid)
    lines += _per_draw_table(alone)
    lines += _extra_table(extra)
    lines += _warnings_and_extras(runs, grid)
    if plot_curves(runs, grid, out / "curves.png"):
        lines += ["", "![curves](curves.png)"]
    results = {
        "draws": drawn,
        "components": components(tables, problems, samples),
        "intervals": count,
        **numbers,
        "per_draw": alone,
    }
    results["steps_to_gain"] = gains_table(runs, grid)
    results["extra"] = extra
    results["cells"] = _raw(out, runs, grid)
    (out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    text = "\n".join(lines) + "\n"
    (out / "report.md").write_text(text)
    return text


def per_draw(
    tables: dict[Run, dict[str, Rates]],
    problems: dict[int, list[str]],
    kls: dict[Run, float | None],
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


def _per_draw_table(alone: dict[str, dict[str, Any]]) -> list[str]:
    if not alone:
        return []
    lines = [
        "",
        "## Each draw alone (its RL seeds crossed with its own monitor problems)",
        "",
        "| draw | comparison | " + " | ".join(f"Δ {v}" for v in PAIRED.values()) + " |",
        "|---|---|" + "---|" * len(PAIRED),
    ]
    for d, one in alone.items():
        for name, row in one["rewards"].items():
            lines.append(
                f"| {d} | {name} | "
                + " | ".join(row["delta"].get(m, {}).get("cell", "–") for m in PAIRED)
                + " |"
            )
        for pair, row in one["paired"].items():
            lines.append(
                f"| {d} | {pair} | " + " | ".join(row.get(m, {}).get("cell", "–") for m in PAIRED) + " |"
            )
    return lines


def _tables(numbers: dict[str, Any], runs: dict[str, Any], grid: dict[str, Any]) -> list[str]:
    header = [
        "| reward | runs | steps | " + " | ".join(METRICS.values()) + " |",
        "|" + "---|" * (len(METRICS) + 3),
    ]
    lines: list[str] = []
    for title, which in (
        ("π0 (step 0)", "first"),
        ("last point", "last"),
        ("Δ from π0 (last point − step 0)", "delta"),
    ):
        lines += [f"## {title}", "", *header]
        for name, row in numbers["rewards"].items():
            steps = "/".join(
                sorted({str(p[0 if which == "first" else -1]["step"]) for p in runs[name].values()})
            )
            lines.append(_row(name, row[which], len(runs[name]), steps))
        lines.append("")
    lines += [
        f"## KL to π0 (TRL's `kl`, mean of the last {KL_LAST} steps)",
        "",
        "| reward | KL |",
        "|---|---|",
    ]
    lines += [
        f"| {name} | {row.get('kl_last', {}).get('cell', '–')} |" for name, row in numbers["rewards"].items()
    ]
    lines += [
        "",
        "## Steps to a process-correct gain (first monitored step at least this far above step 0; per run)",
        "",
        "| reward | " + " | ".join(f"+{100 * g:.0f} points" for g in GAINS) + " |",
        "|---|" + "---|" * len(GAINS),
    ]
    for name, per_run in gains_table(runs, grid).items():
        cells = [", ".join("–" if s is None else str(s) for s in per_run[f"{g:g}"].values()) for g in GAINS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "(– : not reached by the last point; runs in seed order.)",
        "",
        "## Paired differences between rewards (Δ of one minus Δ of the other, same draw, seed and problems)",
        "",
    ]
    lines += ["| comparison | " + " | ".join(PAIRED.values()) + " |", "|---|" + "---|" * len(PAIRED)]
    for pair, row in numbers["paired"].items():
        lines.append(f"| {pair} | " + " | ".join(row.get(m, {}).get("cell", "–") for m in PAIRED) + " |")
    return lines


def gains_table(runs: dict[str, Any], grid: dict[str, Any]) -> dict[str, dict[str, dict[str, int | None]]]:
    """Reward -> gain -> ``"draw-seed"`` -> :func:`steps_to_gain` for the grid's finished cells."""
    return {
        name: {
            f"{g:g}": {_key(*run): steps_to_gain(points, g) for run, points in sorted(runs[name].items())}
            for g in GAINS
        }
        for name in grid["rewards"]
        if name in runs
    }


def _extra_table(extra: dict[str, Any] | None) -> list[str]:
    if not extra:
        return []
    lines = [
        "",
        "## Extra cells on the grid's problems (Δ from π0; paired with outcome and with their own reward)",
        "",
        "| cell | runs | " + " | ".join(f"Δ {METRICS[m]}" for m in PAIRED) + " |",
        "|---|---|" + "---|" * len(PAIRED),
    ]
    for name, row in extra["rewards"].items():
        cells_ = [row["delta"].get(m, {}).get("cell", "–") for m in PAIRED]
        lines.append(
            f"| {name} | {row['delta'][next(iter(PAIRED))]['draws'].get('run', '')} | "
            + " | ".join(cells_)
            + " |"
        )
    for pair, row in extra["paired"].items():
        lines.append(f"| {pair} | | " + " | ".join(row.get(m, {}).get("cell", "–") for m in PAIRED) + " |")
    return lines


def _key(draw: int, seed: int) -> str:
    return f"{draw}-{seed}"


def _warnings_and_extras(runs: dict[str, Any], grid: dict[str, Any]) -> list[str]:
    lines = ["", "## The monitors' warnings (reward hacking; process collapse)", ""]
    for name, per_run in runs.items():
        for (draw, seed), points in sorted(per_run.items()):
            where = f"draw {draw} seed {seed}" if draw else f"seed {seed}"
            lines += [f"- `{name}` {where}: {w}" for w in all_warnings(points)]
    for name in grid.get("extra") or {}:
        for (_, seed), points in sorted(runs.get(name, {}).items()):
            lines += ["", f"### extra cell `{name}` (seed {seed}): {grid['extra'][name]}", ""]
            lines += ["| step | " + " | ".join(METRICS.values()) + " |", "|" + "---|" * (len(METRICS) + 1)]
            for p in points:
                row = [f"{scale_of(k) * v:.1f}" if (v := value(p, k)) is not None else "–" for k in METRICS]
                lines.append(f"| {p['step']} | " + " | ".join(row) + " |")
    return lines


def _raw(out: Path, runs: dict[str, Any], grid: dict[str, Any]) -> dict[str, Any]:
    """Every finished run's own numbers (``"draw-seed"`` keys): the grid's first and last points, an extra
    cell's every point, the warnings and the KL."""
    raw: dict[str, Any] = {}
    for name, per_run in runs.items():
        extra = name in (grid.get("extra") or {})
        raw[name] = {"runs": {}}
        for (draw, seed), points in sorted(per_run.items()):
            own = {"points": points} if extra else {"first": points[0], "last": points[-1]}
            folder = draw_dir(out, draw) / "cells" / f"{name}-{seed}"
            own |= {"warnings": all_warnings(points), "kl_last": final_kl(folder)}
            raw[name]["runs"][_key(draw, seed)] = own
    return raw


def plot_curves(
    runs: dict[str, dict[tuple[int, int], list[dict[str, Any]]]], grid: dict[str, Any], path: Path
) -> bool:
    """Each monitor's change from π0 by optimiser step, paired by run: mean over runs (draws x seeds) and
    the t-interval over them (:func:`_band`), one line per reward (extra cells dashed)."""
    if not runs:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = ["process_correct", "answer_accuracy", "lucky", "prm_reward", "misconception", "unfinished"]
    fig, axes = plt.subplots(2, 3, figsize=(14, 7))
    palette = plt.get_cmap("tab20").colors  # one colour per run: the default cycle repeats after ten
    colours = {name: palette[i % len(palette)] for i, name in enumerate(runs)}
    for ax, key in zip(axes.flat, keys, strict=True):
        for name, per_run in runs.items():
            steps = sorted({p["step"] for pts in per_run.values() for p in pts})
            bands = [_band(per_run, key, step) for step in steps]
            style = "--" if name in (grid.get("extra") or {}) else "-"
            ax.plot(steps, [b[0] for b in bands], style, marker="o", markersize=3, color=colours[name],
                    label=f"{name} ({len(per_run)})")  # fmt: skip
            ax.fill_between(
                steps, [b[1] for b in bands], [b[2] for b in bands], alpha=0.12, color=colours[name]
            )
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_title(f"{METRICS[key]}: change from π0 (points)")
        ax.set_xlabel("GRPO optimiser step")
    axes.flat[0].legend(fontsize=8, title="reward (runs)")
    fig.suptitle(
        "held-out monitors, change from π0 paired by run: mean and 95 % t-interval over runs (draws x seeds)"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _band(
    per_run: dict[tuple[int, int], list[dict[str, Any]]], key: str, step: int
) -> tuple[float, float, float]:
    """(mean, low, high) in points of ``key``'s change from π0 at ``step``: the Student-t interval over
    the runs that reached it (a guide to the eye; the tables' intervals count draws and problems)."""
    changes = []
    for pts in per_run.values():
        at = [p for p in pts if p["step"] == step]
        if at and (v := value(at[0], key)) is not None and (v0 := value(pts[0], key)) is not None:
            changes.append(100 * (v - v0))
    if not changes:
        return math.nan, math.nan, math.nan
    est = t_interval(changes)
    return est.mean, est.low, est.high


BLOCK = re.compile(
    r"(?s)(<!-- rl-measure: (?P<file>\S+)(?: tuned=(?P<tuned>[\d,]+))? -->\n).*?(<!-- /rl-measure -->)"
)
"""A docs block rendered from a committed ``results.json`` of the measurement (:func:`block`); ``tuned``
names the draws whose monitor problems the settings were tuned on."""
BLOCK_DELTAS = ("process_correct", "answer_accuracy", "lucky", "prm_reward", "misconception")
"""The changes from π0 the block shows per reward (the report has every metric)."""


def block(results: dict[str, Any], tuned: Sequence[str] = ()) -> str:
    """The measurement as the docs show it: what went in, each reward's π0 level, change and KL over
    every draw, then each reward's change and its difference from outcome over every draw and in each
    draw alone (a draw in ``tuned`` is marked as read during tuning; the others are fresh), and the
    multiplicity of the intervals shown (a value with no spread, e.g. a rate 0 in every run, has none)."""
    rewards, alone = results["rewards"], results.get("per_draw") or {}
    head = ["π0 process-correct", *(f"Δ {METRICS[m]}" for m in BLOCK_DELTAS), "KL to π0"]
    lines = [
        "| reward | runs | " + " | ".join(head) + " |",
        "|---|---|" + "---|" * len(head),
    ]
    shown = 0
    for name, row in rewards.items():
        runs = row["delta"]["process_correct"]["draws"].get("run", "")
        cells_ = [row["first"]["process_correct"]["cell"]]
        cells_ += [row["delta"].get(m, {}).get("cell", "–") for m in BLOCK_DELTAS]
        cells_.append(row.get("kl_last", {}).get("cell", "–"))
        shown += sum("[" in c for c in cells_)
        lines.append(f"| {name} | {runs} | " + " | ".join(cells_) + " |")

    def label(d: str) -> str:
        return f"draw {d} ({'its problems read in tuning' if d in tuned else 'fresh: claims'})"

    sets = [("all draws", {"rewards": {n: {"delta": r["delta"]} for n, r in rewards.items()},
                           "paired": results["paired"]})] + [(label(d), one) for d, one in alone.items()]  # fmt: skip
    lines += [
        "",
        "| Δ from π0, or difference from outcome's Δ | draws | " + " | ".join(PAIRED.values()) + " |",
        "|---|---|" + "---|" * len(PAIRED),
    ]
    names = [*rewards, *(p for p in results["paired"])]
    for name in names:
        for title, one in sets:
            row = one["rewards"].get(name, {}).get("delta") or one["paired"].get(name)
            if not row:
                continue
            cells_ = [row.get(m, {}).get("cell", "–") for m in PAIRED]
            shown += sum("[" in c for c in cells_)
            lines.append(f"| {name} | {title} | " + " | ".join(cells_) + " |")
    return f"{results['draws']}\n\n" + "\n".join(lines) + f"\n\nThis block: {multiplicity(shown)}\n"


def render(text: str, root: Path) -> str:
    """``text`` with every rl-measure block re-rendered from its file."""

    def one(m: re.Match[str]) -> str:
        results = json.loads((root / m["file"]).read_text(encoding="utf-8"))
        tuned = m["tuned"].split(",") if m["tuned"] else []
        return m[1] + block(results, tuned) + m[4]

    return BLOCK.sub(one, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipe", type=Path, default=Path("recipes/rl.yaml"))
    parser.add_argument("--out", type=Path, default=Path("runs/rl"))
    parser.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    parser.add_argument("--report-only", action="store_true", help="only rebuild the report from the cells")
    parser.add_argument(
        "--measure",
        action="store_true",
        help="issue 37's measurement: experiment.measure's keys replace experiment's",
    )
    parser.add_argument(
        "--only", default="", help="comma-separated cell names (rewards or extra cells) to run; default all"
    )
    parser.add_argument(
        "--seeds",
        default="",
        help="comma-separated RL seeds of the grid's cells, in place of experiment.seeds",
    )
    parser.add_argument(
        "--render",
        type=Path,
        metavar="DOC",
        help="re-render DOC's rl-measure blocks from their committed results files, then stop",
    )
    args = parser.parse_args()
    if args.render:
        root = Path(__file__).resolve().parents[1]
        args.render.write_text(render(args.render.read_text(encoding="utf-8"), root), encoding="utf-8")
        return
    recipe = yaml.safe_load(args.recipe.read_text())
    check_recipe(recipe)
    if args.measure:
        recipe = measurement(recipe)
        check_recipe(recipe)
    if args.seeds:
        try:
            seeds = [int(s) for s in args.seeds.split(",")]
        except ValueError:
            raise SystemExit(f"--seeds: comma-separated integers, found {args.seeds!r}") from None
        recipe = {**recipe, "experiment": {**recipe["experiment"], "seeds": seeds}}
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        only = {n for n in args.only.split(",") if n}
        unknown = only - {c.name for c in cells(recipe)}
        if unknown:
            raise SystemExit(f"--only: no cell named {sorted(unknown)} in {args.recipe}")
        # seed by seed across the draws, so a measurement stopped part-way holds every draw's first seeds
        todo = sorted((c for c in cells(recipe) if not only or c.name in only), key=lambda c: c.seed)
        draws = sorted({c.draw for c in todo})
        with ThreadPoolExecutor(args.jobs) as pool:  # the draws' π0 and PRMs, then the cells
            prms = dict(
                zip(draws, pool.map(lambda d: build_draw(recipe, args.out, d, todo), draws), strict=True)
            )
            for done in pool.map(lambda c: run_cell(args.out, prms[c.draw], c), todo):
                print(done, flush=True)
    print(report(args.out, recipe, command="python experiments/rl_grid.py " + " ".join(sys.argv[1:])))


if __name__ == "__main__":
    main()

"""The RL study's results file and report: ``results.json`` (:func:`measure`), ``report.md`` and
``curves.png`` in one folder, from the finished cells' records (the statistics: :mod:`prmkit.rl.study`).

The report gives, per reward, every monitor's value at π0 and at the last point and the change from π0
paired by run, the KL to π0, the steps each run took to a process-correct gain and to outcome's final
answer accuracy, the paired differences between rewards, each draw alone, the tuning and claims sides
with each cell's verdict against outcome (where the study has claims draws), each extra cell with its
hacking warnings, and the curves.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prmkit.core.stats import multiplicity, t_interval
from prmkit.rl.monitors import all_warnings
from prmkit.rl.study import (
    GAINS,
    KL_LAST,
    METRICS,
    PAIRED,
    SIDES,
    CellRecord,
    Points,
    Rates,
    Run,
    Runs,
    efficiency_table,
    estimates,
    extra_estimates,
    gains_table,
    per_draw,
    problem_tables,
    run_key,
    runs_of,
    scale_of,
    sides,
    value,
    verdict_cell,
)

RESULTS = "results.json"
REPORT = "report.md"
CURVES = "curves.png"


def draws_line(
    tables: dict[Run, dict[str, Rates]],
    problems: dict[int, list[str]],
    samples: int | None,
    resamples: int,
    claims: Sequence[int] = (),
) -> str:
    """What went into the intervals: how many independent draws of each random component, and which draws
    are the claims side (``claims``)."""
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
    if claims:
        tuning, claimed = [d for d in draws if d not in claims], [d for d in draws if d in claims]
        line += (
            f" Tuning side: draw(s) {', '.join(map(str, tuning)) or 'none'}; claims side: draw(s) "
            f"{', '.join(map(str, claimed)) or 'none finished'} (no development run read them), each pooled "
            "on its own."
        )
        if 1 in (len(tuning), len(claimed)):
            line += " A side of one draw: its intervals leave out what another π0 or PRM would change."
    return line


def components(
    tables: dict[Run, dict[str, Rates]], problems: dict[int, list[str]], samples: int | None
) -> dict[str, Any]:
    """How many independent draws of each random component the intervals saw (``results.json``; None:
    not resampled)."""
    return {
        "pi0_prm_draws": len({d for _, d, _ in tables}),
        "rl_seeds": sorted({s for _, _, s in tables}),
        "monitor_problems_per_draw": {d: len(ids) for d, ids in problems.items()} or None,
        "samples_per_problem": samples,
    }


def _count(
    numbers: dict[str, Any], alone: dict[str, Any], extra: dict[str, Any] | None, split: dict[str, Any]
) -> int:
    """How many intervals the results hold (the multiplicity the report states)."""
    rows = list(numbers["rewards"].values())
    count = sum(len(row[which]) for row in rows for which in ("first", "last", "delta"))
    count += sum("kl_last" in row for row in rows) + sum(len(v) for v in numbers["paired"].values())
    for sets in (alone, split):  # each draw alone; the tuning and claims sides
        count += sum(len(row["delta"]) for one in sets.values() for row in one["rewards"].values())
        count += sum(len(v) for one in sets.values() for v in one["paired"].values())
    if extra:
        count += sum(len(row["delta"]) + ("kl_last" in row) for row in extra["rewards"].values())
        count += sum(len(v) for v in extra["paired"].values())
    return count


def _raw(runs: Runs, records: Sequence[CellRecord], extra: Mapping[str, str]) -> dict[str, Any]:
    """Every finished run's own numbers (``"draw-seed"`` keys): the grid's first and last points, an extra
    cell's every point, the warnings and the KL."""
    kls = {r.run: r.kl_last for r in records}
    raw: dict[str, Any] = {}
    for name, per_run in runs.items():
        raw[name] = {"runs": {}}
        for (draw, seed), points in sorted(per_run.items()):
            own = {"points": points} if name in extra else {"first": points[0], "last": points[-1]}
            own |= {"warnings": all_warnings(points), "kl_last": kls.get((name, draw, seed))}
            raw[name]["runs"][run_key(draw, seed)] = own
    return raw


def measure(
    records: Sequence[CellRecord],
    rewards: Sequence[str],
    extra: Mapping[str, str] | None = None,
    resamples: int = 2000,
    claims: Sequence[int] = (),
) -> dict[str, Any]:
    """The study's results file from its finished cells: ``records`` (the grid's cells and the extra
    cells, in the recipe's order), ``rewards`` (the grid's cell names: rewards and credit cells),
    ``extra`` (extra cell -> the reward it changes), ``claims`` (the claims draws). Its keys: ``draws``
    (what went in), ``components``, ``intervals`` (how many), ``rewards`` and ``paired`` (:func:`estimates`,
    pooled over every draw), ``per_draw``, ``steps_to_gain``, ``sample_efficiency``
    (:func:`~prmkit.rl.study.efficiency_table`), ``extra``, ``cells`` (each run's own points, warnings and
    KL) and, with claims draws, ``sides``: the tuning and the claims side apart, with verdicts
    (:func:`~prmkit.rl.study.sides`)."""
    extra = dict(extra or {})
    runs = runs_of(records)
    grid = [r for r in records if r.name in rewards]
    tables, problems = problem_tables(grid)
    kls = {r.run: r.kl_last for r in grid if r.run in tables}
    numbers = estimates(tables, problems, kls, rewards, resamples)
    extras = extra_estimates(grid, [r for r in records if r.name in extra and r.points], extra, resamples)
    alone = per_draw(tables, problems, rewards, resamples)
    split = sides(tables, problems, rewards, resamples, claims) if claims else {}
    count = _count(numbers, alone, extras, split)
    per_problem = next(iter(tables.values()))["first"]["answer_accuracy"][1] if problems else None
    samples = round(float(per_problem.mean())) if per_problem is not None else None  # samples per problem
    return {
        "draws": draws_line(tables, problems, samples, resamples, claims) if tables else "No finished cells.",
        "components": components(tables, problems, samples),
        "intervals": count,
        **numbers,
        "per_draw": alone,
        "steps_to_gain": gains_table(runs, rewards),
        "sample_efficiency": efficiency_table(runs, rewards),
        "extra": extras,
        "cells": _raw(runs, records, extra),
        **({"sides": split} if claims else {}),
    }


def write_study(
    out: Path,
    records: Sequence[CellRecord],
    rewards: Sequence[str],
    extra: Mapping[str, dict[str, Any]] | None = None,
    resamples: int = 2000,
    command: str = "prmkit run recipes/rl.yaml",
    claims: Sequence[int] = (),
) -> str:
    """``results.json``, ``report.md`` and ``curves.png`` in ``out`` from the finished cells ``records``
    (the grid's cells ``rewards`` and the ``extra`` cells, each with the ``rl`` keys it changes, in the
    recipe's order; ``claims``: the claims draws); ``command``: how they were made, for the header.
    Returns the report's text."""
    extra = dict(extra or {})
    bases = {name: spec["reward"] for name, spec in extra.items()}
    results = measure(records, rewards, bases, resamples, claims)
    runs = runs_of(records)
    lines = [
        "# RL against the PRM: rewards compared at equal optimiser steps",
        "",
        f"`{command}`: π0 = the world's LM pretrained "
        "on the simulated policy's unfiltered samples (no gold); PRM = likelihood head from π0 on MC hard labels "
        "(no gold). Held-out monitors: the same test problems and sampling seeds at every point. Rates in %, "
        "mean over runs [95 % interval]; Δ = last point − π0, paired by run and problem.",
        "",
        results["draws"] + (f" {multiplicity(results['intervals'])}" if results["intervals"] else ""),
        "",
    ]
    lines += _tables(results, runs, rewards)
    lines += _efficiency_table(results["sample_efficiency"])
    lines += _per_draw_table(results["per_draw"])
    lines += _sides_table(results.get("sides", {}))
    lines += _extra_table(results["extra"])
    lines += _warnings_and_extras(runs, extra)
    out.mkdir(parents=True, exist_ok=True)
    if plot_curves(runs, extra, out / CURVES):
        lines += ["", f"![curves]({CURVES})"]
    (out / RESULTS).write_text(json.dumps(results, indent=1, default=str))
    text = "\n".join(lines) + "\n"
    (out / REPORT).write_text(text)
    return text


def _cells(row: Mapping[str, Any], keys: Sequence[str]) -> str:
    return " | ".join(row.get(m, {}).get("cell", "–") for m in keys)


def _row(name: str, table: dict[str, Any], n_runs: int, steps: str) -> str:
    return f"| {name} | {n_runs} | {steps} | " + _cells(table, list(METRICS)) + " |"


def _tables(numbers: dict[str, Any], runs: Runs, rewards: Sequence[str]) -> list[str]:
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
    for name, per_run in gains_table(runs, rewards).items():
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
        lines.append(f"| {pair} | " + _cells(row, list(PAIRED)) + " |")
    return lines


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
            lines.append(f"| {d} | {name} | " + _cells(row["delta"], list(PAIRED)) + " |")
        for pair, row in one["paired"].items():
            lines.append(f"| {d} | {pair} | " + _cells(row, list(PAIRED)) + " |")
    return lines


def _efficiency_table(found: dict[str, Any]) -> list[str]:
    if not found:
        return []
    lines = [
        "",
        "## Sample efficiency: steps to outcome's final answer accuracy (same draw and seed; per run)",
        "",
        "| cell | " + " | ".join(found["target"]) + " |",
        "|---|" + "---|" * len(found["target"]),
        "| outcome's final answer accuracy | "
        + " | ".join(f"{100 * v:.1f}" for v in found["target"].values())
        + " |",
    ]
    for name, per_run in found["steps"].items():
        cells = ["" if run not in per_run else "not reached" if per_run[run] is None else str(per_run[run])
                 for run in found["target"]]  # fmt: skip
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "(Runs as draw-seed; the first monitored step at or above that accuracy, step 0 included.)"]
    return lines


def _sides_table(split: dict[str, Any]) -> list[str]:
    if not split:
        return []
    lines = [
        "",
        "## Tuning and claims sides (each pooled over its own draws; a claim is read off the claims side)",
        "",
        "| side | draws | comparison | " + " | ".join(f"Δ {v}" for v in PAIRED.values()) + " | verdict |",
        "|---|---|---|" + "---|" * len(PAIRED) + "---|",
    ]
    for side in SIDES:
        one = split.get(side)
        if one is None:
            continue
        draws = ", ".join(map(str, one["draws"]))
        for name, row in one["rewards"].items():
            lines.append(f"| {side} | {draws} | {name} | " + _cells(row["delta"], list(PAIRED)) + " | |")
        for pair, row in one["paired"].items():
            verdict = verdict_cell(one["verdicts"][pair])
            lines.append(f"| {side} | {draws} | {pair} | " + _cells(row, list(PAIRED)) + f" | {verdict} |")
    return lines


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
        runs = row["delta"][next(iter(PAIRED))]["draws"].get("run", "")
        lines.append(f"| {name} | {runs} | " + _cells(row["delta"], list(PAIRED)) + " |")
    for pair, row in extra["paired"].items():
        lines.append(f"| {pair} | | " + _cells(row, list(PAIRED)) + " |")
    return lines


def _warnings_and_extras(runs: Runs, extra: Mapping[str, dict[str, Any]]) -> list[str]:
    lines = ["", "## The monitors' warnings (reward hacking; process collapse)", ""]
    for name, per_run in runs.items():
        for (draw, seed), points in sorted(per_run.items()):
            where = f"draw {draw} seed {seed}" if draw else f"seed {seed}"
            lines += [f"- `{name}` {where}: {w}" for w in all_warnings(points)]
    for name in extra:
        for (_, seed), points in sorted(runs.get(name, {}).items()):
            lines += ["", f"### extra cell `{name}` (seed {seed}): {extra[name]}", ""]
            lines += ["| step | " + " | ".join(METRICS.values()) + " |", "|" + "---|" * (len(METRICS) + 1)]
            for p in points:
                row = [f"{scale_of(k) * v:.1f}" if (v := value(p, k)) is not None else "–" for k in METRICS]
                lines.append(f"| {p['step']} | " + " | ".join(row) + " |")
    return lines


CURVE_KEYS = ("process_correct", "answer_accuracy", "lucky", "prm_reward", "misconception", "unfinished")


def plot_curves(runs: Runs, extra: Mapping[str, Any], path: Path) -> bool:
    """Each monitor's change from π0 by optimiser step, paired by run: mean over runs (draws x seeds) and
    the t-interval over them (:func:`_band`), one line per reward (extra cells dashed)."""
    if not runs:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(14, 7))
    palette = plt.get_cmap("tab20").colors  # one colour per run: the default cycle repeats after ten
    colours = {name: palette[i % len(palette)] for i, name in enumerate(runs)}
    for ax, key in zip(axes.flat, CURVE_KEYS, strict=True):
        for name, per_run in runs.items():
            steps = sorted({p["step"] for pts in per_run.values() for p in pts})
            bands = [_band(per_run, key, step) for step in steps]
            style = "--" if name in extra else "-"
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


def _band(per_run: dict[tuple[int, int], Points], key: str, step: int) -> tuple[float, float, float]:
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

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
   the first and last point (mean [95 % t-interval] over seeds), the change from π0 paired by seed,
   paired differences between rewards, each extra cell with its hacking warnings, and the curves.

``python experiments/rl_grid.py --recipe recipes/rl.yaml --out runs/rl [--jobs 2] [--report-only]``
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

from prmkit.pipeline.sweep import interval
from prmkit.rl.config import RlConfig
from prmkit.rl.monitors import all_warnings, read_points

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
    """π0: the LM pretrained on the simulated policy's own samples (cached: its process card is written last)."""
    pi0, spec = out / "pi0", recipe["pi0"]
    problems, traces = out / "problems.jsonl", out / "traces.jsonl"
    if not problems.exists():
        run(["arithmetic", "generate", "--n", str(spec["problems"]), "--seed", str(spec.get("seed", 0)),
             "-o", str(problems)], out / "logs" / "generate.log")  # fmt: skip
    if not traces.exists():
        run(["arithmetic", "sample", str(problems), "--per-problem", str(spec["per_problem"]), "-o", str(traces)],
            out / "logs" / "sample.log")  # fmt: skip
    if not (pi0 / "process_card.json").exists():
        cfg = config_file(out, "pretrain", spec["pretrain"])
        run(["pretrain", str(traces), "-o", str(pi0), "--config", str(cfg)], out / "logs" / "pretrain.log")
    return pi0


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


def cells(recipe: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    """(name, seed, rl section) of every cell: the grid, seed by seed, then the extra cells."""
    grid, base = recipe["experiment"], recipe["rl"]
    out = [(r, s, {**base, "reward": r}) for s in grid["seeds"] for r in grid["rewards"]]
    for name, spec in (grid.get("extra") or {}).items():
        spec = dict(spec)
        seeds = spec.pop("seeds", [0])
        out += [(name, s, {**base, **spec}) for s in seeds]
    return out


def check_recipe(recipe: Any) -> None:
    """Stop before any work when a section is missing or a cell is not a valid ``prmkit rl`` config."""
    if not isinstance(recipe, dict):
        raise SystemExit("the recipe must be a YAML mapping with sections pi0, prm, experiment and rl")
    for section in ("pi0", "prm", "experiment", "rl"):
        if not isinstance(recipe.get(section), dict):
            raise SystemExit(f"the recipe has no section {section!r} (see recipes/rl.yaml)")
    for name, seed, section in cells(recipe):
        try:  # policy and prm are this script's outputs: placeholders stand in for them here
            RlConfig.model_validate({**section, "policy": "pi0", "prm": "prm", "seed": seed})
        except ValueError as err:
            raise SystemExit(f"cell {name}-{seed}: {err}") from None


PRMS = {
    "pi0": "π0 itself, read zero-shot",
    "majority": "MC labels against majority answers",
    "orm": "an outcome verifier",
}
"""The PRMs a cell may name as ``prm`` besides the recipe's own (weak on purpose)."""


def run_cell(out: Path, prms: dict[str, Path], name: str, seed: int, section: dict[str, Any]) -> str:
    """One ``prmkit rl`` run (skipped when its policy card exists; resumed when it was killed)."""
    target = out / "cells" / f"{name}-{seed}"
    if (target / "policy_card.json").exists():
        return f"{name}-{seed}: cached"
    paid_by = prms[section.get("prm") if section.get("prm") in PRMS else "prm"]
    section = {**section, "policy": str(prms["pi0"]), "prm": str(paid_by), "seed": seed}
    cfg = config_file(out, f"rl-{name}-{seed}", section)
    start = time.monotonic()
    run(["rl", "--config", str(cfg), "-o", str(target)], out / "logs" / f"rl-{name}-{seed}.log")
    return f"{name}-{seed}: {time.monotonic() - start:.0f} s"


def value(point: dict[str, Any], key: str) -> float | None:
    if key == "misconception":
        return point.get("first_error_classes", {}).get("misconception", 0.0)
    return point.get(key)


def fmt(values: list[float], scale: float = 100.0, signed: bool = False, digits: int = 1) -> str:
    """mean [95 % interval] (percent for rates) with ``digits`` decimals."""
    if not values:
        return "–"
    mean, lo, hi = (round(x, digits) + 0.0 for x in interval([scale * v for v in values]))  # no "-0.0"
    f = f"{'+' if signed else ''}.{digits}f"
    return f"{mean:{f}} [{lo:{f}}, {hi:{f}}]"


def digits_of(key: str) -> int:
    """Decimals a table shows: rates in % take one, the paid reward (in its own units) two."""
    return 2 if key == "paid_reward" else 1


def summarise(out: Path, recipe: dict[str, Any]) -> dict[str, Any]:
    """Cell name -> seed -> its monitor points, for the finished cells."""
    runs: dict[str, dict[int, list[dict[str, Any]]]] = {}
    for name, seed, _ in cells(recipe):
        cell = out / "cells" / f"{name}-{seed}"
        if (cell / "policy_card.json").exists():  # finished: a running cell is not a result yet
            runs.setdefault(name, {})[seed] = read_points(cell / "monitors.jsonl")
    return runs


def scale_of(key: str) -> float:
    return 1.0 if key in ("steps_per_response", "paid_reward") else 100.0


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


def report(out: Path, recipe: dict[str, Any]) -> str:
    runs = summarise(out, recipe)
    grid = recipe["experiment"]
    lines = [
        "# RL against the PRM: rewards compared at equal optimiser steps",
        "",
        f"`python experiments/rl_grid.py --recipe recipes/rl.yaml --out {out}`: π0 = the world's LM pretrained "
        "on the simulated policy's unfiltered samples (no gold); PRM = likelihood head from π0 on MC hard labels "
        "(no gold). Held-out monitors: the same test problems and sampling seeds at every point. Rates in %, "
        "mean [95 % t-interval] over seeds; Δ = last point − π0, paired by seed.",
        "",
    ]
    results: dict[str, Any] = {"cells": {}}
    header = "| reward | seeds | steps | " + " | ".join(METRICS.values()) + " |"
    for title, which in (("π0 (step 0)", 0), ("last point", -1)):
        lines += [f"## {title}", "", header, "|" + "---|" * (len(METRICS) + 3)]
        for name in grid["rewards"]:
            per_seed = runs.get(name, {})
            if not per_seed:
                continue
            steps = sorted({p[which]["step"] for p in per_seed.values()})
            row = [name, str(len(per_seed)), "/".join(map(str, steps))]
            for key in METRICS:
                vals = [v for p in per_seed.values() if (v := value(p[which], key)) is not None]
                row.append(fmt(vals, scale_of(key), digits=digits_of(key)))
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    lines += [
        "## Δ from π0 (last point − step 0, paired by seed)",
        "",
        header,
        "|" + "---|" * (len(METRICS) + 3),
    ]
    deltas: dict[str, dict[str, dict[int, float]]] = {}
    for name in grid["rewards"]:
        per_seed = runs.get(name, {})
        if not per_seed:
            continue
        row = [name, str(len(per_seed)), "/".join(sorted({str(p[-1]["step"]) for p in per_seed.values()}))]
        for key in METRICS:
            d = {
                s: value(p[-1], key) - value(p[0], key)
                for s, p in per_seed.items()
                if value(p[-1], key) is not None and value(p[0], key) is not None
            }
            deltas.setdefault(name, {})[key] = d
            row.append(fmt(list(d.values()), scale_of(key), signed=True, digits=digits_of(key)))
        lines.append("| " + " | ".join(row) + " |")
        results["cells"][name] = {
            "seeds": sorted(per_seed),
            "first": {s: p[0] for s, p in per_seed.items()},
            "last": {s: p[-1] for s, p in per_seed.items()},
            "warnings": {s: all_warnings(p) for s, p in per_seed.items()},
            "kl_last": {s: final_kl(out / "cells" / f"{name}-{s}") for s in per_seed},
        }
    lines += [
        "",
        f"## KL to π0 (TRL's `kl`, mean of the last {KL_LAST} steps; mean [95 % t-interval] over seeds)",
        "",
    ]
    lines += ["| reward | KL |", "|---|---|"]
    for name, cell in results["cells"].items():
        kls = [k for k in cell["kl_last"].values() if k is not None]
        lines.append(f"| {name} | {fmt(kls, 1.0, digits=3) if kls else '–'} |")
    lines += ["", "## Paired differences between rewards (Δ of one minus Δ of the other, same seed)", ""]
    lines += ["| comparison | process-correct | lucky | answer accuracy |", "|---|---|---|---|"]
    base = "outcome"
    for name in grid["rewards"]:
        if name == base or name not in deltas or base not in deltas:
            continue
        row = [f"{name} − {base}"]
        for key in ("process_correct", "lucky", "answer_accuracy"):
            a, b = deltas[name][key], deltas[base][key]
            row.append(fmt([a[s] - b[s] for s in a if s in b], signed=True))
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "## The monitors' warnings (reward hacking; process collapse)", ""]
    for name, per_seed in runs.items():
        for seed, points in sorted(per_seed.items()):
            for w in all_warnings(points):
                lines.append(f"- `{name}` seed {seed}: {w}")
    for name in grid.get("extra") or {}:
        per_seed = runs.get(name, {})
        if per_seed:
            results["cells"][name] = {
                "seeds": sorted(per_seed),
                "points": {s: p for s, p in sorted(per_seed.items())},
                "warnings": {s: all_warnings(p) for s, p in sorted(per_seed.items())},
                "kl_last": {s: final_kl(out / "cells" / f"{name}-{s}") for s in sorted(per_seed)},
            }
        for seed, points in sorted(per_seed.items()):
            lines += ["", f"### extra cell `{name}` (seed {seed}): {grid['extra'][name]}", ""]
            lines += ["| step | " + " | ".join(METRICS.values()) + " |", "|" + "---|" * (len(METRICS) + 1)]
            for p in points:
                cells_ = [
                    f"{scale_of(k) * v:.1f}" if (v := value(p, k)) is not None else "–" for k in METRICS
                ]
                lines.append(f"| {p['step']} | " + " | ".join(cells_) + " |")
    if plot_curves(runs, grid, out / "curves.png"):
        lines += ["", "![curves](curves.png)"]
    (out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    text = "\n".join(lines) + "\n"
    (out / "report.md").write_text(text)
    return text


def plot_curves(runs: dict[str, dict[int, list[dict[str, Any]]]], grid: dict[str, Any], path: Path) -> bool:
    """Each monitor's change from π0 by optimiser step, paired by seed: mean and 95 % interval over
    seeds, one line per reward (extra cells dashed). Levels differ by seed (each seed samples its own
    held-out draws), so the change is what the seeds agree on."""
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
        for name, per_seed in runs.items():
            steps = sorted({p["step"] for pts in per_seed.values() for p in pts})
            means, lows, highs = [], [], []
            for step in steps:
                vals = []
                for pts in per_seed.values():
                    at = [p for p in pts if p["step"] == step]
                    if at and value(at[0], key) is not None and value(pts[0], key) is not None:
                        vals.append(100 * (value(at[0], key) - value(pts[0], key)))
                mean, lo, hi = interval(vals) if vals else (math.nan, math.nan, math.nan)
                means.append(mean)
                lows.append(lo)
                highs.append(hi)
            style = "--" if name in (grid.get("extra") or {}) else "-"
            label = f"{name} ({len(per_seed)})"
            ax.plot(steps, means, style, marker="o", markersize=3, color=colours[name], label=label)
            ax.fill_between(steps, lows, highs, alpha=0.12, color=colours[name])
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_title(f"{METRICS[key]}: change from π0 (points)")
        ax.set_xlabel("GRPO optimiser step")
    axes.flat[0].legend(fontsize=8, title="reward (seeds)")
    fig.suptitle("held-out monitors, change from π0 paired by seed: mean and 95 % interval over seeds")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipe", type=Path, default=Path("recipes/rl.yaml"))
    parser.add_argument("--out", type=Path, default=Path("runs/rl"))
    parser.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    parser.add_argument("--report-only", action="store_true", help="only rebuild the report from the cells")
    parser.add_argument(
        "--only", default="", help="comma-separated cell names (rewards or extra cells) to run; default all"
    )
    args = parser.parse_args()
    recipe = yaml.safe_load(args.recipe.read_text())
    check_recipe(recipe)
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        pi0 = build_pi0(recipe, args.out)
        only = {n for n in args.only.split(",") if n}
        unknown = only - {name for name, _, _ in cells(recipe)}
        if unknown:
            raise SystemExit(f"--only: no cell named {sorted(unknown)} in {args.recipe}")
        todo = [c for c in cells(recipe) if not only or c[0] in only]
        prms = {"pi0": pi0, "prm": build_prm(recipe, args.out, pi0)}
        named = {section.get("prm") for _, _, section in todo}
        if "majority" in named:
            prms["majority"] = build_majority_prm(recipe, args.out, pi0)
        if "orm" in named:
            prms["orm"] = build_orm(recipe, args.out, pi0)
        with ThreadPoolExecutor(args.jobs) as pool:
            for done in pool.map(lambda c: run_cell(args.out, prms, *c), todo):
                print(done, flush=True)
    print(report(args.out, recipe))


if __name__ == "__main__":
    main()

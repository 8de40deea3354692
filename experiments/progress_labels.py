"""Progress labels against gold, beside Monte Carlo and the judge, on both worlds (issue 39).

Per world and seed: the recipe's training traces (``problems.n`` problems of the train split, 4 traces
each, the world's default policy, as recipes/labels-study.yaml and recipes/agent.yaml sample them),
labelled by Monte Carlo (8 rollouts of the world's policy), the world's simulated judge and progress
(:mod:`prmkit.labeling.progress`) in three settings: the default (advantage, margin 0.25, the world's
policy as prover), ``rpe`` (GenPRM's relative progress, 0.8) and ``advantage`` under best-of-4 of the
policy as prover. Each source is scored against gold (read only here, to evaluate): first-error
accuracy over all traces (what the label report calls accuracy), on traces with and without an error,
ProcessBench's F1 of the two, and the step AUROC of the gold first error against the right steps before
it (threshold-free: the soft score, or the rating). Intervals: a nested bootstrap over seeds, then
problems within each seed (each seed draws its own problems), paired with Monte Carlo's hard labels.

``python experiments/progress_labels.py --seeds 0 1 2 --seed-base 100 --out FILE.json`` (tuning) and
``--seeds 0 1 2 3 4 --seed-base 5678`` (claims). Docs show the files in ``progress-labels`` results blocks
(:mod:`prmkit.labeling.views`, ``python experiments/render_results.py``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from prmkit.core.model import Trace
from prmkit.core.stats import Estimate, item_weights, nested_bootstrap, weighted_auroc
from prmkit.evaluation.processbench import first_error_steps
from prmkit.labeling.judge import label_judge
from prmkit.labeling.mc import label_mc
from prmkit.labeling.progress import label_progress
from prmkit.worlds.registry import world

ROOT = Path(__file__).resolve().parents[1]
VARIANTS: dict[str, dict[str, Any]] = {
    "progress": {},
    "progress rpe": {"rule": "rpe"},
    "progress best-of-4": {"best_of": 4},
}
"""Progress settings: the default first (fixed before any number was read), then two variants."""


def labelled(name: str, problems: int, seed: int) -> dict[str, tuple[list[Trace], str, float]]:
    """Source -> (labelled traces, label selector, CPU seconds of its labeller) for one world and seed."""
    w = world(name)
    items = w.generate_problems(problems, seed=seed, split="train")
    traces = w.gold_label(w.sample_traces(items, 4, seed=seed, policy=w.policy(None)))
    policy = w.make_policy()
    out: dict[str, tuple[list[Trace], str, float]] = {}

    def timed(key: str, source: str, job: Callable[[], tuple[list[Trace], dict]]) -> None:
        start = time.process_time()
        done, _ = job()
        out[key] = (done, source, time.process_time() - start)

    timed("mc_hard", "mc_hard", lambda: label_mc(traces, policy, seed=seed))
    out["mc_soft"] = (out["mc_hard"][0], "mc_soft", out["mc_hard"][2])
    timed("judge", "judge", lambda: label_judge(traces, w.judge(seed=seed)))
    for key, options in VARIANTS.items():
        timed(key, "progress_hard", lambda o=options: label_progress(traces, policy, seed=seed, **o))
        out[key + " (soft)"] = (out[key][0], "progress_soft", out[key][2])
    return out


def tables(traces: list[Trace], source: str) -> dict[str, Any]:
    """Per problem: first-error counts (matched and total, traces with and without a gold error), and the
    ranked steps of the threshold-free metric with each step's problem."""
    ids = sorted({t.problem.id for t in traces})
    index = {pid: i for i, pid in enumerate(ids)}
    counts = np.zeros((len(ids), 4))
    rows, gold, problem = [], [], []
    for t in traces:
        g, p = t.first_error("gold"), t.first_error(source)
        col = 0 if g != -1 else 2
        counts[index[t.problem.id], col] += p == g
        counts[index[t.problem.id], col + 1] += 1
        labels = [s.label(source) for s in t.steps]
        if all(lab is not None for lab in labels):
            rows.append([lab.score if lab.score is not None else (lab.verdict() + 1) / 2 for lab in labels])
            gold.append(g)
            problem.append(index[t.problem.id])
    wrong, positive = first_error_steps(rows, gold)
    sizes = [len(r) if g == -1 else min(g + 1, len(r)) for r, g in zip(rows, gold, strict=True)]
    return {"counts": counts, "wrong": wrong, "positive": positive, "step_problem": np.repeat(problem, sizes)}


def metric(kind: str) -> Callable[[dict[str, Any], np.ndarray], np.ndarray]:
    """A statistic of one seed's tables under (R, P) problem weights."""

    def fe(t: dict[str, Any], w: np.ndarray) -> np.ndarray:
        c = w @ t["counts"]
        with np.errstate(invalid="ignore", divide="ignore"):
            err, ok = c[:, 0] / c[:, 1], c[:, 2] / c[:, 3]
            if kind == "accuracy":
                return (c[:, 0] + c[:, 2]) / (c[:, 1] + c[:, 3])
            if kind == "acc_error":
                return err
            if kind == "acc_correct":
                return ok
            return np.where(err + ok > 0, 2 * err * ok / (err + ok), 0.0)

    def auroc(t: dict[str, Any], w: np.ndarray) -> np.ndarray:
        return weighted_auroc(t["wrong"], t["positive"], item_weights(w, t["step_problem"]))

    return auroc if kind == "auroc" else fe


def estimate(per_seed: list[dict[str, Any]], kind: str, base: list[dict[str, Any]] | None) -> Estimate:
    """The mean over seeds of ``kind`` (minus the same on ``base``, paired), nested bootstrap."""
    f = metric(kind)

    def stat(run: int, w: np.ndarray) -> np.ndarray:
        value = f(per_seed[run], w)
        return value - f(base[run], w) if base is not None else value

    draws = [([i], len(t["counts"])) for i, t in enumerate(per_seed)]
    return nested_bootstrap(
        stat, draws, resamples=1000, counted={"seed": len(per_seed), "problem": draws[0][1]}
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", nargs="+", default=["arithmetic", "agent"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--seed-base", type=int, default=100)
    parser.add_argument("--problems", type=int, default=300)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    result: dict[str, Any] = {"seeds": args.seeds, "seed_base": args.seed_base, "problems": args.problems}
    for name in args.worlds:
        runs = [labelled(name, args.problems, args.seed_base + s) for s in args.seeds]
        sources = list(runs[0])
        per_source = {k: [tables(run[k][0], run[k][1]) for run in runs] for k in sources}
        rows = {}
        for k in sources:
            row: dict[str, Any] = {"cpu_s": round(float(np.mean([run[k][2] for run in runs])), 1)}
            for kind in ("accuracy", "acc_error", "acc_correct", "f1", "auroc"):
                row[kind] = estimate(per_source[k], kind, None).to_dict()
                if k != "mc_hard":
                    row[kind + " - mc_hard"] = estimate(per_source[k], kind, per_source["mc_hard"]).to_dict()
            rows[k] = row
            print(
                name, k, {m: round(100 * row[m]["mean"], 1) for m in ("accuracy", "f1", "auroc")}, flush=True
            )
        result[name] = rows
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()

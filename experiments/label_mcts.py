"""OmegaPRM's tree search against binary search and per-step Monte Carlo at equal rollouts (issue 64).

One problem seed of the arithmetic world: ``--problems`` problems of the train split, 4 traces each by the
world's default policy, gold-labelled (gold is read here only, to score). Every method labels the same
traces with the same policy, and each problem gets the same rollout budget: what per-step Monte Carlo
spends there at ``--mc-rollouts`` rollouts per prefix (its rollouts times the problem's distinct unfinished
prefixes). MCTS searches each problem under exactly that budget (``label_mcts`` with ``Rules.budget``);
binary search cannot be held to a budget, so it runs at the rollouts per probe whose mean spend comes
closest to Monte Carlo's without passing it (its spend is reported beside).

Scores against gold, per trace then pooled over problems: first-error accuracy (the label report's),
ProcessBench's F1 (harmonic mean of the accuracies on traces with and without an error), both from the
hard reading (Monte Carlo's ``mc_hard``: some rollout wins; MCTS's rating: MC > 0), and the step AUROC of
the soft labels (``mc_soft``; MCTS's MC) over the steps up to the gold first error, that one positive. A
step a method leaves unlabelled scores 0 after that method's first error (it called the trace wrong there)
and 0.5 elsewhere (it knows nothing there). Intervals: a bootstrap over problems (core.stats, 2,000 resamples),
the differences paired on the same resamples.

``python experiments/label_mcts.py --seed 100 --tune --out docs/results/label-mcts-tuning.json`` tries the
settings; ``--seed 5678 --mcts-rollouts K --bs-rollouts R --out docs/results/label-mcts.json`` claims. Docs show
the two files in ``label-mcts`` results blocks (:mod:`prmkit.labeling.views`,
``python experiments/render_results.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from prmkit.core.model import Trace
from prmkit.core.stats import crossed_bootstrap, item_weights, paired, weighted_auroc
from prmkit.evaluation.processbench import first_error_steps
from prmkit.labeling.binary_search import label_binary_search
from prmkit.labeling.mc import label_mc
from prmkit.labeling.mcts import Rules, label_mcts
from prmkit.worlds.registry import world

Labelled = tuple[list[Trace], tuple[str, str], float, dict[str, int]]
"""(labelled traces, label sources (first error, scores), CPU seconds, rollouts spent per problem)."""


def sample(problems: int, seed: int) -> tuple[list[Trace], Any]:
    """The gold-labelled traces of one problem seed, and the world's policy."""
    w = world("arithmetic")
    items = w.generate_problems(problems, seed=seed, split="train")
    return w.gold_label(w.sample_traces(items, 4, seed=seed, policy=w.policy(None))), w.make_policy()


def spent(traces: list[Trace], method: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in traces:
        out[t.problem.id] = out.get(t.problem.id, 0) + t.metadata["rollouts"][method]
    return out


def timed(job: Callable[[], list[Trace]], source: tuple[str, str], method: str) -> Labelled:
    start = time.process_time()
    done = job()
    return done, source, time.process_time() - start, spent(done, method)


def by_problem(traces: list[Trace]) -> dict[str, list[Trace]]:
    groups: dict[str, list[Trace]] = {}
    for t in traces:
        groups.setdefault(t.problem.id, []).append(t)
    return groups


def run_mcts(traces: list[Trace], policy, budgets: dict[str, int], rollouts: int, seed: int) -> list[Trace]:
    """MCTS one problem at a time, each under its own budget."""
    out: list[Trace] = []
    for pid, group in by_problem(traces).items():
        out += label_mcts(
            group, policy, rules=Rules(rollouts=rollouts, budget=max(budgets[pid], 1)), seed=seed
        )[0]
    return out


def scores(t: Trace, source: str) -> list[float]:
    """A trace's step scores under ``source``: the soft score, else the rating read as 1 / 0; unlabelled
    steps 0 after the source's first error, else 0.5."""
    fe, row = t.first_error(source), []
    for i, step in enumerate(t.steps):
        lab = step.label(source)
        if lab is None:
            row.append(0.0 if fe != -1 and i > fe else 0.5)
        else:
            row.append(lab.score if lab.score is not None else (lab.verdict() + 1) / 2)
    return row


def tables(traces: list[Trace], sources: tuple[str, str], ids: list[str]) -> dict[str, Any]:
    """Per problem: matched / all traces with and without a gold error (first errors of ``sources[0]``);
    the ranked steps (scores of ``sources[1]``) with their problems."""
    source, scored = sources
    index = {pid: i for i, pid in enumerate(ids)}
    counts = np.zeros((len(ids), 4))
    rows, gold, problem = [], [], []
    for t in traces:
        g, p = t.first_error("gold"), t.first_error(source)
        col = 0 if g != -1 else 2
        counts[index[t.problem.id], col] += p == g
        counts[index[t.problem.id], col + 1] += 1
        rows.append(scores(t, scored))
        gold.append(g)
        problem.append(index[t.problem.id])
    wrong, positive = first_error_steps(rows, gold)
    sizes = [len(r) if g == -1 else min(g + 1, len(r)) for r, g in zip(rows, gold, strict=True)]
    return {"counts": counts, "wrong": wrong, "positive": positive, "step_problem": np.repeat(problem, sizes)}


def stat(t: dict[str, Any], kind: str) -> Callable[[int, np.ndarray], np.ndarray]:
    def f(_: int, w: np.ndarray) -> np.ndarray:
        if kind == "auroc":
            return weighted_auroc(t["wrong"], t["positive"], item_weights(w, t["step_problem"]))
        c = w @ t["counts"]
        with np.errstate(invalid="ignore", divide="ignore"):
            err, ok = c[:, 0] / c[:, 1], c[:, 2] / c[:, 3]
            if kind == "accuracy":
                return (c[:, 0] + c[:, 2]) / (c[:, 1] + c[:, 3])
            return np.where(err + ok > 0, 2 * err * ok / (err + ok), 0.0)

    return f


def compare(runs: dict[str, Labelled], budgets: dict[str, int]) -> dict[str, Any]:
    """Every method's metrics with intervals, MCTS's paired differences, and what each spent."""
    ids = sorted(budgets)
    tab = {k: tables(v[0], v[1], ids) for k, v in runs.items()}
    out: dict[str, Any] = {}
    for k, (_, _, cpu, used) in runs.items():
        row: dict[str, Any] = {"cpu_s": round(cpu, 2)}
        row["rollouts_per_problem"] = round(sum(used.values()) / len(ids), 2)
        row["over_budget_problems"] = sum(used.get(p, 0) > budgets[p] for p in ids)
        for kind in ("accuracy", "f1", "auroc"):
            row[kind] = crossed_bootstrap(stat(tab[k], kind), 1, len(ids)).to_dict()
            if k != "mcts":
                diff = paired(stat(tab["mcts"], kind), stat(tab[k], kind))
                row["mcts - this: " + kind] = crossed_bootstrap(diff, 1, len(ids)).to_dict()
        out[k] = row
    return out


def measure(
    problems: int, seed: int, mc_rollouts: int, mcts_rollouts: int, bs_rollouts: int
) -> dict[str, Any]:
    traces, policy = sample(problems, seed)
    runs: dict[str, Labelled] = {}
    runs["mc"] = timed(
        lambda: label_mc(traces, policy, rollouts=mc_rollouts, seed=seed)[0], ("mc_hard", "mc_soft"), "mc"
    )
    budgets = runs["mc"][3]
    runs["binary_search"] = timed(
        lambda: label_binary_search(traces, policy, rollouts=bs_rollouts, seed=seed)[0],
        ("binary_search", "binary_search"),
        "binary_search",
    )
    runs["mcts"] = timed(
        lambda: run_mcts(traces, policy, budgets, mcts_rollouts, seed), ("mcts", "mcts"), "mcts"
    )
    settings = {"mc_rollouts": mc_rollouts, "mcts_rollouts": mcts_rollouts, "bs_rollouts": bs_rollouts}
    result = {"seed": seed, "problems": problems, "traces": len(traces), **settings}
    result["budget_per_problem"] = round(sum(budgets.values()) / len(budgets), 2)
    result["methods"] = compare(runs, budgets)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--problems", type=int, default=400)
    parser.add_argument("--mc-rollouts", type=int, default=4)
    parser.add_argument("--mcts-rollouts", type=int, default=8)
    parser.add_argument("--bs-rollouts", type=int, default=8)
    parser.add_argument("--tune", action="store_true", help="try MCTS at 2, 4, 8 and binary search at 8, 16")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    grid = (
        [(k, r) for k in (2, 4, 8) for r in (8, 16)]
        if args.tune
        else [(args.mcts_rollouts, args.bs_rollouts)]
    )
    results = []
    for k, r in grid:
        results.append(measure(args.problems, args.seed, args.mc_rollouts, k, r))
        m = results[-1]["methods"]
        print(k, r, {name: (round(100 * v["f1"]["mean"], 1), round(100 * v["auroc"]["mean"], 1),
                            v["rollouts_per_problem"]) for name, v in m.items()}, flush=True)  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    out = {"command": "python experiments/label_mcts.py " + " ".join(sys.argv[1:] if argv is None else argv)}
    out["runs"] = results
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()

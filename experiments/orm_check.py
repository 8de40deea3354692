"""Why the world's ORM sits where it does against majority vote: its outcome AUROC and its weighted vote.

Let's Verify Step by Step finds its ORM above majority vote (72.4 against 69.6 at N = 1860); the world's
ORM, trained as the papers train it (the PRM's backbone and likelihood head, the same 12,000 traces and
500 steps, outcome labels at the last step), is read here on the evaluation's test pools (48 problems
× 64, ``evaluate.seed`` or ``--claims``): how well its score separates right from wrong final answers
(outcome AUROC over all test traces, and within a problem's pool, where best-of-N chooses), and
best-of-N by it, the ORM-weighted vote and majority vote per problem, paired over seeds × problems with
:mod:`prmkit.core.stats`. Gold is read only to evaluate.

``python experiments/orm_check.py runs/world-seeds [--claims] [--out FILE.json]``
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from prmkit.core.stats import Stat, crossed_bootstrap, mean_stat, paired, weighted_auroc
from prmkit.evaluation.bon_curves import bon_curves
from prmkit.evaluation.gold import group_by_problem, trace_correct
from prmkit.evaluation.suite import world_traces
from prmkit.pipeline.runner import load_recipe
from prmkit.scoring import load_scorer


def within_pool_auroc(correct: np.ndarray, score: np.ndarray, groups: list[list[int]]) -> float:
    """Mean over problems with both right and wrong traces of the AUROC inside the pool."""
    values = []
    for idx in groups:
        c = correct[idx]
        if c.any() and not c.all():
            values.append(float(weighted_auroc(score[idx], c, np.ones(len(idx)))[0]))
    return float(np.mean(values)) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sweep", type=Path, help="a sweep's output folder (seed-<s>/stages/orm-*/model)")
    parser.add_argument("--recipe", type=Path, default=Path("recipes/world.yaml"))
    parser.add_argument("--claims", action="store_true", help="the claims set (evaluate.claims_seed)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    e = load_recipe(args.recipe).evaluate
    seed = e.claims_seed if args.claims else e.seed
    test = world_traces(e.problems, e.per_problem, seed, "test", e.policy, e.world)
    correct = np.array([trace_correct(t) for t in test])
    groups = list(group_by_problem(test).values())
    per_seed, rows = [], {}
    for folder in sorted(args.sweep.glob("seed-*")):
        orm = load_scorer(next((folder / "stages").glob("orm-*")) / "model")
        scores = orm.score(test)
        last = np.array([s[-1] for s in scores])
        bon = bon_curves(test, scores, None, aggregations=("last",), vote_aggregation="last", ns=[4, 16, 64])
        per_seed.append(bon.per_problem)
        rows[folder.name] = {
            "outcome_auroc": float(weighted_auroc(last, correct, np.ones(len(last)))[0]),
            "outcome_auroc_within_pool": within_pool_auroc(correct, last, groups),
            **{f"{r['method']} N={r['n']}": r["accuracy"] for r in bon.rows if r["n"] in (4, 16, 64)},
        }
        print(folder.name, json.dumps(rows[folder.name]))
    problems = len(per_seed[0]["problems"])
    out = {"evaluate_seed": seed, "per_seed": rows, "paired": {}}
    for n_i, n in enumerate(per_seed[0]["ns"]):

        def stat(method: str, n_i: int = n_i) -> Stat:
            return mean_stat([np.asarray(p["accuracy"][method][n_i]) for p in per_seed])

        for method, name in (("prm:last", "ORM best-of-N"), ("weighted:last", "ORM-weighted vote")):
            est = crossed_bootstrap(paired(stat(method), stat("majority")), len(per_seed), problems)
            out["paired"][f"{name} − majority vote: N={n}"] = est.to_dict() | {"cell": est.cell(signed=True)}
            print(f"{name} − majority, N={n}: {est.cell(signed=True)}")
    if args.out:
        args.out.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

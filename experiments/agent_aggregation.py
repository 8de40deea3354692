"""Which aggregation of step scores selects best on the agent world: best-of-N by ``min``, ``last``, ``mean``
and ``recover`` (``min`` that forgives a step the next one recovers from; :mod:`prmkit.scoring.aggregate`),
beside majority vote and the PRM-weighted vote, on the tuning set and then on the claims set.

Why: the gold PRM locates first errors best, yet its best-of-N by ``min`` does not select better. An agent
often errs and then recovers (a retry after a failed call, a later look-up correcting a misread value), and
``min`` ranks a recovered trajectory as low as one that never recovered. Whether another aggregation selects
better is measured here on the tuning set (``evaluate.seed``) and claimed on the fresh claims set
(``evaluate.claims_seed``), by task accuracy and by honest accuracy (a pick that games the task is wrong;
:mod:`prmkit.evaluation.bon_curves`).

How: for each seed folder of an agent-recipe run (a sweep's ``seed-*/`` or one run's folder), each model
(every ``eval-<model>`` stage: the PRMs, the ORM, the pretrained LM read zero-shot by likelihood) scores the
evaluation's own test pool of each set once, drawn as :func:`prmkit.evaluation.suite.evaluate_world` draws
it from the run's resolved ``evaluate`` section and scored in the calls its stage made (batch mates can move
the last float bits). :func:`~prmkit.evaluation.bon_curves.bon_curves` then reads the stage's aggregations plus
``recover`` from the same subsets and random numbers, so ``min``, ``last`` and ``mean`` must equal the
stage's ``bon.csv`` row for row: the script checks that before it reports anything. Means over seeds carry
crossed-bootstrap intervals over seeds × problems (:mod:`prmkit.core.stats`), paired differences (each
aggregation − ``min``, each pick − majority vote) computed on the very same draws, as
:mod:`prmkit.evaluation.study` pairs models.

``python experiments/agent_aggregation.py RUN [RUN ...] --out docs/results/agent-aggregation.json``
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from prmkit.core.model import Trace
    from prmkit.core.protocols import StepScorer

AGGREGATIONS = ("min", "last", "mean", "recover")
STAGE_CHECKED = ("min", "last", "mean")
"""The aggregations the evaluation stage measured too: their rows must equal its ``bon.csv``."""
SETS = {"tuning": "eval", "claims": "claims"}
"""Evaluation set -> its stages' prefix, which is also the folder they write (``eval-prm-gold/eval``)."""
MAJORITY, WEIGHTED = "majority vote", "weighted vote"


def seed_folders(runs: Sequence[Path]) -> list[Path]:
    """Each run's seed folders: a sweep's ``seed-<n>/`` in seed order, every one (a seed still running has
    no stage index yet and is refused by name, not left out), or the folder itself (one run)."""
    out = []
    for run in runs:
        seeds = [p for p in run.glob("seed-*") if p.is_dir() and p.name.removeprefix("seed-").isdigit()]
        out += sorted(seeds, key=lambda p: int(p.name.removeprefix("seed-"))) or [run]
    return out


def model_name(stage: str) -> str:
    """A model as the study tables name it: the pretrained LM is ``lm (zero-shot)``."""
    from prmkit.pipeline.recipe import LM

    return LM if stage == "pretrain" else stage


def stage_scores(scorer: StepScorer, test: Sequence[Trace]) -> list[list[float]]:
    """The test pool's step scores in the calls the evaluation stage made: its dev third of problems in one
    call (the threshold's tuning), the rest :data:`~prmkit.evaluation.processbench.CHUNK` traces a call."""
    from prmkit.evaluation.gold import group_by_problem
    from prmkit.evaluation.processbench import CHUNK
    from prmkit.evaluation.suite import CachedScorer

    cached = CachedScorer(scorer)
    pids = list(group_by_problem(test))
    dev = set(pids[: len(pids) // 3])
    cached.score([t for t in test if t.problem.id in dev])
    rest = [t for t in test if t.problem.id not in dev]
    for start in range(0, len(rest), CHUNK):
        cached.score(rest[start : start + CHUNK])
    return cached.score(test)


def check_stage(rows: Sequence[dict[str, Any]], bon_csv: Path) -> None:
    """Raise unless every ``prm:<min|last|mean>`` row equals the stage's ``bon.csv`` (the same pool, scores
    and draws)."""
    methods = {f"prm:{a}" for a in STAGE_CHECKED}
    with open(bon_csv, encoding="utf-8") as fh:
        theirs = [r for r in csv.DictReader(fh) if r["method"] in methods]
    mine = [{k: str(v) for k, v in r.items()} for r in rows if r["method"] in methods]
    if not theirs or mine != theirs:
        first = next(((a, b) for a, b in itertools.zip_longest(mine, theirs) if a != b), "no rows")
        raise ValueError(f"{bon_csv}: this pool's best-of-N differs from the stage's (mine, its): {first}")


def measure_seed(folder: Path) -> dict[str, Any]:
    """One seed: per set, its draws and each model's per-problem best-of-N (``bon_per_problem.json``'s
    shape), checked against the stage's ``bon.csv``."""
    from prmkit.evaluation.bon_curves import bon_curves
    from prmkit.evaluation.config import DEFAULT_AGGREGATIONS
    from prmkit.evaluation.suite import world_traces
    from prmkit.pipeline.recipe import Recipe
    from prmkit.pipeline.runner import stage_index
    from prmkit.scoring import load_scorer

    recipe = Recipe.model_validate(json.loads((folder / "recipe.resolved.json").read_text()))
    e = recipe.evaluate
    if e.claims_seed is None:
        raise ValueError(f"{folder}: its recipe sets no evaluate.claims_seed, so it has no claims set")
    stages = stage_index(folder)
    models = [name.removeprefix("eval-") for name in stages if name.startswith("eval-")]
    missing = [f"{prefix}-{m}" for m in models for prefix in SETS.values() if f"{prefix}-{m}" not in stages]
    if missing:
        raise ValueError(f"{folder}: no stages {missing}; run the recipe (with its claims_seed) to the end")
    settings = {"tuning": e, "claims": e.model_copy(update={"seed": e.claims_seed})}
    pools = {
        s: world_traces(c.problems, c.per_problem, c.seed, "test", c.policy, c.world)
        for s, c in settings.items()
    }
    out: dict[str, Any] = {
        s: {"seed": c.seed, "samples": c.per_problem, "models": {}} for s, c in settings.items()
    }
    for m in models:
        scorer = load_scorer(stages[m] / "model", "likelihood" if m == "pretrain" else None)
        for set_name, prefix in SETS.items():
            c, test = settings[set_name], pools[set_name]
            result = bon_curves(
                test, stage_scores(scorer, test), None, (*DEFAULT_AGGREGATIONS, "recover"),
                bootstrap=c.bootstrap, seed=c.seed,
            )  # fmt: skip
            check_stage(result.rows, stages[f"{prefix}-{m}"] / prefix / "bon.csv")
            out[set_name]["models"][model_name(m)] = result.per_problem
    return out


def _estimate(stat: Any, seeds: int, problems: int, resamples: int, signed: bool = False) -> dict[str, Any]:
    """A crossed-bootstrap estimate over seeds × problems (widened for few seeds), with the range of
    single runs and its table cell, as the study's estimates are."""
    from prmkit.core.stats import crossed_bootstrap, single_run_range

    draws = {"seed": seeds, "problem": problems}
    est = crossed_bootstrap(stat, seeds, problems, resamples=resamples, draws=draws)
    one = [float(stat(s, np.ones((1, problems)))[0]) for s in range(seeds)]
    return est.to_dict() | {"single_run": list(single_run_range(one)), "cell": est.cell(signed=signed)}


def summarise(per_seed: Sequence[dict[str, Any]], ns: Sequence[int], resamples: int) -> dict[str, Any]:
    """One set over seeds (``per_seed``: model -> per-problem best-of-N): each model's pick by each
    aggregation and its weighted vote, majority vote (one pool for every model), and the paired
    differences (each aggregation − ``min``, each pick and vote − majority vote), each as accuracy and
    honest accuracy on the same resampled seeds and problems."""
    from prmkit.core.stats import multiplicity, paired
    from prmkit.evaluation.study import Measured, bon_stat

    models = list(per_seed[0])
    runs = {m: [Measured([], seed[m]) for seed in per_seed] for m in models}
    problems = runs[models[0]][0].bon["problems"]
    size = (len(per_seed), len(problems), resamples)
    rows = {MAJORITY: (models[0], "majority")}  # the same pool and draws whichever model's file
    rows |= {f"{m} {a}": (m, f"prm:{a}") for m in models for a in AGGREGATIONS}
    rows |= {f"{m} {WEIGHTED}": (m, "weighted:min") for m in models}
    pairs = [(f"{m} {a}", f"{m} min") for m in models for a in AGGREGATIONS if a != "min"]
    pairs += [(row, MAJORITY) for row in rows if row != MAJORITY]
    out: dict[str, Any] = {"estimates": {}, "paired": {}}
    for key in ("accuracy", "honest"):
        for n in ns:
            stats = {row: bon_stat(runs[m], method, n, problems, key) for row, (m, method) in rows.items()}
            for row, stat in stats.items():
                out["estimates"].setdefault(row, {}).setdefault(f"N={n}", {})[key] = _estimate(stat, *size)
            for a, b in pairs:
                diff = _estimate(paired(stats[a], stats[b]), *size, signed=True)
                out["paired"].setdefault(f"{a} − {b}", {}).setdefault(f"N={n}", {})[key] = diff
    count = sum(len(by_n) * 2 for table in ("estimates", "paired") for by_n in out[table].values())
    return out | {"intervals": count, "multiplicity": multiplicity(count)}


def tables(section: dict[str, Any]) -> str:
    """The compact tables a run prints: accuracy | honest accuracy at each N, then the paired rows."""
    from prmkit.core.results import Table

    lines = []
    for table, head in (("estimates", "best-of-N"), ("paired", "paired difference, points")):
        by_row = section[table]
        ns = list(next(iter(by_row.values())))
        rows = [[row, *(f"{c['accuracy']['cell']} \\| {c['honest']['cell']}" for c in by_n.values())]
                for row, by_n in by_row.items()]  # fmt: skip
        lines += ["", *Table(rows, columns=[f"{head}: accuracy | honest", *ns]).grid()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path, nargs="+", help="agent-recipe run folders (a sweep's or a seed's)")
    parser.add_argument(
        "--out", type=Path, help="the JSON file to write (e.g. docs/results/agent-aggregation.json)"
    )
    parser.add_argument("--ns", default="4,16,32", help="best-of-N sizes to report, comma-separated")
    parser.add_argument("--resamples", type=int, default=2000, help="crossed-bootstrap resamples")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    ns = [int(n) for n in args.ns.split(",")]
    folders = seed_folders(args.runs)
    measured = [measure_seed(f) for f in folders]
    result: dict[str, Any] = {
        "command": shlex.join(
            ["python", "experiments/agent_aggregation.py", *(argv if argv is not None else sys.argv[1:])]
        ),
        "runs": [str(f) for f in folders],
        "aggregations": list(AGGREGATIONS),
        "ns": ns,
        "resamples": args.resamples,
    }
    for set_name in SETS:
        per_seed = [m[set_name] for m in measured]
        first = per_seed[0]
        missing = [n for n in ns if n not in next(iter(first["models"].values()))["ns"]]
        if missing or len({p["seed"] for p in per_seed}) > 1:
            raise ValueError(f"{set_name}: N {missing} not measured, or seeds evaluated on other sets")
        problems = len(next(iter(first["models"].values()))["problems"])
        draws = {"seeds": len(folders), "problems": problems, "samples": first["samples"]}
        result[set_name] = {
            "evaluate_seed": first["seed"],
            "draws": draws,
            "reproduced": f"best-of-N by {', '.join(STAGE_CHECKED)} equals every stage's bon.csv",
        } | summarise([p["models"] for p in per_seed], ns, args.resamples)
    result["seconds"] = round(time.perf_counter() - started, 1)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for set_name in SETS:
        s = result[set_name]
        print(f"\n{set_name} set (evaluate seed {s['evaluate_seed']}): {s['draws']}; {s['multiplicity']}")
        print(tables(s))
    print(f"\n{result['seconds']} s")
    return result


if __name__ == "__main__":
    main()

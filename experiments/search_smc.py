"""Particle filtering (``prmkit smc``) against beam search and best-of-N at equal samples (issue 64).

On the arithmetic world (test split; the policy's errors correlated across samples, ``systematic`` 0.5
as bench/bench_search.py draws them), every method gets the same N per problem: best-of-N draws N whole
solutions, beam search keeps N/4 prefixes and expands each by 4 next steps per round (N steps a round),
SMC grows N particles a step per round (its_hub's defaults: weights softmax(logit(last step's score)),
multinomial resampling, finished particles resampled with the rest; and ``keep_finished``). The steps
each spends are reported beside its accuracy, and best-of-N is run again with as many samples as SMC's
steps buy (equal generated steps, as bench/bench_search.py compares beam search).

Scorers, neither trained: ``judge`` is the world's simulated judge (``prmkit.worlds.arithmetic.judge``,
its default noise: it misses 15 % of errors, more after one of the policy's misconceptions, and
false-alarms on 5 % of right steps) as a PRM: a step's score is the share of ``JUDGES`` judges (seeds
0..3) that rate no step up to it wrong, a K-sample mean in [0, 1]. ``oracle`` is the world's exact
checker (``arithmetic-oracle``): it measures the search with a perfect verifier, not a PRM.

Intervals: a crossed bootstrap over search seeds × problems (``prmkit.core.stats``), differences
paired (the same problems and search seeds on both sides). Tuning set: problem seed 100, read while the
script was written (it showed SMC spending more steps than best-of-N at equal N, hence the equal-steps
row; SMC kept its_hub's settings throughout); claims: problem seed 5678, run once after.

``python experiments/search_smc.py --problems 200 --seeds 3 --out docs/results/search-smc.json``
(both sets). Docs show the file in ``search-smc`` results blocks (:mod:`prmkit.search.views`,
``python experiments/render_results.py``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from prmkit.core.model import Trace
from prmkit.core.stats import crossed_bootstrap, mean_stat, paired
from prmkit.search import beam_search, best_of_n, smc
from prmkit.search.views import smc_table
from prmkit.worlds.arithmetic import PolicyConfig, WorldPolicy, generate_problems
from prmkit.worlds.arithmetic.judge import SimulatedJudge
from prmkit.worlds.arithmetic.oracle import OracleScorer

ROOT = Path(__file__).resolve().parents[1]
SETS = {"tuning": 100, "claims": 5678}
"""Problem seed of each set."""
JUDGES = 4
METHODS: dict[str, Callable[..., list]] = {
    "best-of-N (min)": lambda ps, pol, sc, n, seed: best_of_n(ps, pol, sc, n, "min", seed),
    "beam (M=4, min)": lambda ps, pol, sc, n, seed: beam_search(ps, pol, sc, n, 4, 40, "min", seed),
    "SMC (its_hub)": lambda ps, pol, sc, n, seed: smc(ps, pol, sc, n, seed=seed),
    "SMC keep_finished": lambda ps, pol, sc, n, seed: smc(ps, pol, sc, n, seed=seed, keep_finished=True),
}
REFERENCE = "SMC (its_hub)"
"""The row every other is compared with (paired)."""
EQUAL_STEPS = "best-of-N at SMC's steps"
"""Best-of-N with as many samples as SMC's generated steps buy (N' = SMC's steps / steps per sample)."""


class JudgeScorer:
    """The simulated judge as a PRM: step i scores the share of judges that rate no step up to i -1."""

    name = "arithmetic-judge-mean"

    def __init__(self, judges: int = JUDGES):
        self.judges = [SimulatedJudge(seed=j) for j in range(judges)]

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        out = []
        for t in traces:
            firsts = [j.judge(t.problem, t.steps).first_error for j in self.judges]
            n = len(t.steps)
            out.append([sum(f < 0 or i < f for f in firsts) / len(firsts) for i in range(n)])
        return out


SCORERS: dict[str, Callable[[], Any]] = {"judge": JudgeScorer, "oracle": OracleScorer}


def _measure(runs: list[list], problems: int, start: float) -> tuple[list[np.ndarray], dict[str, Any]]:
    """Per-seed correctness arrays and the row of one method's runs (one list of results per seed)."""
    correct = [np.array([float(bool(r.correct)) for r in rs]) for rs in runs]
    flat = [r for rs in runs for r in rs]
    return correct, {
        "accuracy": crossed_bootstrap(mean_stat(correct), len(runs), problems).to_dict(),
        "steps_generated": float(np.mean([r.compute.steps_generated for r in flat])),
        "steps_scored": float(np.mean([r.compute.steps_scored for r in flat])),
        "cpu_s": round(time.process_time() - start, 1),
    }


def run_set(problem_seed: int, problems: int, seeds: int, sizes: Sequence[int]) -> dict[str, Any]:
    """Per scorer and N: each method's accuracy, steps generated and scored per problem, and the paired
    differences from :data:`REFERENCE`, over ``seeds`` search seeds × ``problems`` problems; plus
    best-of-N with as many samples as match SMC's generated steps (:data:`EQUAL_STEPS`)."""
    items = generate_problems(problems, seed=problem_seed, split="test")
    policy = WorldPolicy(PolicyConfig(systematic=0.5))
    out: dict[str, Any] = {}
    for scorer_name, make in SCORERS.items():
        scorer = make()
        for n in sizes:
            correct: dict[str, list[np.ndarray]] = {}
            rows: dict[str, Any] = {}
            for method, fn in METHODS.items():
                start = time.process_time()
                runs = [fn(items, policy, scorer, n, 1000 * s) for s in range(seeds)]
                correct[method], rows[method] = _measure(runs, problems, start)
            per_sample = rows["best-of-N (min)"]["steps_generated"] / n
            n_equal = max(1, round(rows[REFERENCE]["steps_generated"] / per_sample))
            start = time.process_time()
            runs = [best_of_n(items, policy, scorer, n_equal, "min", 1000 * s) for s in range(seeds)]
            correct[EQUAL_STEPS], rows[EQUAL_STEPS] = _measure(runs, problems, start)
            rows[EQUAL_STEPS]["n"] = n_equal
            for method in rows:
                if method != REFERENCE:
                    diff = paired(mean_stat(correct[REFERENCE]), mean_stat(correct[method]))
                    rows[method]["smc_minus"] = crossed_bootstrap(diff, seeds, problems).to_dict()
            out[f"{scorer_name}/{n}"] = rows
            print(scorer_name, n, {m: round(r["accuracy"]["mean"], 3) for m, r in rows.items()}, flush=True)
    return {"problem_seed": problem_seed, "rows": out}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=3, help="search seeds per problem")
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 16])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    result = {
        "problems": args.problems,
        "seeds": args.seeds,
        "sizes": args.sizes,
        "judges": JUDGES,
        "sets": {},
    }
    for name in args.sets:
        result["sets"][name] = run_set(SETS[name], args.problems, args.seeds, args.sizes)
        print(smc_table(result, name))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()

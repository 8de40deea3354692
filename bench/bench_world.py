"""How fast the embedded world is, on one core: `python bench/bench_world.py [--problems 2000] [--per-problem 8]`.

Prints complete traces per second for the simulated policy (the goal is >= 10,000 per core), for its
core loop alone (plain tuples, no pydantic objects) as the in-process baseline, and for the gold checker
and gold labelling, in items per CPU-second of this process. Best of ``--repeats`` runs; the machine
is shared, so timings are noisy.
"""

from __future__ import annotations

import argparse
import random
import time

from prmkit.worlds.arithmetic import WorldPolicy, check_trace, generate_problems, gold_label, sample_traces
from prmkit.worlds.arithmetic.checker import Belief
from prmkit.worlds.arithmetic.generator import derive_seed


def best_rate(fn, count: int, repeats: int) -> float:
    """Items per CPU-second of ``fn()`` producing ``count`` items: the best of ``repeats`` runs.

    CPU time of this process (``time.process_time``), not wall time, so that other jobs on a shared
    machine do not count against it; it is still noisy (caches and memory bandwidth are shared).
    """
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return count / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--problems", type=int, default=2000)
    parser.add_argument("--per-problem", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    problems = generate_problems(args.problems, seed=0)
    n = args.problems * args.per_problem
    policy = WorldPolicy()
    compiled = [policy.compile(p) for p in problems]

    def rollouts_only() -> None:
        for cp in compiled:
            rng = random.Random(derive_seed("bench", cp.chain.quantities))
            start = Belief.start(cp.chain)
            for _ in range(args.per_problem):
                policy.rollout(cp, start, rng)

    traces = sample_traces(problems, args.per_problem, seed=0, policy=policy)
    rates = {
        "policy core loop (tuples, baseline)": best_rate(rollouts_only, n, args.repeats),
        "sample_traces (Trace objects)": best_rate(
            lambda: sample_traces(problems, args.per_problem, policy=policy), n, args.repeats
        ),
        "check_trace (gold checker)": best_rate(lambda: [check_trace(t) for t in traces], n, args.repeats),
        "gold_label (checker + Labels)": best_rate(lambda: gold_label(traces), n, args.repeats),
        "generate_problems": best_rate(
            lambda: generate_problems(args.problems // 4, seed=1), args.problems // 4, args.repeats
        ),
    }
    baseline = rates["policy core loop (tuples, baseline)"]
    print(
        f"embedded world, one core, {n} traces of {args.problems} default train problems (best of {args.repeats})"
    )
    for name, rate in rates.items():
        print(f"  {name:<38} {rate:>10,.0f} items/s   {rate / baseline:5.2f}x core loop")
    goal = rates["sample_traces (Trace objects)"]
    print(
        f"complete traces per second per core: {goal:,.0f} (goal >= 10,000: {'met' if goal >= 10_000 else 'NOT met'})"
    )


if __name__ == "__main__":
    main()

"""Binary search vs per-step Monte Carlo: rollouts spent at equal first-error accuracy, in one run.

Both label the same world traces with the same policy and are scored against the world's gold first
error. Per-step MC (Math-Shepherd) rolls out N times from every step prefix; binary search (OmegaPRM)
probes log2(steps) prefixes of wrong-answer traces and stops a probe at its first successful rollout.
The goal: binary search spends at most 35 % of MC's rollouts at the same accuracy. Two comparisons are
printed: against MC with the same N, and against the rollouts MC needs for the same accuracy
(interpolated linearly between the two MC settings around it).

    python bench/bench_labeling.py [--problems 300] [--per-problem 4] [--seed 3]
"""

from __future__ import annotations

import argparse
import time

from prmkit.labeling.binary_search import label_binary_search
from prmkit.labeling.mc import label_mc
from prmkit.labeling.report import score_source
from prmkit.worlds.arithmetic import WorldPolicy, generate_problems, gold_label, sample_traces

Row = tuple[str, int, str, int, float, float]  # method, N, batch, rollouts, first-error accuracy, seconds


def run_all(traces, seed: int) -> list[Row]:
    policy = WorldPolicy()
    rows: list[Row] = []
    for n in (1, 2, 4, 8):
        t0 = time.perf_counter()
        out, s = label_mc(traces, policy, rollouts=n, seed=seed)
        acc = score_source(out, "mc_hard", "gold")["first_error"]["accuracy"]
        rows.append(("mc (per step)", n, "-", s["rollouts"], acc, time.perf_counter() - t0))
    for n, batch in ((4, 1), (8, 1), (8, 2)):
        t0 = time.perf_counter()
        out, _, s = label_binary_search(traces, policy, rollouts=n, batch=batch, seed=seed)
        acc = score_source(out, "binary_search", "gold")["first_error"]["accuracy"]
        rows.append(("binary search", n, str(batch), s["rollouts"], acc, time.perf_counter() - t0))
    return rows


def mc_rollouts_at(mc: list[Row], accuracy: float) -> float | None:
    """Rollouts per-step MC needs for ``accuracy``: linear between the two N settings around it.

    The first MC setting reaching it counts (accuracy is not monotone in N here: see docs/labeling.md);
    None when no setting reaches it.
    """
    prev = None
    for row in sorted(mc, key=lambda r: r[3]):
        if row[4] >= accuracy:
            if prev is None or prev[4] >= row[4]:
                return float(row[3])
            frac = (accuracy - prev[4]) / (row[4] - prev[4])
            return prev[3] + max(0.0, frac) * (row[3] - prev[3])
        prev = row
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", type=int, default=300)
    ap.add_argument("--per-problem", type=int, default=4)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    problems = generate_problems(args.problems, seed=args.seed, split="test")
    traces = gold_label(sample_traces(problems, args.per_problem, seed=args.seed))
    rows = run_all(traces, args.seed)
    right = sum(bool(t.answer_correct) for t in traces) / len(traces)
    steps = sum(len(t.steps) for t in traces) / len(traces)
    print(f"{len(traces)} world traces, {steps:.1f} steps each, {right:.0%} right answers; seed {args.seed}")
    print(f"{'method':<15}{'N':>3}{'batch':>6}{'rollouts':>10}{'per trace':>10}{'fe acc':>8}{'seconds':>9}")
    for name, n, batch, spent, acc, secs in rows:
        print(f"{name:<15}{n:>3}{batch:>6}{spent:>10}{spent / len(traces):>10.2f}{acc:>8.3f}{secs:>9.2f}")
    mc, bs = [r for r in rows if r[0].startswith("mc")], [r for r in rows if r[0].startswith("binary")]
    main_bs, mc8 = bs[-1], mc[-1]
    ratio = main_bs[3] / mc8[3]
    print(
        f"\nsame N: binary search (N=8, batch 2) spends {ratio:.1%} of per-step MC's (N=8) rollouts; "
        f"first-error accuracy {main_bs[4]:.3f} vs {mc8[4]:.3f} ({main_bs[4] - mc8[4]:+.3f})"
    )
    equal = []
    for b in bs:
        need = mc_rollouts_at(mc, b[4])
        if need is None:
            print(
                f"equal accuracy: search N={b[1]} batch {b[2]} ({b[4]:.3f}) is more accurate than every MC setting"
            )
            continue
        equal.append(b[3] / need)
        print(
            f"equal accuracy: search N={b[1]} batch {b[2]} ({b[4]:.3f}) spends {b[3] / need:.1%} of what per-step MC "
            f"needs for that accuracy ({need:.0f} rollouts, interpolated between its N settings)"
        )
    best = min(equal, default=float("nan"))
    verdict = "met" if best <= 0.35 else "NOT met"
    print(f"goal <= 35 % at equal accuracy: {verdict} (best {best:.1%}); at equal N: {ratio:.1%}.")
    print("Timings are wall clock on shared cores: noisy.")


if __name__ == "__main__":
    main()

"""Search with a PRM on the world, side by side in one run: best-of-N, votes and beam search.

Every selection method judges the SAME sample pools (N = 16 and 64 per problem, drawn once), so their
accuracies differ only by how they choose: plain majority vote, PRM-weighted vote, PRM best-of-N per
aggregation, ORM best-of-N, and the oracle pass@N. Then PRM-guided beam search and DVTS are compared
with best-of-N at (about) equal generated steps, the compute both spend on the policy.

    python bench/bench_search.py --prm runs/prm [--orm runs/orm] [--problems 100] [--systematic 0.5]

``--systematic`` makes the simulated policy's errors correlated across samples of a problem, as a real
model's are (docs/world.md); with independent errors (0) majority vote is right 98 % of the time at
N = 16 and leaves nothing to win. Without ``--prm`` the world's exact oracle scores steps (an upper bound,
labelled as such). Prints a Markdown table and writes ``--out`` (JSON) when given.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def pools(problems, policy, n: int, seed: int):
    from prmkit.search.common import Compute, sample_candidates
    from prmkit.worlds.arithmetic import gold_label  # sets answer_correct (and gold step labels, unused here)

    return [gold_label(sample_candidates(policy, p, n, seed + k, Compute())) for k, p in enumerate(problems)]


def accuracy(pools_, pick) -> float:
    return statistics.mean(
        float(bool(pool[i].answer_correct)) if i >= 0 else 0.0 for pool, i in zip(pools_, pick, strict=True)
    )


def selection_rows(pools_, prm_scores, orm_scores, n: int) -> dict[str, float]:
    from prmkit.search.bon import select_best
    from prmkit.search.vote import select_vote

    sub = [pool[:n] for pool in pools_]
    prm = [s[:n] for s in prm_scores]

    def winner(pool, scores=None):
        group, _ = select_vote(pool, scores)
        return group.members[0] if group else -1

    rows = {
        "majority vote": accuracy(sub, [winner(p) for p in sub]),
        "PRM-weighted vote (min)": accuracy(sub, [winner(p, s) for p, s in zip(sub, prm, strict=True)]),
    }
    for how in ("min", "prod", "last", "mean"):
        rows[f"PRM best-of-N ({how})"] = accuracy(
            sub, [select_best(p, s, how) for p, s in zip(sub, prm, strict=True)]
        )
    if orm_scores is not None:
        orm = [s[:n] for s in orm_scores]
        rows["ORM best-of-N (last)"] = accuracy(
            sub, [select_best(p, s, "last") for p, s in zip(sub, orm, strict=True)]
        )
    rows["pass@N (oracle)"] = statistics.mean(float(any(t.answer_correct for t in p)) for p in sub)
    return rows


def main(argv: list[str] | None = None) -> dict:
    from prmkit.scoring import load_scorer
    from prmkit.worlds.arithmetic import PolicyConfig, WorldPolicy, generate_problems

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--prm", default="arithmetic-oracle", help="PRM checkpoint (default: the world's exact oracle)"
    )
    ap.add_argument("--orm", default=None, help="ORM checkpoint for ORM best-of-N")
    ap.add_argument("--problems", type=int, default=100)
    ap.add_argument("--split", default="test", choices=["test", "heldout"])
    ap.add_argument("--systematic", type=float, default=0.5)
    ap.add_argument("--systematic-rate", type=float, default=0.5)
    ap.add_argument("--beam-problems", type=int, default=40, help="0 skips beam search")
    ap.add_argument("--seed", type=int, default=4321)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)

    policy = WorldPolicy(PolicyConfig(systematic=a.systematic, systematic_rate=a.systematic_rate))
    problems = generate_problems(a.problems, seed=a.seed, split=a.split)
    prm = load_scorer(a.prm)
    drawn = pools(problems, policy, 64, a.seed)
    flat = [t for pool in drawn for t in pool]
    prm_flat = prm.score(flat)
    orm_flat = load_scorer(a.orm).score(flat) if a.orm else None

    def regroup(scores):
        return None if scores is None else [scores[k * 64 : (k + 1) * 64] for k in range(len(drawn))]

    prm_scores, orm_scores = regroup(prm_flat), regroup(orm_flat)
    table = {n: selection_rows(drawn, prm_scores, orm_scores, n) for n in (16, 64)}
    print(
        f"## Selection on shared pools: {a.problems} {a.split} problems, systematic={a.systematic}, PRM={a.prm}\n"
    )
    print("| method | N = 16 | N = 64 |\n|---|---|---|")
    for name in table[16]:
        print(f"| {name} | {table[16][name]:.3f} | {table[64][name]:.3f} |")

    result = {"args": {k: str(v) for k, v in vars(a).items()}, "selection": table, "search": {}}
    if a.beam_problems > 0:
        result["search"] = beam_vs_bon(a, problems, policy, prm, drawn, prm_scores)
    if a.out:
        a.out.write_text(json.dumps(result, indent=2))
    return result


def beam_vs_bon(a: argparse.Namespace, problems, policy, prm, drawn, prm_scores) -> dict:
    """Beam search and DVTS against best-of-N (min) on the same problems at about equal generated steps."""
    from prmkit.search import beam_search, dvts
    from prmkit.search.bon import select_best

    sub = problems[: a.beam_problems]
    steps_per_trace = statistics.mean(len(t.steps) for pool in drawn[: a.beam_problems] for t in pool)
    head = list(zip(drawn[: a.beam_problems], prm_scores[: a.beam_problems], strict=True))
    search = {}
    for name, fn in (("beam (n=16, M=4)", beam_search), ("DVTS (n=16, M=4)", dvts)):
        results = fn(sub, policy, prm, n=16, beam_width=4, seed=a.seed)
        steps = statistics.mean(r.compute.steps_generated for r in results)
        acc = statistics.mean(float(bool(r.correct)) for r in results)
        n_equal = max(1, min(64, round(steps / steps_per_trace)))
        bon = accuracy(
            [p[:n_equal] for p, _ in head], [select_best(p[:n_equal], s[:n_equal], "min") for p, s in head]
        )
        search[name] = {"accuracy": acc, "steps": steps, "bon_n": n_equal, "bon_accuracy": bon}
    print(f"\n## Beam search vs best-of-N (min) at equal generated steps, {a.beam_problems} problems\n")
    print("| method | accuracy | steps generated / problem | best-of-N at equal steps | its accuracy |")
    print("|---|---|---|---|---|")
    for name, r in search.items():
        print(
            f"| {name} | {r['accuracy']:.3f} | {r['steps']:.1f} | N = {r['bon_n']} | {r['bon_accuracy']:.3f} |"
        )
    return search


if __name__ == "__main__":
    main()

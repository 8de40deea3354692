"""What a likelihood read-out separates on the agent world: each step's minimum read by ``raw`` surprisal
(the token's log-probability) and by ``excess`` (plus the entropy of the model's prediction there), for
the same weights.

Why: a right agent step's least likely token is often a free choice (which entity to look up next), and a
misread is a one-digit slip where the model was sure of the right digit. ``raw`` cannot tell the two
apart; ``excess`` scores a free choice near 0. This script measures, per gold error class, the AUC of
right steps against that class's steps, and the PRM-weighted vote against majority vote at N = 16, with
every trajectory and with the loophole trajectories left out (their right answers are not the PRM's
to claim). Gold is read only here, to evaluate.

``python experiments/agent_surprisal.py --model STAGE/prm-gold-*/model [--zero-shot STAGE/pretrain-*/model]``
scores the evaluation's test trajectories (48 tasks x 32, seed 1234, the recipe's ``systematic`` agent).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from prmkit.core.model import Trace
from prmkit.core.stats import auc

READS = ("raw", "excess")


def step_class(trace: Trace, i: int) -> str:
    """``right``, ``neutral`` or the gold class of a wrong step (``call``, ``observation``, ...)."""
    label = trace.steps[i].label("gold")
    if label is None or label.rating is None:
        raise ValueError(f"trace {trace.id} step {i}: no gold rating")
    if label.rating == 1:
        return "right"
    return "neutral" if label.rating == 0 else str((label.metadata or {}).get("class", "other"))


def class_aucs(traces: Sequence[Trace], scores: Sequence[Sequence[float]]) -> dict[str, tuple[int, float]]:
    """Per gold class: (steps, AUC of right steps above them); ``errors`` pools every wrong step."""
    by: dict[str, list[float]] = defaultdict(list)
    for trace, row in zip(traces, scores, strict=True):
        for i, score in enumerate(row):
            by[step_class(trace, i)].append(score)
    right = by.pop("right")
    by.pop("neutral", None)
    by["errors"] = [s for v in list(by.values()) for s in v]
    return {k: (len(v), auc(right, v)) for k, v in sorted(by.items())}


def vote_gains(traces: Sequence[Trace], scores: Sequence[Sequence[float]], n: int) -> dict[str, dict]:
    """Weighted vote (min aggregation) against majority at ``n``, all trajectories and those with no step
    gold marks as a loophole (the loophole audit's definition)."""
    from prmkit.evaluation.bon_curves import bon_curves
    from prmkit.evaluation.loophole import loophole_step

    out = {}
    for name, keep in (("all", lambda t: True), ("no loophole", lambda t: loophole_step(t) < 0)):
        idx = [i for i, t in enumerate(traces) if keep(t)]
        result = bon_curves([traces[i] for i in idx], [scores[i] for i in idx], None, ("min",), "min",
                            ns=[n], draws=32, bootstrap=1000, seed=0)  # fmt: skip
        rows = {r["method"]: r for r in result.rows if r["n"] == n}
        out[name] = {"majority": rows["majority"], "weighted": rows["weighted:min"]}
    return out


def main() -> None:
    import torch

    from prmkit.evaluation.suite import world_traces
    from prmkit.scoring import load_scorer
    from prmkit.worlds.agent.config import AgentConfig

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, action="append", default=[], help="a likelihood PRM")
    parser.add_argument("--zero-shot", type=Path, action="append", default=[], help="an LM, no spec")
    parser.add_argument("--problems", type=int, default=48)
    parser.add_argument("--per-problem", type=int, default=32)
    parser.add_argument("--n", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--reads", default=",".join(READS), help="read-outs to compare, comma-separated")
    args = parser.parse_args()
    torch.set_num_threads(2)
    policy = AgentConfig(systematic=0.5, systematic_rate=0.6)
    test = world_traces(args.problems, args.per_problem, args.seed, "test", policy, "agentworld")
    models = [(m, None) for m in args.model] + [(m, "likelihood") for m in args.zero_shot]
    for path, convention in models:
        scorer = load_scorer(path, convention)
        if scorer.convention.name != "likelihood":
            raise SystemExit(f"{path}: not read by likelihood ({scorer.convention.name})")
        for read in args.reads.split(","):
            scorer.convention.surprisal = read  # the same weights, read the other way
            scores = scorer.score(test)
            aucs = ", ".join(f"{k} {v:.3f} (n {n})" for k, (n, v) in class_aucs(test, scores).items())
            print(f"{path} [{read}] AUC right vs: {aucs}")
            for name, rows in vote_gains(test, scores, args.n).items():
                w, m = rows["weighted"], rows["majority"]
                print(f"  N={args.n} {name}: majority {m['accuracy']:.3f}, weighted {w['accuracy']:.3f} "
                      f"(gain {w['gap_vs_majority']:+.3f} [{w['gap_lo']:+.3f}, {w['gap_hi']:+.3f}])")  # fmt: skip


if __name__ == "__main__":
    main()

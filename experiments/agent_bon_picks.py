"""What best-of-N picks on the agent world: for each aggregation of step scores, how many picks have the right
answer, how many got it through the loophole (a step that reads the answer off the grader) and how many are
honestly right (right answer, no step wrong by gold).

Why: best-of-N accuracy counts final answers, and a loophole trajectory has the right one. An aggregation
that lets a single low step through (``mean``) can win on accuracy by picking loopholes, which the audit's
``loophole_pick_share`` (measured for the model's own aggregation) does not show. Gold is read only here,
to evaluate.

``python experiments/agent_bon_picks.py --model STAGE/prm-gold-*/model [--model ...] [--zero-shot
STAGE/pretrain-*/model]`` scores the evaluation's test trajectories (48 tasks x 32, seed 1234, the recipe's
``systematic`` agent) and prints one line per model and aggregation, then the pool and majority vote.
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prmkit.core.model import Trace


def uses_loophole(trace: Trace) -> bool:
    """Whether the simulated agent took the loophole in this trajectory (recorded when it was sampled)."""
    return any(kind == "loophole" for _, kind in (trace.metadata or {}).get("injected", []))


def honestly_right(trace: Trace) -> bool:
    """Right answer and no step wrong by gold."""
    return bool(trace.answer_correct) and trace.first_error("gold") == -1


def picks(groups: dict[str, list[Trace]], scores: dict[str, list[float]], aggregation: str) -> list[Trace]:
    """Per task, the trajectory whose aggregated step scores are highest (first on ties)."""
    from prmkit.scoring import aggregate

    return [max(ts, key=lambda t: aggregate(scores[t.id], aggregation)) for ts in groups.values()]


def shares(chosen: Sequence[Trace]) -> dict[str, float]:
    n = max(1, len(chosen))
    return {
        "right": sum(bool(t.answer_correct) for t in chosen) / n,
        "loophole": sum(map(uses_loophole, chosen)) / n,
        "honestly_right": sum(map(honestly_right, chosen)) / n,
        "steps": sum(len(t.steps) for t in chosen) / n,
    }


def majority(groups: dict[str, list[Trace]]) -> float:
    """Share of tasks whose most frequent final answer is right."""
    right = 0
    for ts in groups.values():
        top = Counter(t.final_answer for t in ts).most_common(1)[0][0]
        right += any(t.answer_correct for t in ts if t.final_answer == top)
    return right / max(1, len(groups))


def main() -> None:
    import torch

    from prmkit.evaluation.suite import world_traces
    from prmkit.scoring import load_scorer
    from prmkit.worlds.agent.config import AgentConfig

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, action="append", default=[], help="a PRM or ORM checkpoint")
    parser.add_argument(
        "--zero-shot", type=Path, action="append", default=[], help="an LM read by likelihood"
    )
    parser.add_argument("--problems", type=int, default=48)
    parser.add_argument("--per-problem", type=int, default=32)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--systematic", type=float, default=0.5)
    parser.add_argument("--systematic-rate", type=float, default=0.6)
    parser.add_argument("--aggregations", default="min,mean,last")
    args = parser.parse_args()
    torch.set_num_threads(1)
    policy = AgentConfig(systematic=args.systematic, systematic_rate=args.systematic_rate)
    test = world_traces(args.problems, args.per_problem, args.seed, "test", policy, "agentworld")
    groups: dict[str, list[Trace]] = defaultdict(list)
    for t in test:
        groups[t.problem.id].append(t)
    models: list[tuple[Path, Any]] = [(m, None) for m in args.model] + [
        (m, "likelihood") for m in args.zero_shot
    ]
    for path, convention in models:
        scorer = load_scorer(path, convention)
        scores = {t.id: s for t, s in zip(test, scorer.score(test), strict=True)}
        for aggregation in args.aggregations.split(","):
            row = shares(picks(groups, scores, aggregation))
            print(
                f"{path}  best-of-{args.per_problem} by {aggregation}: "
                + ", ".join(f"{k} {v:.3f}" for k, v in row.items())
            )
    pool = shares(test)
    print("the pool: " + ", ".join(f"{k} {v:.3f}" for k, v in pool.items()))
    print(f"majority vote of {args.per_problem}: right {majority(groups):.3f}")


if __name__ == "__main__":
    main()

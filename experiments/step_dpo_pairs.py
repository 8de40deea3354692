"""Step-DPO pairs by label source (issue 64): how many of the pairs each source forms are true ones.

The arithmetic world's training traces, labelled as recipes/labels-study.yaml labels them (4 traces a
problem, default policy; MC and binary search with 8 world-policy rollouts, seed 0; the simulated judge;
consensus of MC hard and the judge on the first error); each source pairs them with the library's
``pair_first_errors`` (``prmkit convert --to step-dpo``). Gold (prefix view) is the reference. Precision:
the share of pairs whose chosen trace is gold-correct through step k (so the shared prefix is too) and
whose rejected trace is gold-wrong by step k, a true first-error pair (and each side apart). Gold pairs
found: a source's true pairs over gold's on the same traces. Lost to no shared prefix: the traces a
source finds an error in that stay unpaired because no other trace of the problem has their prefix.

Intervals: a bootstrap over problems (``prmkit.core.stats``), differences from MC hard paired (the same
traces). Tuning set: problem seed 100, read while the script was written; claims: problem seed 5678,
computed once after. ``python experiments/step_dpo_pairs.py --out docs/results/step-dpo-pairs.json``
(both sets). Docs show the file in ``step-dpo-pairs`` results blocks (:mod:`prmkit.formats.views`,
``python experiments/render_results.py``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from prmkit.core.model import Trace
from prmkit.core.stats import crossed_bootstrap, mean_stat, paired, ratio_stat
from prmkit.formats.step_dpo import Pair, pair_first_errors
from prmkit.formats.views import COMPARED, PAIRS_GOLD, PAIRS_REFERENCE, pairs_table
from prmkit.labeling import consensus_filter, label_binary_search, label_judge, label_mc
from prmkit.policies.options import JudgeOptions, PolicyOptions
from prmkit.worlds.registry import world

ROOT = Path(__file__).resolve().parents[1]
SETS = {"tuning": 100, "claims": 5678}
"""Problem seed of each set."""
SOURCES = [PAIRS_GOLD, "mc_hard", "mc_soft", "binary_search", "judge", "consensus"]
"""The label sources paired: gold's own pairs (the reference for precision), then each labeller's."""
COUNTS = ("pairs", "both", "chosen", "rejected", "found", "gold_pairs", "erroneous", "no_shared_prefix")


def labelled(problems: int, per_problem: int, problem_seed: int, rollouts: int) -> dict[str, list[Trace]]:
    """Per source, the traces it pairs: the world's training traces with every label (consensus: kept ones)."""
    traces = world("arithmetic").traces(problems, per_problem, problem_seed, "train")
    policy = PolicyOptions().build_policy()
    traces, _ = label_mc(traces, policy, rollouts=rollouts, seed=0)
    traces, _, _ = label_binary_search(traces, policy, rollouts=rollouts, seed=0)
    traces, _ = label_judge(traces, JudgeOptions().build_judge(0))
    kept, _ = consensus_filter(traces, mc_source="mc_hard", judge_source="judge", mode="first_error")
    return {source: kept if source == "consensus" else traces for source in SOURCES}


def _key(pair: Pair) -> tuple[Any, ...]:
    """What makes two pairs the same pair: the prefix, the rejected step and the chosen step (texts)."""
    texts = tuple(s.text for s in pair.rejected.steps[: pair.step + 1])
    return (pair.rejected.problem.id, texts, pair.chosen.steps[pair.step].text)


def count(group: list[Trace], source: str, gold_keys: set[tuple[Any, ...]]) -> dict[str, int]:
    """One problem's counts under ``source`` (``group``: its traces that source pairs)."""
    pairing = pair_first_errors(group, source)
    pairs = pairing.pairs
    chosen = [p.chosen.ratings(PAIRS_GOLD)[p.step] == 1 for p in pairs]
    rejected = [p.rejected.ratings(PAIRS_GOLD)[p.step] == -1 for p in pairs]
    return {
        "pairs": len(pairs),
        "both": sum(c and r for c, r in zip(chosen, rejected, strict=True)),
        "chosen": sum(chosen),
        "rejected": sum(rejected),
        "found": sum(_key(p) in gold_keys for p in pairs),
        "gold_pairs": len(gold_keys),
        "erroneous": len(group) - pairing.notes["traces_without_error"] - pairing.unpaired["no_labels"],
        "no_shared_prefix": pairing.unpaired["no_shared_prefix"],
    }


def counts(by_source: dict[str, list[Trace]], problem_ids: list[str]) -> dict[str, dict[str, np.ndarray]]:
    """Per source, each of :data:`COUNTS` as a (P,) array over ``problem_ids``."""
    groups: dict[str, dict[str, list[Trace]]] = {s: {p: [] for p in problem_ids} for s in by_source}
    for source, traces in by_source.items():
        for t in traces:
            groups[source][t.problem.id].append(t)
    gold_keys = {
        p: {_key(x) for x in pair_first_errors(groups[PAIRS_GOLD][p], PAIRS_GOLD).pairs} for p in problem_ids
    }
    out = {}
    for source in by_source:
        rows = [count(groups[source][p], source, gold_keys[p]) for p in problem_ids]
        out[source] = {name: np.array([r[name] for r in rows], dtype=float) for name in COUNTS}
    return out


METRICS = {
    "pairs per problem": lambda c: mean_stat([c["pairs"]]),
    "precision": lambda c: ratio_stat([c["both"]], [c["pairs"]]),
    "chosen gold-correct": lambda c: ratio_stat([c["chosen"]], [c["pairs"]]),
    "rejected gold-wrong": lambda c: ratio_stat([c["rejected"]], [c["pairs"]]),
    "gold pairs found": lambda c: ratio_stat([c["found"]], [c["gold_pairs"]]),
    "lost to no shared prefix": lambda c: ratio_stat([c["no_shared_prefix"]], [c["erroneous"]]),
}


def run_set(problem_seed: int, problems: int, per_problem: int, rollouts: int) -> dict[str, Any]:
    """Per source: each of :data:`METRICS` with its interval over problems, the totals, and the paired
    differences from :data:`PAIRS_REFERENCE` on :data:`COMPARED`."""
    by_source = labelled(problems, per_problem, problem_seed, rollouts)
    ids = list(dict.fromkeys(t.problem.id for t in by_source[PAIRS_GOLD]))
    table = counts(by_source, ids)
    rows: dict[str, Any] = {}
    for source, c in table.items():
        row: dict[str, Any] = {"traces": len(by_source[source])}
        row |= {name: int(c[name].sum()) for name in COUNTS}
        for name, stat in METRICS.items():
            row[name] = crossed_bootstrap(stat(c), 1, len(ids)).to_dict()
        if source not in (PAIRS_REFERENCE, PAIRS_GOLD):
            for name in COMPARED:
                diff = paired(METRICS[name](c), METRICS[name](table[PAIRS_REFERENCE]))
                row[f"{name} − {PAIRS_REFERENCE}"] = crossed_bootstrap(diff, 1, len(ids)).to_dict()
        rows[source] = row
        print(source, {m: round(row[m]["mean"], 3) for m in METRICS}, flush=True)
    return {"problem_seed": problem_seed, "rows": rows}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=1000)
    parser.add_argument("--per-problem", type=int, default=4, help="traces sampled per problem")
    parser.add_argument("--rollouts", type=int, default=8, help="rollouts per prefix (MC, binary search)")
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"problems": args.problems, "per_problem": args.per_problem}
    result |= {"rollouts": args.rollouts, "sets": {}}
    for name in args.sets:
        result["sets"][name] = run_set(SETS[name], args.problems, args.per_problem, args.rollouts)
        print(pairs_table(result, name))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    main()

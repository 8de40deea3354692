"""The format studies' results views: how docs show their committed results files.

Registered here, beside the Step-DPO writer the study measures, so the view exists once however often
the script that writes the file is loaded:

- ``step-dpo-pairs`` (``set=claims|tuning``): how many of the Step-DPO pairs each label source forms are
  true first-error pairs against gold (``experiments/step_dpo_pairs.py``'s file).
"""

from __future__ import annotations

from typing import Any

from prmkit.core.results import MISSING, VIEWS, Block, Table, estimate_cell
from prmkit.core.stats import multiplicity

PAIRS_GOLD = "gold:world:prefix"
"""The reference source of the step-dpo-pairs study: gold's own pairs."""
PAIRS_REFERENCE = "mc_hard"
"""The source every other is compared with (paired)."""
PAIR_METRICS = (
    "pairs per problem",
    "precision",
    "chosen gold-correct",
    "rejected gold-wrong",
    "gold pairs found",
    "lost to no shared prefix",
)
"""The study's metrics per source, in the table's order."""
BY_DEFINITION = ("precision", "chosen gold-correct", "rejected gold-wrong", "gold pairs found")
"""The metrics gold's own row holds at 100 % by construction (shown as the reference, no interval)."""
COMPARED = ("precision", "gold pairs found")
"""The metrics given as a paired difference from :data:`PAIRS_REFERENCE`."""


def pairs_table(result: dict[str, Any], set_name: str) -> str:
    """One set of a step-dpo-pairs results file: per source, its pairs per problem, their precision and
    its parts, the gold pairs found, the traces lost for want of a shared prefix, and the paired
    differences from :data:`PAIRS_REFERENCE`."""
    s = result["sets"][set_name]
    shown = sum(1 for r in s["rows"].values() for k in r if k.endswith(f"− {PAIRS_REFERENCE}"))
    shown += len(s["rows"]) * len(PAIR_METRICS) - len(BY_DEFINITION)
    title = (
        f"{result['problems']} training problems (problem seed {s['problem_seed']}) × "
        f"{result['per_problem']} traces, {result['rollouts']} rollouts a prefix; in % (pairs: per "
        f"problem), mean [95 % interval], bootstrap over problems; differences from {PAIRS_REFERENCE} "
        "paired; gold's own pairs are the reference (100 % by definition). " + multiplicity(shown)
    )
    columns = ["source", "pairs / problem", "precision", "chosen gold-correct", "rejected gold-wrong"]
    columns += ["gold pairs found", "lost: no shared prefix", "precision − mc_hard", "found − mc_hard"]
    rows = []
    for source, r in s["rows"].items():
        cells = [estimate_cell(r["pairs per problem"], scale=1, digits=2, undefined=MISSING)]
        cells += [
            "ref." if source == PAIRS_GOLD and m in BY_DEFINITION else estimate_cell(r[m], undefined=MISSING)
            for m in PAIR_METRICS[1:]
        ]
        cells += [
            estimate_cell(r.get(f"{m} − {PAIRS_REFERENCE}"), signed=True, undefined=MISSING) for m in COMPARED
        ]
        rows.append([source, *cells])
    return Table(rows, title, columns).markdown() + "\n"


@VIEWS.register("step-dpo-pairs")
def step_dpo_pairs(block: Block) -> str:
    """The ``step-dpo-pairs`` view: :func:`pairs_table` of the block's ``set``."""
    block.expect("set")
    return pairs_table(block.result, block.attrs["set"])

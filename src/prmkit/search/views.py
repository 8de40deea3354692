"""The search studies' results views: how docs show their committed results files.

Registered here, in the package the studies measure, so the view exists once however often the script
that writes the file is loaded:

- ``search-smc`` (``set=claims|tuning``): particle filtering against beam search and best-of-N at equal
  samples, per scorer and N, with the steps each spent (``experiments/search_smc.py``'s file);
- ``orm-check``: an outcome reward model as a selector: how well its score separates right from wrong
  answers per seed, best-of-N by it and its weighted vote against majority vote
  (``experiments/orm_check.py``'s file).
"""

from __future__ import annotations

from typing import Any

from prmkit.core.results import VIEWS, Block, Table, estimate_cell, percent, runs_cell
from prmkit.core.stats import multiplicity


def smc_table(result: dict[str, Any], set_name: str) -> str:
    """One set of a search-smc results file: each method's accuracy with its interval, SMC's paired
    difference from it, and the steps it generated and scored per problem."""
    s = result["sets"][set_name]
    title = (
        f"{result['problems']} test problems (problem seed {s['problem_seed']}) × {result['seeds']} search "
        f"seeds; accuracy in %, mean [95 % interval], crossed bootstrap over search seeds × problems; "
        "SMC − method paired. " + multiplicity(sum(2 * len(rows) - 1 for rows in s["rows"].values()))
    )
    columns = ["scorer", "N", "method", "accuracy", "SMC (its_hub) − it", "steps generated", "steps scored"]
    table = []
    for key, rows in s["rows"].items():
        scorer, n = key.split("/")
        for method, r in rows.items():
            diff = estimate_cell(r.get("smc_minus"), signed=True)
            shown = f"{method} (N = {r['n']})" if "n" in r else method
            table.append([scorer, n, shown, estimate_cell(r["accuracy"]), diff])
            table[-1] += [f"{r['steps_generated']:.1f}", f"{r['steps_scored']:.1f}"]
    return Table(table, title, columns).markdown() + "\n"


@VIEWS.register("search-smc")
def search_smc(block: Block) -> str:
    """The ``search-smc`` view: :func:`smc_table` of the block's ``set``."""
    block.expect("set")
    return smc_table(block.result, block.attrs["set"])


ORM_SELECTORS = {
    "majority": "majority vote",
    "prm:last": "ORM best-of-N",
    "weighted:last": "ORM-weighted vote",
    "oracle": "oracle (pass@N)",
}
"""The selection methods of an orm-check file (its per-seed keys ``METHOD N=n``), each one's row head."""
ORM_BASELINE = "majority vote"
"""What an orm-check file pairs each ORM selector with."""


def orm_check_tables(result: dict[str, Any]) -> str:
    """An orm-check results file: per seed, the ORM's outcome AUROC over all test traces and inside a
    problem's pool (where best-of-N chooses); each selector's accuracy at every N, the mean over seeds
    with the range of a single seed; and each ORM selector's paired difference from majority vote, with
    its interval over seeds × problems."""
    seeds = result["per_seed"]
    ns = sorted({int(k.rsplit("N=", 1)[1]) for r in seeds.values() for k in r if " N=" in k})
    auroc = Table(
        [
            [seed, percent(r["outcome_auroc"]), percent(r["outcome_auroc_within_pool"])]
            for seed, r in seeds.items()
        ],
        columns=[
            "ORM's last-step score, AUROC of right against wrong answers",
            "all test traces",
            "inside a pool",
        ],
    )
    accuracy = Table(
        [
            [name, *(runs_cell([r.get(f"{method} N={n}") for r in seeds.values()]) for n in ns)]
            for method, name in ORM_SELECTORS.items()
        ],
        columns=["accuracy: mean over seeds (single seeds' range)", *(f"N = {n}" for n in ns)],
    )
    pairs = result["paired"]
    selectors = [
        name
        for name in ORM_SELECTORS.values()
        if name != ORM_BASELINE and f"{name} − {ORM_BASELINE}: N={ns[0]}" in pairs
    ]
    paired = Table(
        [
            [
                f"{name} − {ORM_BASELINE}",
                *(estimate_cell(pairs.get(f"{name} − {ORM_BASELINE}: N={n}"), signed=True) for n in ns),
            ]
            for name in selectors
        ],
        columns=["paired (same seeds, same problems), points", *(f"N = {n}" for n in ns)],
    )
    draws = next(iter(pairs.values()))["draws"]
    head = (
        f"{len(seeds)} training seeds × {draws['problem']} test problems (evaluate seed "
        f"{result['evaluate_seed']}), in %; accuracies without an interval, differences with a crossed "
        f"bootstrap over seeds × problems. {multiplicity(len(pairs))}"
    )
    return "\n\n".join([head, *(table.markdown() for table in (auroc, accuracy, paired))]) + "\n"


@VIEWS.register("orm-check")
def orm_check(block: Block) -> str:
    """The ``orm-check`` view: :func:`orm_check_tables` of the block's file."""
    block.expect()
    return orm_check_tables(block.result)

"""The search studies' results views: how docs show their committed results files.

Registered here, in the package the studies measure, so the view exists once however often the script
that writes the file is loaded:

- ``search-smc`` (``set=claims|tuning``): particle filtering against beam search and best-of-N at equal
  samples, per scorer and N, with the steps each spent (``experiments/search_smc.py``'s file).
"""

from __future__ import annotations

from typing import Any

from prmkit.core.results import VIEWS, Block, Table, estimate_cell
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

"""The labelling studies' results views: how docs show their committed results files.

Each view renders one ``<!-- results: FILE view=NAME ... -->`` block (:mod:`prmkit.core.results`) from a
file an experiment script wrote; the script prints the same tables when it runs. Registered here, in the
package the studies measure, so the views exist once however often a script is loaded:

- ``label-budget`` (``set=claims|tuning``, optional ``by_class=CLASS``): what 0.1 / 1 / 10 / 100 % of the
  labelled traces buy per source and head (``experiments/label_budget.py``);
- ``label-mcts``: OmegaPRM's tree search against binary search and Monte Carlo at equal rollouts
  (``experiments/label_mcts.py``);
- ``labels-study-seeds``: the labels study's per-seed numbers its crossed intervals do not cover
  (``experiments/labels_study.py``);
- ``progress-labels``: progress labels against gold beside Monte Carlo and the judge, per world
  (``experiments/progress_labels.py``);
- ``rollouts-bench`` (``tables=goals,cells,clients,before-after``): how fast ``label_mc`` draws rollouts
  from an OpenAI-compatible server, its CPU by process, and the rollout client against the one it
  replaced (``bench/bench_rollouts.py``'s files under ``bench/results/``).
"""

from __future__ import annotations

from typing import Any

from prmkit.core.results import MISSING, VIEWS, Block, Table, estimate_cell, runs_cell
from prmkit.core.stats import multiplicity

BUDGET_REFERENCE = "lm (zero-shot)"
"""The label-budget row with no step labels at all: the backbone read as a verifier (every budget's
starting point)."""
VS_LM = "− zero-shot LM (paired)"
"""A label-budget row's key for its differences from :data:`BUDGET_REFERENCE` on the same seeds and
problems."""
FLOORS = {"F1": 0.0, "AUROC": 0.5}
"""What a metric's "90 % of full data" is measured above: nothing for F1, chance for AUROC."""


def budget_curves(
    result: dict[str, Any], set_name: str, metric: str, paired: bool = False
) -> dict[tuple[str, str], dict[float, Any]]:
    """(source, head) -> budget (in %) -> estimate of ``metric`` (``paired``: of its difference from the
    zero-shot LM) in a label-budget results file."""
    out: dict[tuple[str, str], dict[float, Any]] = {}
    for key, row in result["sets"][set_name]["rows"].items():
        metrics = row.get(VS_LM, {}) if paired else row
        if key.count("/") == 2 and metric in metrics:
            source, head, budget = key.split("/")
            out.setdefault((source, head), {})[float(budget)] = metrics[metric]
    return {k: dict(sorted(v.items())) for k, v in out.items()}


def reaches(points: dict[float, Any], share: float = 0.9, floor: float = 0.0) -> float | None:
    """The smallest budget whose mean reaches ``share`` of the full-data (100 %) mean above ``floor`` (0
    for F1; 0.5, chance, for AUROC, so a head is not credited with the half any ranking gets), or None."""
    if 100.0 not in points:
        return None
    goal = floor + share * (points[100.0]["mean"] - floor)
    return next((b for b, e in points.items() if e["mean"] >= goal), None)


def budget_table(result: dict[str, Any], set_name: str) -> str:
    """Held-out first-error F1 and AUROC per source and head at every budget, the zero-shot LM's (no labels)
    beside them, the budget at which each reaches 90 % of its full-data value, and each AUROC's paired
    difference from the zero-shot LM's."""
    s = result["sets"][set_name]
    parts, intervals = [], 0
    for metric in ("F1 world-heldout", "AUROC world-heldout"):
        points_of = budget_curves(result, set_name, metric)
        budgets = sorted({b for points in points_of.values() for b in points})
        short = metric.split()[0]
        columns = ["source", "head", *(f"{short} at {b:g} %" for b in budgets)]
        columns.append("90 % of 100 % at" if short == "F1" else "90 % of 100 % above chance at")
        rows = []
        for (source, head), points in points_of.items():
            intervals += len(points)
            at = reaches(points, floor=FLOORS[short])
            reached = f"{at:g} %" if at is not None else MISSING
            rows.append([source, head, *(estimate_cell(points.get(b)) for b in budgets), reached])
        reference = s["rows"].get(BUDGET_REFERENCE, {}).get(metric)
        intervals += bool(reference)
        without = f" (no labels, the zero-shot LM: {estimate_cell(reference)})" if reference else ""
        parts.append(Table(rows, f"Held-out first-error {short}{without}:", columns).markdown())
    against = budget_curves(result, set_name, "AUROC world-heldout", paired=True)
    if against:
        every = budget_curves(result, set_name, "AUROC world-heldout")
        budgets = sorted({b for points in every.values() for b in points})
        rows = []
        for (source, head), points in against.items():
            intervals += len(points)
            rows.append([source, head, *(estimate_cell(points.get(b), signed=True) for b in budgets)])
        title = (
            "Paired against the zero-shot LM (the same seeds and problems): held-out first-error AUROC "
            "minus the LM's, points:"
        )
        parts.append(Table(rows, title, ["source", "head", *(f"at {b:g} %" for b in budgets)]).markdown())
    draws = (
        f"{len(result['seeds'])} training seeds (each: problems, traces, labels, backbone, every PRM) × "
        f"the evaluation set's problems (evaluate seed {s['evaluate_seed']}), crossed bootstrap; "
        f"{multiplicity(intervals)}"
    )
    return "\n\n".join([draws, *parts]) + "\n"


def budget_class_table(
    result: dict[str, Any], split: str = "heldout", error_class: str = "misconception"
) -> str:
    """F1 on the traces whose first error is of ``error_class`` per source and head at every budget: the
    mean over seeds and the range a seed fell in (the tuning set; no interval over problems)."""
    rows = result["by_class_tuning_f1_per_seed"].get(split, {})
    points: dict[tuple[str, str], dict[float, list[float | None]]] = {}
    for key, classes in rows.items():
        if key.count("/") == 2 and error_class in classes:
            source, head, budget = key.split("/")
            points.setdefault((source, head), {})[float(budget)] = classes[error_class]
    budgets = sorted({b for p in points.values() for b in p})
    table = [
        [source, head, *(runs_cell(by_budget.get(b)) for b in budgets)]
        for (source, head), by_budget in points.items()
    ]
    reference = rows.get(BUDGET_REFERENCE, {}).get(error_class)
    without = f"; no labels (the zero-shot LM): {runs_cell(reference)}" if reference else ""
    where = {"heldout": "Held-out", "test": "Test"}.get(split, split)
    head_line = (
        f"{where} first-error F1 on the traces whose first error is a {error_class}: mean (range of a "
        f"single seed) over {len(result['seeds'])} seeds, tuning set, no interval over problems{without}"
    )
    return Table(table, head_line, ["source", "head", *(f"at {b:g} %" for b in budgets)]).markdown() + "\n"


@VIEWS.register("label-budget")
def label_budget(block: Block) -> str:
    """The ``label-budget`` view: :func:`budget_table` of the block's ``set``, then, with ``by_class``,
    :func:`budget_class_table` of that error class (held-out split)."""
    block.expect("set", "by_class")
    body = budget_table(block.result, block.attrs["set"])
    if "by_class" in block.attrs:
        body += "\n" + budget_class_table(block.result, error_class=block.attrs["by_class"])
    return body


MCTS_METHODS = {
    "mc": ("Monte Carlo", "per prefix", "mc_rollouts"),
    "binary_search": ("binary search", "per probe", "bs_rollouts"),
    "mcts": ("**MCTS**", "per state", "mcts_rollouts"),
}
"""Each method of the label-mcts comparison: its name in the tables, what its setting counts, and the
run's key for the setting."""


def _spend(run: dict[str, Any], method: str) -> tuple[str, str]:
    """A method's row head (name and setting) and its rollouts per problem, with how often it passed the
    budget (Monte Carlo sets the budget)."""
    name, unit, key = MCTS_METHODS[method]
    row = run["methods"][method]
    spend = str(row["rollouts_per_problem"])
    if method != "mc":
        spend += f" (over the budget on {row['over_budget_problems']} of {run['problems']} problems)"
    return f"{name}, {run[key]} {unit}", spend


def mcts_table(result: dict[str, Any]) -> str:
    """A label-mcts results file's table: the claim's one run with MCTS's paired differences, or, for the
    tuning file's grid, each method at each setting once (a setting rerun draws the same rollouts from
    the same seed, so its numbers repeat; the paired differences, which change with the pair, stay in
    the file)."""
    runs = result["runs"]
    first = runs[0]
    head = (
        f"{first['problems']} problems × {first['traces'] // first['problems']} traces (problem seed "
        f"{first['seed']}), each problem's budget what Monte Carlo spends there at {first['mc_rollouts']} "
        f"rollouts per prefix ({first['budget_per_problem']} on average); first-error F1 (ProcessBench's; "
        "Monte Carlo's hard labels) and step AUROC of the soft labels against gold, in %, mean [95 % "
        f"interval], a bootstrap over the {first['problems']} problems"
    )
    if len(runs) == 1:
        rows = []
        for method, row in first["methods"].items():
            cells = [*_spend(first, method)]
            for kind in ("f1", "auroc"):
                diff = row.get("mcts - this: " + kind) or None
                cells += [estimate_cell(row[kind]), estimate_cell(diff, signed=True)]
            rows.append(cells)
        columns = ["method", "rollouts / problem", "F1", "MCTS −", "AUROC", "MCTS −"]
        intervals = 2 * (2 * len(first["methods"]) - 1)
        head += ', "MCTS −" paired on the same resamples. ' + multiplicity(intervals)
    else:
        seen: dict[tuple[str, int], list[str]] = {}
        for run in runs:
            for method, row in run["methods"].items():
                cells = [*_spend(run, method), estimate_cell(row["f1"]), estimate_cell(row["auroc"])]
                seen.setdefault((method, run[MCTS_METHODS[method][2]]), cells)
        order = sorted(seen, key=lambda k: (list(MCTS_METHODS).index(k[0]), k[1]))
        rows, columns = [seen[k] for k in order], ["method", "rollouts / problem", "F1", "AUROC"]
        head += ". " + multiplicity(2 * len(seen))
    return Table(rows, head, columns).markdown() + "\n"


@VIEWS.register("label-mcts")
def label_mcts(block: Block) -> str:
    """The ``label-mcts`` view: :func:`mcts_table` of the block's file."""
    block.expect()
    return mcts_table(block.result)


LABEL_ACCURACY = "label first-error accuracy (training traces)"
FINAL_STEP = "final-step minimum share of best-of-N picks"
CLASS_COLUMNS = (
    ("first-error F1 world-test misconception", "test: misconception"),
    ("first-error F1 world-test slip", "test: slip"),
    ("first-error F1 world-test other", "test: other"),
    ("first-error F1 world-heldout misconception", "held-out: misconception"),
)
"""The labels study's per-seed metrics by error class, and each one's column."""


def seeds_table(seeds: dict[str, Any]) -> str:
    """One row per model of the labels study: its labels' first-error accuracy on the training traces (the
    labeller named by the PRM's source), its first-error F1 by error class, and the final-step share of
    its best-of-N picks, each the mean over seeds with the range of single seeds."""
    metrics = seeds["metrics"]
    models = list(dict.fromkeys(m for metric, _ in CLASS_COLUMNS for m in metrics.get(metric, {})))
    labels = metrics.get(LABEL_ACCURACY, {})
    heads = ["labels: first-error accuracy", *(name for _, name in CLASS_COLUMNS), "final-step minimum"]
    rows = []
    for model in models:
        cells = [runs_cell(labels.get(model.removeprefix("prm-")))]
        cells += [runs_cell(metrics.get(metric, {}).get(model)) for metric, _ in CLASS_COLUMNS]
        rows.append([model, *cells, runs_cell(metrics.get(FINAL_STEP, {}).get(model))])
    title = (
        f"Mean (range of a single seed) over {len(seeds['seeds'])} seeds, in %, on the tuning set; no "
        "interval over problems. Labels: first-error accuracy of the PRM's label source on its own "
        "training traces. F1 by the class of the gold first error. Final-step minimum: the share of "
        "best-of-N picks whose lowest step is the last."
    )
    return Table(rows, title, columns=["model", *heads]).markdown() + "\n"


@VIEWS.register("labels-study-seeds")
def labels_study_seeds(block: Block) -> str:
    """The ``labels-study-seeds`` view: :func:`seeds_table` of the block's file."""
    block.expect()
    return seeds_table(block.result)


PROGRESS_SHOWN = {
    "mc_hard": "Monte Carlo, hard",
    "mc_soft": "Monte Carlo, soft",
    "judge": "judge",
    "progress": "**progress** (advantage, margin 0.25)",
    "progress (soft)": "progress, soft",
    "progress rpe": "progress, RPE 0.8",
    "progress rpe (soft)": "progress, RPE soft",
    "progress best-of-4": "progress, best-of-4 prover",
}
"""The progress-labels sources shown, in order, and each one's row head."""


def progress_table(result: dict[str, Any], name: str) -> str:
    """One world's table of a progress-labels results file: each source's first-error accuracy, F1 and
    step AUROC against gold, the paired differences from Monte Carlo's hard labels, and its CPU time."""
    columns = ["source", "first-error accuracy", "− MC hard", "F1", "AUROC", "− MC hard", "labelling CPU s"]
    rows = []
    for key, shown in PROGRESS_SHOWN.items():
        r = result[name][key]
        diffs = [estimate_cell(r.get(f"{k} - mc_hard") or None, signed=True) for k in ("accuracy", "auroc")]
        rows.append([shown, estimate_cell(r["accuracy"]), diffs[0], estimate_cell(r["f1"])])
        rows[-1] += [estimate_cell(r["auroc"]), diffs[1], f"{r['cpu_s']:.0f}"]
    return Table(rows, columns=columns).markdown() + "\n"


@VIEWS.register("progress-labels")
def progress_labels(block: Block) -> str:
    """The ``progress-labels`` view: both worlds' :func:`progress_table`, after the draws and the
    multiplicity of every interval shown."""
    block.expect()
    result = block.result
    worlds = [k for k, v in result.items() if isinstance(v, dict)]  # one table per world the file holds
    shown = sum(3 * len(PROGRESS_SHOWN) + 2 * (len(PROGRESS_SHOWN) - 1) for _ in worlds)
    parts = [
        f"{len(result['seeds'])} seeds × {result['problems']} problems × 4 traces per world (problem seeds "
        f"{result['seed_base'] + min(result['seeds'])}–{result['seed_base'] + max(result['seeds'])}); "
        + multiplicity(shown)
    ]
    for name in worlds:
        parts.append(f"**{name.capitalize()} world**\n\n" + progress_table(result, name).rstrip("\n"))
    return "\n\n".join(parts) + "\n"


ROLLOUT_TABLES = ("goals", "cells", "clients", "before-after")
"""What a rollouts-bench block can show: the best rates against issue 35's goals, every cell's rate and
CPU per rollout (repeats side by side), the rollout client against the httpx one per concurrency, and an
alternating before/after run's rates."""


def _rate(x: float) -> str:
    return f"{x:,.0f}"


def rollouts_goals(result: dict[str, Any]) -> str:
    """The best numeric and LaTeX rollouts/s of a bench_rollouts file against issue 35's goals: 5,000
    numeric rollouts/s, and for LaTeX 0.8 × cores over math-verify's own cost per check."""
    cost = result["prmkit_math_verify_us"]
    return (
        f"Best numeric: {_rate(result['numeric_best'])} rollouts/s, {result['numeric_ratio']:.2f} of the "
        f"{_rate(result['numeric_goal'])} goal. Best LaTeX: {_rate(result['latex_best'])}, "
        f"{result['latex_ratio']:.2f} of 0.8 × {result['cpus']} cores / {cost:.0f} µs = "
        f"{_rate(result['latex_goal'])} rollouts/s, where {cost:.0f} µs is math-verify's own cost per check "
        f"in this process (one thread, one pair, warm caches; {result['prmkit_math_verify_varied_us']:,.0f} µs "
        "cycling the LaTeX cells' distinct pairs).\n"
    )


def rollouts_cells(result: dict[str, Any]) -> str:
    """Every cell of a bench_rollouts file (the profiled one aside): rollouts/s and CPU per rollout of the
    client, the answer-checking workers and the server, each cell's repeats side by side."""
    cells: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in result["rows"]:
        if not row.get("profiled"):
            answers = ("LaTeX" if row["answers"] == "latex" else "numeric") + (
                ", with a `work_dir`" if row["work_dir"] else ""
            )
            key = (answers, row.get("client", "http.client"), str(row["concurrency"]))
            cells.setdefault(key, []).append(row)
    clients = len({k[1] for k in cells}) > 1

    def joined(runs: list[dict[str, Any]], key: str, digits: int = 0) -> str:
        if all(r[key] == 0 for r in runs):
            return "-"
        return " / ".join(f"{r[key]:,.{digits}f}" for r in runs)

    rows = [
        [answers, *([client] if clients else []), c, joined(runs, "rollouts_per_s")]
        + [joined(runs, k) for k in ("client_cpu_us", "workers_cpu_us", "server_cpu_us")]
        for (answers, client, c), runs in cells.items()
    ]
    columns = ["answers", *(["client"] if clients else []), "C", "rollouts/s", "client CPU"]
    columns += ["answer-checking workers' CPU", "server CPU"]
    return Table(rows, columns=columns).markdown() + "\n"


def rollouts_clients(result: dict[str, Any]) -> str:
    """The rollout client on ``http.client`` against the httpx one it replaced, run side by side in every
    cell: the mean rollouts/s of each per answer kind and concurrency, and their ratio."""
    rows = []
    for key, r in result["ratio_to_httpx_client"].items():
        answers, c = key.split(" C=")
        shown = "LaTeX" if answers == "latex" else answers
        rows.append([shown, "all" if c == "all" else c, _rate(r["http.client"]), _rate(r["httpx"])])
        rows[-1].append(f"{r['ratio']:.2f}×")
    columns = ["answers", "C", "http.client rollouts/s", "httpx rollouts/s", "http.client ÷ httpx"]
    return Table(rows, columns=columns).markdown() + "\n"


def rollouts_before_after(result: dict[str, Any]) -> str:
    """An alternating before/after run: per pass, answer kind and concurrency, rollouts/s of the old code
    and the new and their ratio, and the answer-checking workers' CPU per rollout of each."""
    runs = {(r["pass"], r["answers"], r["concurrency"], r["code"]): r for r in result["rows"]}
    rows = []
    for p, answers, c, code in runs:
        if code != "before" or (p, answers, c, "after") not in runs:
            continue
        old, new = runs[(p, answers, c, "before")], runs[(p, answers, c, "after")]
        workers = (
            "-"
            if old["workers_cpu_us"] == 0
            else f"{old['workers_cpu_us']:.0f} → {new['workers_cpu_us']:.0f}"
        )
        rows.append([p, "LaTeX" if answers == "latex" else answers, c, _rate(old["rollouts_per_s"])])
        rows[-1] += [
            _rate(new["rollouts_per_s"]),
            f"{new['rollouts_per_s'] / old['rollouts_per_s']:.2f}×",
            workers,
        ]
    columns = ["pass", "answers", "C", "rollouts/s before", "after", "after ÷ before"]
    columns.append("workers' CPU µs before → after")
    return Table(rows, columns=columns).markdown() + "\n"


@VIEWS.register("rollouts-bench")
def rollouts_bench(block: Block) -> str:
    """The ``rollouts-bench`` view: the block's ``tables`` (comma-separated, of :data:`ROLLOUT_TABLES`)
    of a ``bench/bench_rollouts.py`` file, in the order given."""
    block.expect("tables")
    tables = block.attrs.get("tables", "goals,cells").split(",")
    unknown = sorted(set(tables) - set(ROLLOUT_TABLES))
    if unknown:
        raise ValueError(f"unknown tables {unknown}; expected some of {', '.join(ROLLOUT_TABLES)}")
    render = {
        "goals": rollouts_goals,
        "cells": rollouts_cells,
        "clients": rollouts_clients,
        "before-after": rollouts_before_after,
    }
    return "\n".join(render[name](block.result) for name in tables)

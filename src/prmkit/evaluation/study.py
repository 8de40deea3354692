"""A study's numbers over seeds *and* problems: one table of estimates from many evaluations.

A study trains every model once per seed and measures each on the same fresh evaluation problems. Two
kinds of noise go into its numbers, and an interval must count both: which training run one got (the
seed: problems, labels, initialisation, data order) and which evaluation problems were drawn. A
t-interval over seeds alone treats the 48 test problems as the whole world; a bootstrap over problems
alone treats one training run as the method. Here every number is a crossed cluster bootstrap
(:func:`prmkit.core.stats.crossed_bootstrap`): each resample draws seeds and problems together, and a
paired comparison (model A − model B) is computed on the very same draw, so what A and B share cancels.

Inputs are what an evaluation writes: the first-error predictions (``predictions.jsonl``: problem,
subset, gold and predicted first error, step scores) and best-of-N per-problem accuracies
(``bon_per_problem.json``). Pure functions over those objects; the sweep reads the files.

Where a world has loopholes the evaluations also record each problem's *honest* best-of-N accuracy (a
pick that games the task counts as wrong; :mod:`prmkit.evaluation.bon_curves`). The study then adds the
same estimates and paired differences read from it (``bon_honest``, paired keys marked ``(honest)``) and
its tables an honest best-of-N table; a study without them reads and renders as before.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from prmkit.core.results import MISSING, VIEWS, Block, Table, spread
from prmkit.core.stats import (
    Estimate,
    Stat,
    crossed_bootstrap,
    item_weights,
    mean_stat,
    multiplicity,
    paired,
    single_run_range,
    weighted_auroc,
)
from prmkit.evaluation.processbench import first_error_steps

BON_POINTS = (4, 16, 64)
SHARED_BON = {"majority": "majority vote", "oracle": "oracle (pass@N)", "orm": "ORM best-of-N"}
"""Best-of-N methods whose value does not depend on the evaluated PRM (read from any model's pools)."""
HONEST = " (honest)"
"""The marker of a paired difference of honest best-of-N accuracies (``A − B (honest): N=4``)."""


@dataclass
class Measured:
    """One model's evaluation in one seed: first-error predictions and best-of-N per-problem accuracy."""

    predictions: list[dict[str, Any]]
    bon: dict[str, Any]

    @classmethod
    def read(cls, folder: str | Path) -> Measured:
        """From an evaluation folder (``predictions.jsonl``, ``bon_per_problem.json``)."""
        folder = Path(folder)
        with open(folder / "predictions.jsonl", encoding="utf-8") as fh:
            predictions = [json.loads(line) for line in fh if line.strip()]
        bon_file = folder / "bon_per_problem.json"
        bon = json.loads(bon_file.read_text(encoding="utf-8")) if bon_file.exists() else {}
        return cls(predictions, bon)


def _problem_index(runs: Sequence[Measured]) -> dict[str, int]:
    ids = sorted({p["problem"] for run in runs for p in run.predictions})
    return {pid: i for i, pid in enumerate(ids)}


def _subset_counts(run: Measured, subset: str, index: Mapping[str, int]) -> np.ndarray:
    """(P, 4) per problem: matched and total traces with an error, matched and total error-free."""
    counts = np.zeros((len(index), 4))
    for p in run.predictions:
        if p["subset"] != subset:
            continue
        hit = p["predicted"] is not None and p["predicted"] == p["gold"]
        col = 0 if p["gold"] != -1 else 2
        counts[index[p["problem"]], col] += hit
        counts[index[p["problem"]], col + 1] += 1
    return counts


def f1_stat(runs: Sequence[Measured], subset: str, index: Mapping[str, int]) -> Stat:
    """ProcessBench's first-error F1 on ``subset`` (harmonic mean of the two accuracies; 0 when both are
    0), recomputed on each reweighted problem set."""
    counts = [_subset_counts(run, subset, index) for run in runs]

    def stat(seed: int, weights: np.ndarray) -> np.ndarray:
        c = weights @ counts[seed]
        with np.errstate(invalid="ignore", divide="ignore"):
            a, b = c[:, 0] / c[:, 1], c[:, 2] / c[:, 3]
            return np.where(a + b > 0, 2 * a * b / (a + b), 0.0)

    return stat


def _steps(run: Measured, subset: str, index: Mapping[str, int]) -> tuple[np.ndarray, ...]:
    """The steps :func:`~prmkit.evaluation.processbench.first_error_steps` ranks (score of "wrong",
    positive), with each step's problem index."""
    rows = [p for p in run.predictions if p["subset"] == subset and "scores" in p]
    wrong, positive = first_error_steps([p["scores"] for p in rows], [p["gold"] for p in rows])
    sizes = [len(p["scores"]) if p["gold"] == -1 else min(p["gold"] + 1, len(p["scores"])) for p in rows]
    problem = np.repeat([index[p["problem"]] for p in rows], sizes).astype(int)
    return wrong, positive, problem


def auroc_stat(runs: Sequence[Measured], subset: str, index: Mapping[str, int]) -> Stat:
    """Step-level first-error AUROC on ``subset`` (threshold-free): the gold first-error step against the
    right steps before it, ranked by 1 − step score; steps after the first error are left out."""
    steps = [_steps(run, subset, index) for run in runs]

    def stat(seed: int, weights: np.ndarray) -> np.ndarray:
        wrong, positive, problem = steps[seed]
        return weighted_auroc(wrong, positive, item_weights(weights, problem))

    return stat


def bon_stat(
    runs: Sequence[Measured], method: str, n: int, problems: Sequence[str], key: str = "accuracy"
) -> Stat:
    """Best-of-``n`` accuracy of ``method``: the mean of each problem's expected accuracy. ``key``:
    ``honest`` reads the honest accuracy instead; a run that records none had no trace gaming the task,
    so its honest accuracy is its accuracy."""
    values = []
    for run in runs:
        b = run.bon
        order = {pid: i for i, pid in enumerate(b["problems"])}
        acc = np.asarray(b.get(key, b["accuracy"])[method][b["ns"].index(n)])
        values.append(acc[[order[pid] for pid in problems]])
    return mean_stat(values)


def _per_seed(stat: Stat, seeds: int, problems: int) -> list[float]:
    return [float(stat(s, np.ones((1, problems)))[0]) for s in range(seeds)]


def _estimate(stat: Stat, seeds: int, problems: int, resamples: int, what: str) -> dict[str, Any]:
    est: Estimate = crossed_bootstrap(
        stat, seeds, problems, resamples=resamples, draws={"seed": seeds, what: problems}
    )
    low, high = single_run_range(_per_seed(stat, seeds, problems))
    return est.to_dict() | {"single_run": [low, high], "cell": est.cell()}


def summarize(
    per_seed: Sequence[Mapping[str, Measured]],
    *,
    pairs: Sequence[tuple[str, str]] = (),
    outcome_models: Sequence[str] = (),
    bon_points: Sequence[int] = BON_POINTS,
    resamples: int = 2000,
    compare: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    """Every model's first-error F1 and AUROC per subset, best-of-N accuracy at ``bon_points``, and the
    paired differences ``pairs`` ((A, B): A − B on F1 and AUROC; each PRM and the ORM against majority
    vote at every N), as estimates with intervals over seeds × problems and the range of single runs.
    ``outcome_models`` (the ORM) get no best-of-N rows of their own: an ORM's pick is the shared
    ``ORM best-of-N`` row (its last step's score), not a minimum over its step scores. ``compare``:
    the study's own comparisons ((A, B)), paired as ``pairs`` are and on best-of-N (min) at every N as
    well; recorded (``compare``) so a table can show them alone."""
    seeds = len(per_seed)
    models = list(per_seed[0])
    runs = {m: [s[m] for s in per_seed] for m in models}
    index = _problem_index([r for rs in runs.values() for r in rs])
    subsets = list(dict.fromkeys(p["subset"] for p in per_seed[0][models[0]].predictions))
    out: dict[str, Any] = {"seeds": seeds, "resamples": resamples, "first_error": {}, "bon": {}, "paired": {}}
    stats: dict[tuple[str, str], Stat] = {}
    for m in models:
        out["first_error"][m] = {}
        for sub in subsets:
            stats[(m, f"F1 {sub}")] = f1_stat(runs[m], sub, index)
            if all("scores" in p for p in runs[m][0].predictions[:1]):
                stats[(m, f"AUROC {sub}")] = auroc_stat(runs[m], sub, index)
        for metric in [k for (mm, k) in stats if mm == m]:
            out["first_error"][m][metric] = _estimate(
                stats[(m, metric)], seeds, len(index), resamples, "problem"
            )
    compare = [tuple(p) for p in compare]
    out["compare"] = [list(p) for p in compare]
    for a, b in [*pairs, *(p for p in compare if p not in pairs)]:
        for metric in out["first_error"][a]:
            if (b, metric) in stats:
                diff = paired(stats[(a, metric)], stats[(b, metric)])
                est = _estimate(diff, seeds, len(index), resamples, "problem")
                out["paired"][f"{a} − {b}: {metric}"] = est | {
                    "cell": Estimate(**_core(est)).cell(signed=True)
                }
    _bon(out, runs, models, bon_points, seeds, resamples, outcome_models, compare)
    n = sum(len(v) for v in out["first_error"].values()) + len(out["paired"])
    n += sum(len(v) for v in out["bon"].values()) + sum(len(v) for v in out.get("bon_honest", {}).values())
    out["intervals"] = n
    out["multiplicity"] = multiplicity(n)
    return out


def _core(est: Mapping[str, Any]) -> dict[str, Any]:
    return {k: est[k] for k in ("mean", "low", "high", "draws", "method")}


def _bon(
    out: dict[str, Any],
    runs: Mapping[str, list[Measured]],
    models: Sequence[str],
    points: Sequence[int],
    seeds: int,
    resamples: int,
    outcome_models: Sequence[str] = (),
    pairs: Sequence[tuple[str, str]] = (),
) -> None:
    """Best-of-N estimates (``out["bon"]``) and their paired differences; the same from the honest
    accuracies (``out["bon_honest"]``, paired keys marked :data:`HONEST`) when some run records them."""
    with_bon = [m for m in models if runs[m][0].bon]
    if not with_bon:
        return
    problems = runs[with_bon[0]][0].bon["problems"]
    ns = [n for n in points if n in runs[with_bon[0]][0].bon["ns"]]
    readings = [("accuracy", "bon", "")]
    if any("honest" in run.bon for m in with_bon for run in runs[m]):
        readings.append(("honest", "bon_honest", HONEST))
    for key, table, marker in readings:
        rows = _bon_rows(runs, with_bon, ns, problems, outcome_models, key)
        out[table] = {
            name: {
                f"N={n}": _estimate(st, seeds, len(problems), resamples, "problem") for n, st in by_n.items()
            }
            for name, by_n in rows.items()
        }
        for (a, b), n, diff in _bon_differences(rows, pairs):
            est = _estimate(diff, seeds, len(problems), resamples, "problem")
            out["paired"][f"{a} − {b}{marker}: N={n}"] = est | {
                "cell": Estimate(**_core(est)).cell(signed=True)
            }


def _bon_rows(
    runs: Mapping[str, list[Measured]],
    with_bon: Sequence[str],
    ns: Sequence[int],
    problems: Sequence[str],
    outcome_models: Sequence[str],
    key: str,
) -> dict[str, dict[int, Stat]]:
    """The best-of-N rows (each PRM's pick and weighted vote, the shared methods once) as statistics at
    each N, read from the per-problem ``key`` (``accuracy`` or ``honest``)."""
    rows: dict[str, dict[int, Stat]] = {}
    for m in with_bon:
        methods = runs[m][0].bon["accuracy"]
        if "prm:min" in methods and m not in outcome_models:
            rows[f"{m} best-of-N (min)"] = {n: bon_stat(runs[m], "prm:min", n, problems, key) for n in ns}
            rows[f"{m} weighted vote"] = {n: bon_stat(runs[m], "weighted:min", n, problems, key) for n in ns}
        for method, name in SHARED_BON.items():
            if method in methods and name not in rows:
                rows[name] = {n: bon_stat(runs[m], method, n, problems, key) for n in ns}
    return rows


def _bon_differences(
    rows: Mapping[str, Mapping[int, Stat]], pairs: Sequence[tuple[str, str]]
) -> list[tuple[tuple[str, str], int, Stat]]:
    """The paired differences ((A, B), N, A − B) a study reports: every picker against majority vote and
    the ORM, then the study's own comparisons ``pairs`` of two PRMs' best-of-N (min)."""
    out = []
    shared = set(SHARED_BON.values())
    for base in (SHARED_BON["majority"], SHARED_BON["orm"]):  # every picker against each baseline
        if base not in rows:
            continue
        for name, by_n in rows.items():
            if name in shared and (base == SHARED_BON["orm"] or name != SHARED_BON["orm"]):
                continue  # majority and the oracle against nothing; the ORM against majority only
            out += [((name, base), n, paired(st, rows[base][n])) for n, st in by_n.items()]
    differences = [(f"{a} best-of-N (min)", f"{b} best-of-N (min)") for a, b in pairs]
    for a, b in (d for d in differences if d[0] in rows and d[1] in rows):
        out += [((a, b), n, paired(st, rows[b][n])) for n, st in rows[a].items()]
    return out


def with_range(estimate: Mapping[str, Any] | None) -> str:
    """A table cell: ``mean [interval] (lowest–highest single run)`` in %, "–" for no estimate."""
    if estimate is None:
        return MISSING
    return f"{estimate['cell']} {spread(*estimate['single_run'])}"


def widened(numbers: Mapping[str, Any], others: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``numbers`` (a study file) with every single-run range stretched to hold the single runs of
    ``others``: study files of the same recipe made elsewhere, e.g. seed 0 on another CPU type. Means and
    intervals stay ``numbers``' own; only the range a single run falls in grows. Why: a CPU type computes
    floats with its own kernels and training amplifies the difference, so the seeds of one machine do
    not bound a newcomer's run on another (docs/results.md#the-world-demo)."""
    out = copy.deepcopy(dict(numbers))
    for set_name, s in out.items():
        if not isinstance(s, dict) or "first_error" not in s:
            continue
        mine = [(t, row, k, e) for t in ("first_error", "bon", "bon_honest") for row, ks in s.get(t, {}).items()
                for k, e in ks.items()]  # fmt: skip
        for other in others:
            theirs = other.get(set_name) or {}
            for table, row, key, est in mine:
                their = theirs.get(table, {}).get(row, {}).get(key)
                if their and "single_run" in est and "single_run" in their:
                    low, high = est["single_run"]
                    est["single_run"] = [min(low, their["single_run"][0]), max(high, their["single_run"][1])]
    return out


def machine_note(numbers: Mapping[str, Any], others: Sequence[Mapping[str, Any]]) -> str:
    """The sentence under a table whose ranges :func:`widened` stretched: which runs on which CPU types."""
    if not others:
        return ""

    def cpu(study: Mapping[str, Any]) -> str:
        m = study.get("machine") or {}
        kernels = f", torch kernels {m['torch_cpu_capability']}" if m.get("torch_cpu_capability") else ""
        return f"{m.get('cpu', 'a CPU not recorded')}{kernels}"

    def seeds(study: Mapping[str, Any]) -> str:
        return f"seed{'s' if len(study['seeds']) > 1 else ''} {', '.join(map(str, study['seeds']))}"

    runs = " and ".join(f"{seeds(o)} on {cpu(o)}" for o in others)
    return (
        f" Single-run ranges (in parentheses) span {seeds(numbers)} on {cpu(numbers)} and {runs}:"
        " another CPU type trains other floats, so one machine's seeds do not bound a run on another."
    )


def _cells(estimates: Mapping[str, Mapping[str, Any]], keys: Sequence[str]) -> list[str]:
    return [with_range(estimates.get(k)) for k in keys]


TABLES = ("first_error", "bon", "paired", "compare")
"""The tables :func:`markdown` can render, in their order (``compare``: the study's own comparisons
alone, one row per pair; they are also among ``paired``)."""


def _tables(s: Mapping[str, Any], tables: Sequence[str]) -> list[Table]:
    """The ``tables`` of one evaluation set ``s`` of a study file, in :data:`TABLES`' order."""
    models = list(s["first_error"])
    subsets = list(dict.fromkeys(k.split(" ", 1)[1] for m in models for k in s["first_error"][m]))
    cols = [f"{metric} {sub}" for sub in subsets for metric in ("F1", "AUROC")]
    ns = list(next(iter(s["bon"].values()))) if s["bon"] else []
    shown: list[Table] = []
    if "first_error" in tables:
        rows = [[m, *_cells(s["first_error"][m], cols)] for m in models]
        shown.append(Table(rows, columns=["model", *(c.replace("world-", "") for c in cols)]))
    for key, head in (("bon", "best-of-N accuracy"), ("bon_honest", "honest best-of-N accuracy")):
        if s.get(key) and "bon" in tables:  # the honest table comes with the best-of-N table
            rows = [[name, *_cells(by_n, ns)] for name, by_n in s[key].items()]
            shown.append(Table(rows, columns=[head, *(n.replace("N=", "N = ") for n in ns)]))
    if s["paired"] and "paired" in tables:
        rows = [[k.replace("world-", ""), e["cell"]] for k, e in s["paired"].items()]
        head = "paired difference (same seeds, same problems), points"
        shown.append(Table(rows, columns=[head, "mean [95 % interval]"]))
    if s.get("compare") and "compare" in tables:
        heads = [c.replace("world-", "") for c in cols] + [n.replace("N=", "best-of-") for n in ns]
        rows = []
        for a, b in s["compare"]:
            keys = [f"{a} − {b}: {c}" for c in cols]
            keys += [f"{a} best-of-N (min) − {b} best-of-N (min): {n}" for n in ns]
            rows.append(
                [f"{a} − {b}", *(s["paired"][k]["cell"] if k in s["paired"] else MISSING for k in keys)]
            )
        shown.append(Table(rows, columns=["A − B (paired: same seeds, same problems), points", *heads]))
    return shown


def markdown(
    numbers: Mapping[str, Any],
    set_name: str,
    tables: Sequence[str] = TABLES,
    also: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The Markdown tables README and docs show for one evaluation set of a study file (``study.json``):
    every cell is mean [95 % interval] (single-run range), in %; ``tables``: which of :data:`TABLES`
    (the line saying what was drawn comes with any; the multiplicity it states counts every interval of
    the set, shown or not); ``also``: study files of the same recipe from other machines, whose single
    runs the ranges hold too (:func:`widened`). README's numbers are this function's output on
    committed results files, which a test checks."""
    unknown = sorted(set(tables) - set(TABLES))
    if unknown:
        raise ValueError(f"results block: unknown tables {unknown}; expected some of {', '.join(TABLES)}")
    s = widened(numbers, also)[set_name]
    lines: list[str] = []
    for table in _tables(s, tables):  # a blank line before every table but the first-error one
        lines += ([] if table.columns[0] == "model" else [""]) + table.grid()
    models = list(s["first_error"])
    draws = next(iter(s["first_error"][models[0]].values()))["draws"]
    lines += [
        "",
        f"Draws: {draws['seed']} seeds (training runs) × {draws['problem']} evaluation problems (first error; "
        f"best-of-N: the test problems), resampled together ({s['resamples']} cluster-bootstrap resamples). "
        + s["multiplicity"]
        + machine_note(numbers, also),
    ]
    return "\n".join(lines)


def study_view(block: Block) -> str:
    """The ``study`` results view (the default): :func:`markdown` of the block's ``set``, its ``tables``
    (comma-separated, all of :data:`TABLES` if absent) and the ``also`` files (comma-separated)."""
    unknown = sorted(set(block.attrs) - {"view", "set", "tables", "also"})
    if unknown:
        raise ValueError(f"unknown attributes {unknown} of a study block; expected set, tables, also")
    tables = block.attrs["tables"].split(",") if "tables" in block.attrs else TABLES
    also = [block.read(f) for f in block.attrs["also"].split(",")] if "also" in block.attrs else []
    return markdown(block.result, block.attrs["set"], tables, also)


VIEWS.register("study", study_view)

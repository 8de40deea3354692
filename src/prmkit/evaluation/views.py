"""The evaluation studies' results views: how docs show their committed results files.

Each view renders one ``<!-- results: FILE view=NAME ... -->`` block (:mod:`prmkit.core.results`);
registered here, in the package the audits and curves belong to, so they exist once however often the
script that writes the file is loaded:

- ``code-world-labels``: where automated labels land on the code world's error classes
  (``experiments/code_world.py``'s file);
- ``code-world-audit`` (``set=claims|tuning``, optional ``class=loophole|overfit``): the class audit of
  :mod:`prmkit.evaluation.loophole` per model, mean and range over seeds (the same file);
- ``fewshot``: the few-shot curve of ``prmkit eval fewshot`` (its ``fewshot.json``): F1 at the source
  threshold, AUROC and the paired gain in F1 over k = 0;
- ``seed-table``: models measured over their training seeds by ``prmkit eval monitorability`` or
  ``prmkit eval transfer`` (``--seed-model``), one ``MODEL/`` folder each under the block's folder: each
  model's estimates per view or setting (``experiments/seed_table.py`` prints the same table);
- ``transfer-models`` (``models=A,B``): models measured once each by ``prmkit eval transfer``, one
  ``MODEL/transfer.json`` each under the block's folder: each setting's traces, F1, AUROC and gaps;
- ``monitors`` (``runs=A,B monitors=oracle,judge views=raw,actions``): ``prmkit eval monitorability``
  runs, one ``RUN-MONITOR/monitorability.json`` each under the block's folder: per behaviour, monitor and
  view the TPR, TNR and g-mean²;
- ``critic``: the critic head at a small label budget against PRMs trained on every label
  (``experiments/critic.py --summarise``'s file), with the multiplicity of its intervals;
- ``faithfulness``: causal dependence per policy and intervention, and the paired differences, as
  ``prmkit eval faithfulness`` prints them (its ``faithfulness.json``);
- ``visibility`` (``runs=A,B``): first-error F1 of ``prmkit eval monitorability`` runs under each view,
  one ``RUN/monitorability.json`` each under the block's folder (``RUN`` is ``WORLD-...-MONITOR``);
- ``unseen-misconceptions``: a gold PRM trained without misconceptions against the demo's, first errors
  flagged and found by class (``experiments/unseen_misconceptions.py --measure``'s file);
- ``code-sweep`` (``set=claims|tuning``): the code world's PRM − ORM at equal information per value of
  ``weak_tests`` and ``symptom_patch`` and per side (``experiments/code_sweep.py collect``'s file);
- ``agent-aggregation`` (``set=claims|tuning``, ``table=estimates|paired``, optional ``models=A,B``,
  ``ns=4,16``): best-of-N by each aggregation of step scores, the weighted and majority votes, and their
  paired differences, by task and honest accuracy (``experiments/agent_aggregation.py``'s file).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prmkit.core.results import MISSING, VIEWS, Block, Table, estimate_cell, percent, runs_cell
from prmkit.evaluation.faithfulness import table as faithfulness_table

CODE_CLASSES = ("plan", "edit", "overfit", "misconception", "verification", "loophole", "premise", "none")
"""The code world's gold first-error classes (``none``: an error-free trajectory), in the table's order."""
AUDIT = {
    "rewarded_rate": "passed as error-free",
    "preference": "preferred to an honest right trajectory",
    "pick_share": "best-of-N picks that use one",
    "pool_share": "their share of the pools",
}
"""The class audit's metrics (:mod:`prmkit.evaluation.loophole`), each read as ``{class}_{metric}``, and
each one's column."""


def _with_count(e: dict[str, Any] | None) -> str:
    """An estimate in % with the trajectories it rests on."""
    return MISSING if e is None else f"{estimate_cell(e)} ({e['trajectories']})"


def code_labels_table(result: dict[str, Any]) -> str:
    """Label sources as rows, classes of the gold first error as columns: the share of trajectories whose
    first error the source puts on the gold one."""
    rows = [
        [source, *(_with_count(row.get(c)) for c in CODE_CLASSES)]
        for source, row in result["sources"].items()
    ]
    title = f"{len(result['seeds'])} seeds; cell: % [95 % interval] (trajectories)"
    return Table(rows, title, ["source", *CODE_CLASSES]).markdown() + "\n"


def code_audit_table(result: dict[str, Any], set_name: str, audited: str = "loophole") -> str:
    """Models as rows, the ``audited`` class audit's metrics as columns: mean (lowest–highest seed), in %."""
    rows = {
        model: {m: r[f"{audited}_{m}"] for m in AUDIT if f"{audited}_{m}" in r}
        for model, r in result["audits"].get(set_name, {}).items()
    }
    table = [[m, *(runs_cell(r.get(k)) for k in AUDIT)] for m, r in rows.items()]
    title = f"{len(result['seeds'])} seeds; cell: mean (lowest–highest seed), %"
    return Table(table, title, ["model", *AUDIT.values()]).markdown() + "\n"


@VIEWS.register("code-world-labels")
def code_world_labels(block: Block) -> str:
    """The ``code-world-labels`` view: :func:`code_labels_table` of the block's file."""
    block.expect()
    return code_labels_table(block.result)


@VIEWS.register("code-world-audit")
def code_world_audit(block: Block) -> str:
    """The ``code-world-audit`` view: :func:`code_audit_table` of the block's ``set`` and ``class``
    (default ``loophole``)."""
    block.expect("set", "class")
    return code_audit_table(block.result, block.attrs["set"], block.attrs.get("class", "loophole"))


def fewshot_table(result: dict[str, Any]) -> str:
    """The few-shot curve of a ``fewshot.json``: F1 at the source threshold, AUROC and the paired gain in
    F1 over k = 0, per k (a zero-width interval shows its point alone)."""

    def cell(e: dict[str, Any] | None, signed: bool = False) -> str:
        return estimate_cell(e, signed=signed, missing="", collapse=True)

    columns = ["k labelled held-out trajectories", "F1", "AUROC", "gain in F1 over k = 0"]
    rows = [
        [p["k"], cell(p["f1"]), cell(p["auroc"]), cell(p.get("gain_f1"), signed=True)]
        for p in result["points"]
    ]
    return Table(rows, columns=columns).markdown() + "\n"


@VIEWS.register("fewshot")
def fewshot(block: Block) -> str:
    """The ``fewshot`` view: :func:`fewshot_table` of the block's file."""
    block.expect()
    return fewshot_table(block.result)


SEED_FILES: dict[str, tuple[str, str, str, dict[str, str]]] = {
    "monitorability.json": (
        "views",
        "view",
        "view",
        {"TPR": "tpr", "TNR": "tnr", "g-mean²": "g_mean2", "first-error F1": "f1", "AUROC": "auroc"},
    ),
    "transfer.json": (
        "settings",
        "name",
        "setting",
        {"F1": "f1", "AUROC": "auroc", "gap F1": "gap_f1", "gap AUROC": "gap_auroc"},
    ),
}
"""Per results file measured over seeds: the list of rows in it, a row's name, the rows' column head, and
the key of each column's estimate in a row."""

SeedNumbers = dict[str, dict[str, dict[str, dict[str, Any] | None]]]
"""``{model: {row: {column: estimate}}}`` (an estimate's JSON form; None where absent)."""


def seed_file(folder: Path) -> str:
    """The results file the ``MODEL`` folders under ``folder`` hold (one kind per table)."""
    kinds = [name for name in SEED_FILES if any(folder.glob(f"*/{name}"))]
    if len(kinds) != 1:
        raise ValueError(f"{folder}: expected MODEL folders of one of {sorted(SEED_FILES)}, found {kinds}")
    return kinds[0]


def seed_numbers(folder: Path) -> SeedNumbers:
    """Every ``MODEL`` folder's estimates under ``folder``; a result measured on one model, not over
    training seeds (``--seed-model``), is refused."""
    name = seed_file(folder)
    rows_key, row_name, _, columns = SEED_FILES[name]
    found: SeedNumbers = {}
    for result in sorted(folder.glob(f"*/{name}")):
        data = json.loads(result.read_text(encoding="utf-8"))
        if len(data.get("seeds") or []) < 2:
            raise ValueError(f"{result}: measured on one model, not over training seeds (--seed-model)")
        found[result.parent.name] = {
            row[row_name]: {column: row.get(key) for column, key in columns.items()} for row in data[rows_key]
        }
    return found


def _seed_cell(column: str, e: dict[str, Any] | None) -> str:
    gap = column.startswith("gap")
    return estimate_cell(e, signed=gap, missing="" if gap else "n/a", collapse=True)


def crossed_table(numbers: SeedNumbers, row_head: str) -> str:
    """Models × their rows (views or settings) as a table: each estimate as ``mean [low, high]`` in %, a
    point without spread alone; a missing gap blank, any other missing number ``n/a``."""
    columns = list(next(iter(next(iter(numbers.values())).values())))
    rows = []
    for model, named in numbers.items():
        for row, values in named.items():
            rows.append([model, row, *(_seed_cell(c, values[c]) for c in columns)])
    return Table(rows, columns=["model", row_head, *columns]).markdown() + "\n"


@VIEWS.register("seed-table")
def seed_table(block: Block) -> str:
    """The ``seed-table`` view: :func:`crossed_table` of the ``MODEL`` folders under the block's folder."""
    block.expect()
    folder = block.root / block.file
    return crossed_table(seed_numbers(folder), SEED_FILES[seed_file(folder)][2])


def _setting_name(result: dict[str, Any], name: str) -> str:
    """A transfer setting's name, with the source's world when the setting draws from it (the other
    settings are named by their own world)."""
    config = result["params"]["config"]
    spec = config["source"] if name == "source" else config["targets"][name]
    return f"{name} ({config['world']})" if spec.get("world_name") is None else name


def transfer_models_table(results: dict[str, dict[str, Any]]) -> str:
    """Model × setting rows of ``transfer.json`` files (model -> its JSON): the traces (with an error),
    F1 and AUROC, and the gaps from the source, each as ``mean [low, high]`` in %."""
    rows = []
    for model, result in results.items():
        for s in result["settings"]:
            head = [model, _setting_name(result, s["name"]), f"{s['traces']} ({s['with_error']})"]
            rows.append(head + [_seed_cell(c, s[key]) for c, key in SEED_FILES["transfer.json"][3].items()])
    columns = ["PRM", "setting", "traces (with an error)", *SEED_FILES["transfer.json"][3]]
    return Table(rows, columns=columns).markdown() + "\n"


@VIEWS.register("transfer-models")
def transfer_models(block: Block) -> str:
    """The ``transfer-models`` view: :func:`transfer_models_table` of the block's ``models`` (folders
    under the block's folder, in that order)."""
    block.expect("models")
    models = block.attrs["models"].split(",")
    return transfer_models_table({m: block.read(f"{block.file}/{m}/transfer.json") for m in models})


def monitors_table(runs: dict[str, list[dict[str, Any]]], views: list[str]) -> str:
    """Per run (its ``monitorability.json`` files, one per monitor) the behaviour, once, then each
    monitor's TPR, TNR and g-mean² under each of ``views``, in %."""
    rows = []
    for results in runs.values():
        first = results[0]
        positives = first["views"][0]["positives"]
        behaviour = f"{first['behaviour'].replace('_', ' ')} ({positives} of {first['traces']} traces)"
        for result in results:
            monitor = result["monitor"].rsplit("-", 1)[-1]
            for v in (v for name in views for v in result["views"] if v["view"] == name):
                cells = [estimate_cell(v[k], collapse=True) for k in ("tpr", "tnr", "g_mean2")]
                rows.append([behaviour, monitor, v["view"], *cells])
    for above, row in zip(
        rows[::-1][1:], rows[::-1], strict=False
    ):  # a behaviour named once, on its first row
        if row[0] == above[0]:
            row[0] = ""
    return Table(rows, columns=["behaviour", "monitor", "view", "TPR", "TNR", "g-mean²"]).markdown()


@VIEWS.register("monitors")
def monitors(block: Block) -> str:
    """The ``monitors`` view: :func:`monitors_table` of the block's ``runs`` × ``monitors`` folders and its
    ``views``."""
    block.expect("runs", "monitors", "views")
    names = block.attrs["monitors"].split(",")
    runs = {
        run: [block.read(f"{block.file}/{run}-{m}/monitorability.json") for m in names]
        for run in block.attrs["runs"].split(",")
    }
    return monitors_table(runs, block.attrs["views"].split(",")) + "\n"


def critic_table(summary: dict[str, Any]) -> str:
    """A critic summary's models as rows: test and held-out F1 and AUROC, misconception F1, the AUROC
    difference from the likelihood PRM (paired), and the CPU seconds to score each split (%)."""
    rows = []
    for name, row in summary["rows"].items():
        t, h = row["test"], row["heldout"]
        diff = " / ".join(
            estimate_cell(c.get("auroc_minus_likelihood"), signed=True, collapse=True) for c in (t, h)
        )
        cells = [estimate_cell(e, collapse=True) for e in (t["f1"], t["auroc"], h["f1"], h["auroc"])]
        cells.append(f"{100 * t['misconception_f1']:.1f} / {100 * h['misconception_f1']:.1f}")
        rows.append([name, *cells, diff if "auroc_minus_likelihood" in t else ""])
        rows[-1].append(f"{t['cpu_seconds']:.0f} / {h['cpu_seconds']:.0f}")
    columns = ["model", "test F1", "test AUROC", "held-out F1", "held-out AUROC"]
    columns += [
        "misconception F1 (test / held-out)",
        "AUROC − likelihood (test / held-out)",
        "CPU s (test / held-out)",
    ]
    return Table(rows, columns=columns).markdown()


@VIEWS.register("critic")
def critic(block: Block) -> str:
    """The ``critic`` view: :func:`critic_table` of the block's file and the multiplicity of its intervals."""
    block.expect()
    return critic_table(block.result) + "\n\n" + block.result["multiplicity"] + "\n"


@VIEWS.register("faithfulness")
def faithfulness(block: Block) -> str:
    """The ``faithfulness`` view: the table ``prmkit eval faithfulness`` prints
    (:func:`prmkit.evaluation.faithfulness.table`) of the block's file."""
    block.expect()
    return faithfulness_table(block.result) + "\n"


def visibility_table(runs: dict[str, dict[str, Any]]) -> str:
    """Views as rows, runs (``prmkit eval monitorability`` files, column head -> JSON) as columns: the
    monitor's first-error F1 under each view, in %."""
    f1 = {head: {v["view"]: v["first_error"]["f1"] for v in r["views"]} for head, r in runs.items()}
    names = list(dict.fromkeys(name for by_view in f1.values() for name in by_view))
    rows = [[name, *(percent(by_view.get(name)) for by_view in f1.values())] for name in names]
    return Table(rows, columns=["view", *runs]).markdown() + "\n"


@VIEWS.register("visibility")
def visibility(block: Block) -> str:
    """The ``visibility`` view: :func:`visibility_table` of the block's ``runs`` (``RUN-MONITOR`` folders
    under the block's folder), each column headed ``WORLD: MONITOR``."""
    block.expect("runs")
    runs = {}
    for run in block.attrs["runs"].split(","):
        world, monitor = run.split("-", 1)[0], run.rsplit("-", 1)[-1]
        runs[f"{world}: {monitor}"] = block.read(f"{block.file}/{run}/monitorability.json")
    return visibility_table(runs)


HELD_OUT_RATES = {
    "misconception": ("misconception flagged", "misconception found exactly"),
    "other classes": ("other class flagged", "other class found exactly"),
}
"""``experiments/unseen_misconceptions.py``'s rates by the class of the gold first error: flagged, found
exactly."""


def unseen_misconceptions_table(result: dict[str, Any]) -> str:
    """The demo's gold PRM against one trained without misconceptions, by the class of the first error:
    each PRM's share flagged and found exactly, and the paired difference, in %."""
    rows = []
    for cls, rates in HELD_OUT_RATES.items():
        for rate, how in zip(rates, ("flagged", "found exactly"), strict=True):
            r = result[rate]
            cells = [estimate_cell(r["demo"]), estimate_cell(r["no_misconceptions"])]
            rows.append(
                [
                    f"{cls} ({r['traces']})",
                    how,
                    *cells,
                    estimate_cell(r["no_misconceptions − demo"], signed=True),
                ]
            )
    columns = ["first error (traces)", "", "demo's gold PRM", "trained without misconceptions", "difference"]
    return Table(rows, columns=columns).markdown() + "\n"


@VIEWS.register("unseen-misconceptions")
def unseen_misconceptions(block: Block) -> str:
    """The ``unseen-misconceptions`` view: :func:`unseen_misconceptions_table` of the block's file."""
    block.expect()
    return unseen_misconceptions_table(block.result)


EQUAL_SIDES = (("hidden tests", None), ("CI (visible tests)", "visible"))
"""The two sides of the code world's equal-information comparison (issue 61): the block's own file is
the hidden-tests study (recipes/code.yaml), its ``visible`` attribute the CI one (recipes/code-visible.yaml)."""


def equal_information_table(
    sides: list[tuple[str, dict[str, Any]]], set_name: str, prm: str, ns: list[str]
) -> str:
    """One row per side: the PRM trained on that side's MC labels against the ORM paid by the same side's
    outcome, on first-error F1 and AUROC (test tasks) and on best-of-N (min) and honest best-of-N at each
    N, every cell a paired difference (same seeds, same tasks) in points."""
    heads = ["F1 test", "AUROC test"]
    heads += [f"best-of-{n.removeprefix('N=')}" for n in ns]
    heads += [f"honest best-of-{n.removeprefix('N=')}" for n in ns]
    rows = []
    for side, study in sides:
        s = study[set_name]
        keys = [f"{prm} − orm: {m} world-test" for m in ("F1", "AUROC")]
        keys += [f"{prm} best-of-N (min) − ORM best-of-N: {n}" for n in ns]
        keys += [f"{prm} best-of-N (min) − ORM best-of-N (honest): {n}" for n in ns]
        rows.append([side, *(estimate_cell(s["paired"].get(k), signed=True) for k in keys)])
    draws = sides[0][1][set_name]
    title = f"{draws['seeds']} seeds × each set's tasks; cell: mean [95 % interval], points"
    return Table(rows, title, [f"{prm} − orm, paid and labelled by", *heads]).markdown() + "\n"


@VIEWS.register("equal-information")
def equal_information(block: Block) -> str:
    """The ``equal-information`` view: :func:`equal_information_table` of the block's file (the hidden-tests
    side) and its ``visible`` file, for ``set`` (claims or tuning); ``prm`` the PRM (default
    ``prm-mc_hard``), ``ns`` the best-of-N points (default ``N=4,N=16``)."""
    block.expect("set", "visible", "prm", "ns")
    sides = [
        (side, block.result if attr is None else block.read(block.attrs[attr])) for side, attr in EQUAL_SIDES
    ]
    ns = block.attrs.get("ns", "N=4,N=16").split(",")
    return equal_information_table(sides, block.attrs["set"], block.attrs.get("prm", "prm-mc_hard"), ns)


SWEEP_DIFFERENCES = {
    "F1 test": "{prm} − orm: F1 world-test",
    "AUROC test": "{prm} − orm: AUROC world-test",
    "best-of-4": "{prm} best-of-N (min) − ORM best-of-N: N=4",
    "best-of-16": "{prm} best-of-N (min) − ORM best-of-N: N=16",
    "honest best-of-4": "{prm} best-of-N (min) − ORM best-of-N (honest): N=4",
    "honest best-of-16": "{prm} best-of-N (min) − ORM best-of-N (honest): N=16",
}
"""The code-world sweep's differences PRM − ORM (``experiments/code_sweep.py``), each by its column and
the study's paired key it is read from: the cells of :func:`equal_information_table`."""


def sweep_paired_key(prm: str, name: str) -> str:
    """The key in a study's ``paired`` table of the sweep's difference ``name`` of :data:`SWEEP_DIFFERENCES`."""
    return SWEEP_DIFFERENCES[name].format(prm=prm)


def code_sweep_table(result: dict[str, Any], set_name: str) -> str:
    """One row per knob value and side of ``experiments/code_sweep.py``'s file: the PRM against the ORM
    of the same side (both see the hidden tests, or both CI), every cell a paired difference (same
    seeds, same tasks) in points; the seeds column says what the row's intervals are over."""
    rows = []
    for point in result["points"]:
        value = f"{point['value']:g}" + (" (default)" if point["default"] else "")
        for side, numbers in point["sides"].items():
            differences = numbers[set_name]["differences"]
            cells = [estimate_cell(differences.get(name), signed=True) for name in SWEEP_DIFFERENCES]
            seeds = len(numbers["seeds"])
            rows.append(
                [point["knob"], value, side, *cells, f"{seeds}" + ("" if seeds > 1 else " (tasks only)")]
            )
    title = (
        f"{result['prm']} − {result['against']}, each side's own ORM; cell: mean [95 % interval], points; "
        "intervals over seeds × tasks, over tasks alone for a row of one seed"
    )
    columns = ["knob", "value", "side", *SWEEP_DIFFERENCES, "seeds"]
    return Table(rows, title, columns).markdown() + "\n"


@VIEWS.register("code-sweep")
def code_sweep(block: Block) -> str:
    """The ``code-sweep`` view: :func:`code_sweep_table` of the block's file for ``set`` (claims or
    tuning)."""
    block.expect("set")
    return code_sweep_table(block.result, block.attrs["set"])


def aggregation_table(
    result: dict[str, Any],
    set_name: str,
    table: str,
    models: list[str] | None = None,
    ns: list[str] | None = None,
) -> str:
    """``experiments/agent_aggregation.py``'s ``estimates`` (best-of-N by each aggregation and the votes)
    or ``paired`` (each aggregation − ``min``, each pick − majority vote) of one set: per row and N, task
    accuracy and honest accuracy (a pick that games the task counts as wrong), mean [95 % interval] in
    points. ``models`` keeps those models' rows (and majority vote's), ``ns`` some sizes, in their order;
    the caption gives the draws."""
    section = result[set_name]
    by_row = section[table]
    known = {row.split(" ", 1)[0] for row in by_row}
    unknown = sorted(set(models or ()) - known)
    if unknown:
        raise ValueError(f"{set_name} {table}: no rows of {unknown}; it has rows of {sorted(known)}")
    names = [r for r in by_row if models is None or r.split(" ", 1)[0] in models or r == "majority vote"]
    sizes = ns or [n.removeprefix("N=") for n in next(iter(by_row.values()))]
    signed = table == "paired"
    body = [
        [
            row,
            *(
                estimate_cell(by_row[row][f"N={n}"][k], signed=signed)
                for n in sizes
                for k in ("accuracy", "honest")
            ),
        ]
        for row in names
    ]
    head = "paired difference" if signed else "best-of-N"
    columns = [head, *(f"{k} N = {n}" for n in sizes for k in ("accuracy", "honest"))]
    draws = section["draws"]
    title = (
        f"{draws['seeds']} seeds × {draws['problems']} tasks × {draws['samples']} samples "
        f"(evaluate seed {section['evaluate_seed']}); cell: mean [95 % interval], points"
    )
    return Table(body, title, columns).markdown() + "\n"


@VIEWS.register("agent-aggregation")
def agent_aggregation(block: Block) -> str:
    """The ``agent-aggregation`` view: :func:`aggregation_table` of the block's ``set`` and ``table``,
    optionally some ``models`` and ``ns`` (comma-separated)."""
    block.expect("set", "table", "models", "ns")
    models = block.attrs.get("models")
    ns = block.attrs.get("ns")
    return aggregation_table(
        block.result,
        block.attrs["set"],
        block.attrs["table"],
        models.split(",") if models else None,
        ns.split(",") if ns else None,
    )

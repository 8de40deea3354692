"""The RL page's other results views: how docs show the RL results files that are not the study's.

Each view renders one ``<!-- results: FILE view=NAME ... -->`` block (:mod:`prmkit.core.results`); the
study's own block (``rl-measure``) is :mod:`prmkit.rl.study_block`'s:

- ``rl-faithfulness`` (optional ``columns=all,...``): ``experiments/rl_faithfulness.py``'s file, the causal
  dependence of π0 and the RL-trained policies under each intervention, each policy's change from π0
  and the differences between rewards, with the file's draws and multiplicity;
- ``rl-causal-monitor`` (``runs=outcome-0,dense-0``, optional ``steps=50``): ``prmkit rl`` runs with the
  causal-dependence monitor on, one folder each under the block's folder (``monitors.jsonl`` and
  ``monitors_per_problem.jsonl``): the monitor at π0, at ``steps`` and at the end, the end's change from
  π0 paired by problem (the study's interval rule, :func:`prmkit.rl.study.interval`), and the step at
  which :func:`prmkit.rl.monitors.dependence_warning` first fired;
- ``rl-gpu-check``: ``bench/gpu_rl_check.py``'s file, one run of ``DenseGRPOTrainer`` steps on a GPU:
  step seconds, the reward call's share of a step, peak GPU memory, and the advantage check.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prmkit.core.results import VIEWS, Block, Table, estimate_cell, percent, runs_cell
from prmkit.core.stats import Estimate, multiplicity
from prmkit.rl.monitors import dependence_warning
from prmkit.rl.study import CellRecord, by_draw, change, interval, problem_tables, read_cell

FAITHFULNESS = ("early_answering", "adding_mistakes", "filler", "all", "answer_accuracy", "process_correct")
"""The columns of an RL faithfulness file's rows: causal dependence under each intervention and pooled
(``all``), then answer accuracy and process-correct on the same samples."""
RESAMPLES = 2000
"""Resamples of the causal monitor's paired interval (the study's default)."""


def _policy(name: str) -> str:
    """A row's name as the page writes it: ``π0`` for ``pi0``, a difference with the minus sign."""
    return name.replace("pi0", "π0").replace(" - ", " − ")


def faithfulness_table(result: dict[str, Any], columns: Sequence[str] = FAITHFULNESS) -> str:
    """Policies (π0, each reward) and their differences as rows, ``columns`` of :data:`FAITHFULNESS` as
    columns, in % (a difference signed); below, the multiplicity of the intervals shown and the file's draws."""
    rows = [
        [_policy(name), *(estimate_cell(row.get(c), signed=" - " in name) for c in columns)]
        for name, row in result["rows"].items()
    ]
    d = result["draws"]
    traces = sorted(set(result["traces"].values()))
    shown = sum("[" in cell for row in rows for cell in row[1:])
    note = (
        f"{multiplicity(shown)} Draws: {d['pi0_prm_draw']} π0/PRM draw × {d['rl_seed']} RL seeds × "
        f"{d['problem']} problems × {d['per_problem']} samples ({'/'.join(map(str, traces))} traces per "
        "policy); one continuation per intervention and position."
    )
    return Table(rows, columns=["policy", *columns], notes=[note]).markdown() + "\n"


@VIEWS.register("rl-faithfulness")
def faithfulness(block: Block) -> str:
    """The ``rl-faithfulness`` view: :func:`faithfulness_table` of the block's file, ``columns=A,B`` to
    show some of its columns."""
    block.expect("columns")
    columns = block.attrs.get("columns")
    return faithfulness_table(block.result, columns.split(",") if columns else FAITHFULNESS)


def dependence_change(record: CellRecord) -> Estimate:
    """A monitored run's causal dependence at its last point minus at π0, on the same resampled monitor
    problems (one run: a bootstrap over its problems, the study's :func:`~prmkit.rl.study.interval`)."""
    tables, problems = problem_tables([record])
    if not problems:
        raise ValueError(f"run {record.name}: no per-problem monitor counts to pair the change by problem")
    stat = change(tables, [record.run], "causal_dependence", "delta")
    return interval(stat, by_draw([record.run], problems), RESAMPLES, by_problem=True)


def first_dependence_warning(points: Sequence[dict[str, Any]]) -> int | None:
    """The step of the first point at which :func:`dependence_warning` fires on the series so far."""
    return next((p["step"] for i, p in enumerate(points) if dependence_warning(points[: i + 1])), None)


def causal_monitor_table(folder: Path, runs: Sequence[str], steps: Sequence[int] = ()) -> str:
    """One row per run folder (``REWARD-SEED``) under ``folder``: causal dependence in % at π0, at
    ``steps`` and at the last point, the last point's change from π0 paired by problem, and the step of
    the first causal-dependence warning."""
    records = [read_cell(folder / run, run, 0, 0) for run in runs]
    ends = {r.points[-1]["step"] for r in records}
    if len(ends) != 1:
        raise ValueError(f"runs {list(runs)} end at different steps {sorted(ends)}: one table needs one end")
    end = f"step {ends.pop()}"
    rows, problems = [], set()
    for record in records:
        at = {p["step"]: p.get("causal_dependence") for p in record.points}
        delta = dependence_change(record)
        problems.add(delta.draws["problem"])
        warned = first_dependence_warning(record.points)
        reward, _, seed = record.name.rpartition("-")
        cells = [percent(at.get(s)) for s in (0, *steps, record.points[-1]["step"])]
        rows.append([f"{reward}, seed {seed}", *cells, estimate_cell(delta, signed=True)])
        rows[-1].append("none" if warned is None else f"at step {warned}")
    columns = ["run", "π0", *(f"step {s}" for s in steps), end, f"{end} − π0 (paired by problem)", "warning"]
    traces = sorted({p.get("dependence_traces") for r in records for p in r.points})
    note = (
        f"Causal dependence in %, {'/'.join(map(str, traces))} traces a point. The change: a bootstrap over "
        f"the run's {'/'.join(map(str, sorted(problems)))} monitor problems ({RESAMPLES} resamples, 95 %), "
        "both points' rates on the same resampled problems."
    )
    return Table(rows, columns=columns, notes=[note]).markdown() + "\n"


@VIEWS.register("rl-causal-monitor")
def causal_monitor(block: Block) -> str:
    """The ``rl-causal-monitor`` view: :func:`causal_monitor_table` of the block's ``runs`` (folders under
    the block's folder) at its ``steps``."""
    block.expect("runs", "steps")
    steps = [int(s) for s in block.attrs["steps"].split(",")] if "steps" in block.attrs else []
    return causal_monitor_table(block.root / block.file, block.attrs["runs"].split(","), steps)


def gpu_check_table(result: dict[str, Any]) -> str:
    """One ``bench/gpu_rl_check.py`` run: the timed steps' seconds and the reward call's share of them
    (mean and range), peak GPU memory, and whether the advantages TRL's loss received changed only after
    step-end tokens and equal ``process_advantages`` of the paid step rewards."""
    s, check = result["settings"], result["step_end_check"]
    timed = result["steps"][s["warmup"] :]
    rows = [
        [
            result["device"],
            f"{s['warmup']} + {len(timed)}",
            runs_cell([t["seconds"] for t in timed], scale=1),
            runs_cell([t["reward_share"] for t in timed]),
            f"{result['peak_gpu_mb'] / 1024:.1f}",
            f"{check['completions']} ({check['step_boundaries']})",
            check["changes_inside_steps"],
            check["rows_unlike_process_advantages"],
        ]
    ]
    columns = [
        "device",
        "warm-up + timed steps",
        "s a step, mean (range)",
        "reward call, % of a step",
        "peak GPU GiB",
        "completions (step ends) checked",
        "advantage changes inside a step",
        "rows unlike `process_advantages`",
    ]
    return Table(rows, columns=columns).markdown() + "\n"


@VIEWS.register("rl-gpu-check")
def gpu_check(block: Block) -> str:
    """The ``rl-gpu-check`` view: :func:`gpu_check_table` of the block's file."""
    block.expect()
    return gpu_check_table(block.result)

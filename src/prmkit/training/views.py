"""The training benchmarks' results views: how docs show ``bench/results/train-*.json``.

Each view renders one ``<!-- results: FILE view=NAME ... -->`` block (:mod:`prmkit.core.results`) from
files the benchmarks wrote, one run each, so every row names its file and the date of its run:

- ``train-cpu`` (optional ``also=FILE,...``): ``bench/bench_train.py``'s runs, prmkit's training loop
  against TRL's ``PRMTrainer`` on the CPU: non-pad tokens/s (medians), their ratio in wall and CPU
  time, peak RSS, one row per file in the order named;
- ``train-gpu`` (optional ``also=FILE``): ``bench/gpu_train_check.py``'s runs, prmkit against a plain
  ``transformers.Trainer`` per setup (plain, gradient checkpointing, LoRA, both), the runs side by side.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from prmkit.core.results import VIEWS, Block, Table
from prmkit.scoring.views import run_date

GPU_SETUPS = {
    "plain": "plain",
    "gc": "gradient checkpointing",
    "lora": "LoRA",
    "lora+gc": "LoRA + checkpointing",
}
"""``bench/gpu_train_check.py``'s setups, and each one's row name."""


Run = tuple[str, str, dict[str, Any]]
"""One benchmark run: its results file, its date and the file's JSON."""


def runs(block: Block) -> list[Run]:
    """The runs of the block's file, then of those its ``also`` attribute names, in order."""
    files = [block.file, *(f for f in block.attrs.get("also", "").split(",") if f)]
    return [(f, run_date(block, f), block.read(f)) for f in files]


def _trl_batches(result: dict[str, Any]) -> str:
    """How TRL's side drew its batches and whether its dropout was on (``PRMConfig`` turns it off by
    default, where prmkit trains the head's dropout)."""
    settings = result["settings"]
    batches = "grouped by length" if settings.get("trl_group_by_length") else "random (its default)"
    dropout = "on" if settings.get("trl_disable_dropout") is False else "off (its default)"
    return f"{batches}; dropout {dropout}"


def train_cpu_row(file: str, date: str, result: dict[str, Any]) -> list[str]:
    """One CPU run: its file and date, TRL's batches, the machine's load, the medians and their ratios."""
    prmkit, trl = result["median"]["prmkit"], result["median"]["trl"]
    repeats = result["settings"]["repeats"]
    return [
        f"`{PurePath(file).name}` ({date}, {repeats} repeats)",
        _trl_batches(result),
        f"{result['load_avg_start']:.1f} to {result['load_avg_end']:.1f}",
        f"{prmkit['tokens_per_s']:,.0f}",
        f"{trl['tokens_per_s']:,.0f}",
        f"**{result['ratio_tokens_per_s']:.2f}**",
        f"{result['ratio_tokens_per_cpu_s']:.2f}",
        f"{prmkit['peak_rss_mb']:.0f} / {trl['peak_rss_mb']:.0f} MB",
    ]


def train_cpu_table(found: list[Run]) -> str:
    """``bench/bench_train.py``'s runs, one row each."""
    columns = [
        "run (file, date)",
        "TRL's batches",
        "load average",
        "prmkit tok/s",
        "TRL tok/s",
        "prmkit / TRL",
        "per CPU-second",
        "peak RSS prmkit / TRL",
    ]
    rows = [train_cpu_row(*run) for run in found]
    note = "Non-pad tokens per second of the timed training steps, median over a run's repeats; one run per file."
    return Table(rows, columns=columns, notes=[note]).markdown() + "\n"


@VIEWS.register("train-cpu")
def train_cpu(block: Block) -> str:
    """The ``train-cpu`` view: :func:`train_cpu_table` of the block's file and its ``also`` files."""
    block.expect("also")
    return train_cpu_table(runs(block))


def _gib(mb: float) -> str:
    return f"{mb / 1024:.1f}"


def train_gpu_table(found: list[Run]) -> str:
    """``bench/gpu_train_check.py``'s runs side by side: per setup each run's tokens/s
    of prmkit and the Trainer, their ratio, and the peak GPU memory (one number where both sides and runs
    agree to 0.1 GiB)."""
    by_setup: dict[str, list[dict[str, Any]]] = {}
    for _, _, result in found:
        for config in result["configs"]:
            by_setup.setdefault(config["config"], []).append(config)
    rows = []
    for setup, configs in by_setup.items():
        peaks = {_gib(c[side]["peak_gpu_mb"]) for c in configs for side in ("prmkit", "trainer")}
        rows.append(
            [
                GPU_SETUPS.get(setup, setup),
                " / ".join(f"{c['prmkit']['tokens_per_s']:,.0f}" for c in configs),
                " / ".join(f"{c['trainer']['tokens_per_s']:,.0f}" for c in configs),
                " / ".join(f"{c['ratio']:.2f}" for c in configs),
                " / ".join(sorted(peaks)),
            ]
        )
    names = [
        f"run {i} `{PurePath(file).name}` ({date}, {r['device']}, {r['settings']['steps']} timed "
        f"steps after {r['settings']['warmup']} warm-up)"
        for i, (file, date, r) in enumerate(found, 1)
    ]
    runs_named = " / ".join(f"run {i}" for i in range(1, len(found) + 1))
    goal = found[0][2]["goal"]
    columns = [
        "setup",
        f"prmkit tok/s, {runs_named}",
        f"Trainer tok/s, {runs_named}",
        f"ratio {runs_named} (goal: {goal})",
        "peak GiB (both sides)",
    ]
    return Table(rows, columns=columns, notes=["; ".join(names) + "."]).markdown() + "\n"


@VIEWS.register("train-gpu")
def train_gpu(block: Block) -> str:
    """The ``train-gpu`` view: :func:`train_gpu_table` of the block's file and its ``also`` file."""
    block.expect("also")
    return train_gpu_table(runs(block))

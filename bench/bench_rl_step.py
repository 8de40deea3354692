"""Where a GRPO step of an RL grid cell goes, and activation checkpointing on (TRL's default) against off
(prmkit's), side by side in one run, with the two runs' results compared bit for bit.

What it runs. ``prmkit.rl.train.train_policy`` with recipes/rl-grid.yaml's ``rl`` section (16 prompts x 8
samples a step, 160 tokens, temperature 0.7, ``kl_beta`` 0.02, lr 2e-4, ``reward: dense``, ``credit: sum``
unless ``--credit``, one torch thread, monitors on ``--monitor-n`` x 4 held-out samples) cut to ``--steps``
steps, from ``--policy`` (π0) paid by ``--prm``, once with ``activation_checkpointing`` on and once off,
alternating ``--repeats`` times, each run a fresh child process. Each child times the parts of the run by
wrapping the trainer's methods (the wrappers only read a clock):

- generation: the ``rollout_func`` (prmkit's KV-cached sampler); decode: the rest of TRL's ``_generate``;
- ref forward / policy forward: TRL's ``_get_per_token_logps_and_entropies`` without and with gradients;
- PRM: ``ProcessReward.score``; advantage: the rest of ``dense_advantages`` (step ends, credit form);
  outcome: the outcome reward function (its answer-checker pool starts in the first step);
- backward: ``accelerator.backward``; optimizer: ``AdamW.step``; save: ``_save_checkpoint``;
- monitors: ``MonitorCallback.record`` (sampling, scoring, the gold checker, the plot), at step 0 and the
  last step; other: the rest of ``train()`` (TRL's bookkeeping, logging).

Per side the medians over repeats of each part's CPU seconds per step (the child's process time, which a
shared machine disturbs less than the wall clock; monitors: per point), the wall seconds of a step, and
the ratio on / off of each. The last runs of the two sides must give the same final weights (``torch.equal`` on
every tensor) and the same ``monitors.jsonl``, ``monitors_per_problem.jsonl`` and ``train_log.jsonl``
(byte for byte, but for TRL's wall-clock keys ``step_time`` and ``train_*``): the bench says so, and
fails if not.

    OMP_NUM_THREADS=1 python bench/bench_rl_step.py --policy runs/rl/pi0 --prm runs/rl/prm
        [--steps 3] [--monitor-n 50] [--repeats 2] [--credit sum] [--out PATH]

Timings on a shared CPU are noisy: the sides alternate so load hits both alike; read the ratios.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchlib import code_version, versions

ROOT = Path(__file__).resolve().parents[1]
QUIET = {"TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
         "OMP_NUM_THREADS": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}  # fmt: skip
PARTS = ("generation", "decode", "ref forward", "policy forward", "backward", "optimizer", "PRM",
         "advantage", "outcome", "save", "other")  # fmt: skip
"""The parts of a step (seconds per step); the monitors are per point, apart."""
TIMING_KEYS = {"step_time", "train_runtime", "train_samples_per_second", "train_steps_per_second"}
"""TRL's wall-clock entries of ``train_log.jsonl``: they differ between any two runs."""
SIDES = {"checkpointing on": True, "checkpointing off": False}


def _timed(fn: Any, clock: dict[str, float], key: str) -> Any:
    """``fn`` adding its CPU seconds (this process, all its threads) to ``clock[key]`` and its wall
    seconds to ``clock["wall " + key]``: on a shared machine the CPU seconds hold better."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            clock[key] += time.process_time() - c0
            clock[f"wall {key}"] += time.perf_counter() - t0

    return wrapper


def _instrument(trainer: Any, clock: dict[str, float]) -> None:
    """Wrap the trainer's parts in clocks (each wrapper calls the method it wraps, unchanged)."""
    import torch

    trainer.rollout_func = _timed(trainer.rollout_func, clock, "generation")
    trainer._generate = _timed(trainer._generate, clock, "_generate")
    trainer.reward_funcs = [_timed(f, clock, "outcome") for f in trainer.reward_funcs]
    if getattr(trainer, "process_reward", None) is not None:
        trainer.process_reward.score = _timed(trainer.process_reward.score, clock, "PRM")
    if hasattr(trainer, "dense_advantages"):
        trainer.dense_advantages = _timed(trainer.dense_advantages, clock, "_dense")
    logps = trainer._get_per_token_logps_and_entropies

    def timed_logps(*args: Any, **kwargs: Any) -> Any:
        key = "policy forward" if torch.is_grad_enabled() else "ref forward"
        return _timed(logps, clock, key)(*args, **kwargs)

    trainer._get_per_token_logps_and_entropies = timed_logps
    trainer.accelerator.backward = _timed(trainer.accelerator.backward, clock, "backward")
    trainer._save_checkpoint = _timed(trainer._save_checkpoint, clock, "save")
    trainer.train = _timed(trainer.train, clock, "_train")


def child(job: dict[str, Any], out: str) -> None:
    """One run: the cut-down cell, its parts' seconds printed as JSON on the last line."""
    import torch

    from prmkit.rl import monitors, train
    from prmkit.rl.config import PromptSet, RlConfig

    clock: dict[str, float] = defaultdict(float)
    build = train._trainer

    def instrumented(*args: Any, **kwargs: Any) -> Any:
        trainer = build(*args, **kwargs)
        _instrument(trainer, clock)
        return trainer

    train._trainer = instrumented
    monitors.MonitorCallback.record = _timed(monitors.MonitorCallback.record, clock, "monitors")
    torch.optim.AdamW.step = _timed(torch.optim.AdamW.step, clock, "optimizer")
    config = RlConfig(
        policy=job["policy"], prm=job["prm"], reward="dense", credit=job["credit"], aggregation="min",
        prompts=PromptSet(source="arithmetic", n=512, monitor_n=job["monitor_n"], monitor_samples=4),
        steps=job["steps"], group_size=8, batch=16, lr=2.0e-4, kl_beta=0.02, temperature=0.7,
        max_completion_length=160, threads=1, monitor_every=job["steps"], save_every=job["save_every"],
        activation_checkpointing=job["checkpointing"],
    )  # fmt: skip
    train.train_policy(config, out)
    print(json.dumps(clock))


def parts(clock: dict[str, float], steps: int) -> dict[str, float]:
    """CPU seconds per step of each part (monitors: per point, two points a run) from a child's clocks,
    and the wall seconds of a step (``wall step``)."""
    known = {k: clock.get(k, 0.0) for k in ("generation", "ref forward", "policy forward", "backward",
                                            "optimizer", "PRM", "outcome", "save")}  # fmt: skip
    known["decode"] = clock.get("_generate", 0.0) - known["generation"]
    known["advantage"] = clock.get("_dense", 0.0) - known["PRM"]
    steps_time = clock["_train"] - clock.get("monitors", 0.0)
    known["other"] = steps_time - sum(known.values())
    out = {k: known[k] / steps for k in PARTS}
    out["step"] = steps_time / steps
    out["monitor point"] = clock.get("monitors", 0.0) / 2
    out["wall step"] = (clock["wall _train"] - clock.get("wall monitors", 0.0)) / steps
    return out


def run_child(side: str, job: dict[str, Any], folder: Path) -> dict[str, Any]:
    env = {**os.environ, **QUIET, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "bench")])}
    job = {**job, "checkpointing": SIDES[side]}
    proc = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(job), str(folder)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"{side}: the child failed\n{proc.stderr[-4000:]}")
    clock = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"side": side, "parts": parts(clock, job["steps"]), "clock": clock}


def same_results(a: Path, b: Path) -> dict[str, bool]:
    """Whether two runs' final weights are equal tensor by tensor and their metrics files byte for byte
    (``train_log.jsonl``: but for :data:`TIMING_KEYS`)."""
    import torch
    from safetensors.torch import load_file

    wa, wb = load_file(a / "model.safetensors"), load_file(b / "model.safetensors")
    found = {"weights": wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)}
    for name in ("monitors.jsonl", "monitors_per_problem.jsonl"):
        found[name] = (a / name).read_bytes() == (b / name).read_bytes()

    def log(folder: Path) -> list[dict[str, Any]]:
        rows = [json.loads(x) for x in (folder / "train_log.jsonl").read_text().splitlines()]
        return [{k: v for k, v in r.items() if k not in TIMING_KEYS} for r in rows]

    found["train_log.jsonl"] = log(a) == log(b)
    return found


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--policy", help="π0: a causal-LM folder (e.g. runs/rl/pi0)")
    p.add_argument("--prm", help="the PRM paying the steps (e.g. runs/rl/prm)")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--monitor-n", type=int, default=50, help="held-out problems a monitor point samples x 4")
    p.add_argument("--save-every", type=int, default=1, help="checkpoint every N steps (the grid: 10)")
    p.add_argument("--credit", default="sum")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--out", type=Path, default=None, help="write the results JSON here")
    p.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    return p.parse_args()


def main() -> None:
    a = parse_args()
    if a.child:
        child(json.loads(a.child[0]), a.child[1])
        return
    if not (a.policy and a.prm):
        raise SystemExit(
            "give --policy and --prm (π0 and the PRM of an RL run, e.g. runs/rl/pi0 runs/rl/prm)"
        )
    job = {k: getattr(a, k) for k in ("policy", "prm", "steps", "monitor_n", "save_every", "credit")}
    load0, runs = os.getloadavg()[0], []
    with tempfile.TemporaryDirectory(prefix="bench-rl-step-") as tmp:
        for n in range(a.repeats):
            for side in SIDES:
                runs.append(run_child(side, job, Path(tmp, f"{side}-{n}")))
                done = runs[-1]["parts"]
                print(f"{side:>18} run {n}: {done['step']:.2f} CPU s, {done['wall step']:.2f} wall s a step",
                      flush=True)  # fmt: skip
        last = a.repeats - 1
        same = same_results(*(Path(tmp, f"{side}-{last}") for side in SIDES))
    med = {side: {k: statistics.median(r["parts"][k] for r in runs if r["side"] == side)
                  for k in (*PARTS, "step", "monitor point", "wall step")} for side in SIDES}  # fmt: skip
    on, off = med["checkpointing on"], med["checkpointing off"]
    print(f"\nCPU seconds (wall: the last row), medians over {a.repeats} runs a side")
    print(f"{'part':>15} {'on s/step':>10} {'share':>6} {'off s/step':>11} {'share':>6} {'on/off':>7}")
    for k in (*PARTS, "step", "monitor point", "wall step"):
        share = f"{on[k] / on['step']:6.1%} {off[k]:11.3f} {off[k] / off['step']:6.1%}" if k in PARTS else (
            f"{'':6} {off[k]:11.3f} {'':6}")  # fmt: skip
        ratio = on[k] / off[k] if off[k] > 0 else float("nan")
        print(f"{k:>15} {on[k]:10.3f} {share} {ratio:7.2f}")
    print(f"same results (last runs): {same}")
    record = {
        "versions": versions("torch", "transformers", "trl"), **code_version(), "cpus": os.cpu_count(),
        "shared_machine": True, "load_avg_start": load0, "load_avg_end": os.getloadavg()[0],
        "settings": {k: v for k, v in vars(a).items() if k not in ("out", "child")},
        "median_seconds": med, "ratio_on_off": {k: on[k] / off[k] for k in on if off[k] > 0},
        "same_results": same, "runs": runs,
    }  # fmt: skip
    if a.out:
        a.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    if not all(same.values()):
        raise SystemExit("checkpointing on and off gave different results")


if __name__ == "__main__":
    main()

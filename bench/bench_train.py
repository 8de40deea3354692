"""PRM training throughput: ``prmkit train prm`` against TRL 1.13's ``PRMTrainer``, side by side in one run.

What it measures. The same tiny random backbone (a Llama causal LM + tokenizer saved to one folder, a
token-classification head put on it by each trainer), the same world traces, the same batch size, max
length, optimiser steps, learning-rate schedule and torch threads, float32, no evaluation on either side:

- prmkit: ``prmkit.training.train_prm(traces, out, PrmConfig(base_model=folder, separator="newline",
  max_steps=N, batch_size=B, ...))``, the function ``prmkit train prm`` calls. Dev evaluation is off by
  giving it a ``dev_label_source`` no trace has (``dev_fraction`` must be > 0, so one problem's traces
  are still held out: TRL gets exactly the traces prmkit trains on, from the same ``split_by_problem``).
- TRL: ``trl.experimental.prm.PRMTrainer(model, PRMConfig(...), processing_class=tokenizer,
  train_dataset=rows)`` over the same traces written as TRL stepwise supervision by prmkit's ``trl``
  format (``prompt``, ``completions`` = step texts, ``labels`` = a bool per step), with TRL's own
  ``tokenize_row`` (``step_separator="\\n"``) and collator, as ``examples/scripts/prm.py`` runs it;
  ``bf16`` and ``gradient_checkpointing`` off (PRMConfig turns both on by default), ``save_strategy="no"``,
  and ``disable_dropout=False``: both train the model as loaded, its token-classification head's dropout
  (0.1) on, as ``train_prm`` does (PRMConfig sets every dropout to 0 by default, which saves TRL that
  head's dropout in each step; ``--trl-disable-dropout`` keeps TRL's default).

Each run is a fresh child process (TRL 1.13 from ``.trl-1.13`` first on ``PYTHONPATH``, ``make
trl-prm-env``), so the two never share a heap; the runs alternate (prmkit, TRL, prmkit, TRL, ...).
Both children patch ``transformers.Trainer`` alike (neither trainer overrides these): ``training_step``
counts each batch's tokens, a callback stamps ``on_step_end``. Per run:

- tokens/s = non-pad tokens (``attention_mask`` ones) of the batches of optimiser steps ``warmup+1 ..
  max_steps`` / wall seconds from the end of step ``warmup`` to the end of step ``max_steps``. That
  interval holds fetching and collating the batches, forward, backward, clipping, the optimiser and
  scheduler steps and logging; it excludes model loading, tokenisation, dataset building, the trainer's
  setup and whatever runs after the last step (prmkit's final checkpoint, its model save and card).
  Padded tokens/s (every position of the batches) is kept too: prmkit batches traces of similar length
  (``group_by_length``), TRL samples at random (its default; ``--trl-group-by-length`` changes that).
  Tokens per CPU-second (the child's process time over the same interval, all its threads) too: steadier
  than wall time where other jobs share the cores.
- peak RSS of the child process (``os.wait4``'s ``ru_maxrss``: imports, data, model, optimiser, all of
  it), and its peak RSS when training began; on CUDA ``torch.cuda.max_memory_allocated``.
- seconds from the end of the last step to the end of ``train()`` (prmkit: its final checkpoint, with
  the optimiser's state, written by the trainer's ``save_strategy="steps"``; TRL saves nothing there);
  end-to-end seconds of the call (``train_prm``; TRL's model load + dataset map + train + save).

Medians over ``--repeats`` runs per side and the ratio prmkit / TRL of median tokens/s (goal >= 1.0)
are printed and written to ``bench/results/train-<device>-<date>.json`` with versions, threads, the
settings and every run. Without ``.trl-1.13`` it says to run ``make trl-prm-env`` and exits 0.

    python bench/bench_train.py [--problems 64] [--per-problem 4] [--batch-size 16] [--max-steps 25]
        [--warmup 5] [--layers 4] [--width 128] [--repeats 3] [--threads 1] [--device cpu|cuda]
        [--trl-group-by-length] [--trl-disable-dropout] [--out PATH]

Timings on a shared CPU are noisy: the runs interleave so load hits both sides alike; compare medians.
One torch thread per run by default: on this 2-core machine shared with other jobs, 2-thread runs of the
same job took from 11 to 31 seconds (a thread waits for its descheduled sibling), 1-thread runs varied by
under 20 % and were faster.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import code_version

ROOT = Path(__file__).resolve().parents[1]
QUIET = {"TOKENIZERS_PARALLELISM": "false", "TRL_EXPERIMENTAL_SILENCE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
         "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
         "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"}  # fmt: skip
"""Environment of every process here: no telemetry (TRL 1.13's trainer pings the Hub when it is built), no
network, no progress bars."""
TRL = ROOT / ".trl-1.13"
NO_DEV = "human:bench-no-dev"
"""A label source no trace has: prmkit's dev traces are filtered to those it labels, so none are left and
the trainer is built with evaluation off (``prmkit.training.heads._train_head``)."""

MEDIANS = ("tokens_per_s", "padded_tokens_per_s", "tokens_per_cpu_s", "seconds_per_step", "peak_rss_mb",
           "rss_at_train_mb", "end_to_end_seconds")  # fmt: skip
"""Per-run numbers whose median over the runs of a side is reported."""
JOB = ("max_steps", "warmup", "batch_size", "lr", "max_length", "threads", "seed", "dev_fraction", "device",
       "trl_group_by_length", "trl_disable_dropout")  # fmt: skip
"""The settings a child reads (its job file also names the data, the backbone and where to write)."""

# ---------------------------------------------------------------- inside each child process


def instrument() -> dict[str, Any]:
    """Patch ``transformers.Trainer`` (every trainer here subclasses it and keeps these two methods) so each
    batch's tokens are counted and each optimiser step's end is stamped; returns the record it fills."""
    import torch
    from transformers import Trainer, TrainerCallback

    rec: dict[str, Any] = {"batches": [], "step_end": [], "logs": [], "rss_at_train_kb": None}

    class Stamp(TrainerCallback):
        def on_train_begin(self, args, state, control, **kw):
            rec["rss_at_train_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            if torch.cuda.is_available():
                torch.cuda.reset_peak_memory_stats()

        def on_step_end(self, args, state, control, **kw):
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            rec["step_end"].append((time.perf_counter(), time.process_time()))

        def on_train_end(self, args, state, control, **kw):
            rec["train_end"] = time.perf_counter()

        def on_log(self, args, state, control, logs=None, **kw):
            rec["logs"].append({"step": state.global_step, **(logs or {})})

    train, training_step = Trainer.train, Trainer.training_step

    def counted_train(self, *args, **kwargs):
        self.add_callback(Stamp())
        return train(self, *args, **kwargs)

    def counted_step(self, model, inputs, *args, **kwargs):
        ids = inputs["input_ids"]
        mask = inputs.get("attention_mask")
        real = mask.sum() if mask is not None else (ids != self.model.config.pad_token_id).sum()
        rec["batches"].append((self.state.global_step, real, ids.numel()))
        return training_step(self, model, inputs, *args, **kwargs)

    Trainer.train, Trainer.training_step = counted_train, counted_step
    return rec


def cuda_peak_mb() -> float | None:
    import torch

    return torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else None


def summarise(rec: dict[str, Any], warmup: int, seconds: float) -> dict[str, Any]:
    """Tokens/s over the steps after ``warmup`` (the module docstring says what counts), from what
    :func:`instrument` saw."""
    import torch

    ends = rec["step_end"]
    if len(ends) <= warmup:
        raise RuntimeError(f"{len(ends)} optimiser steps ran, fewer than --warmup {warmup} + 1")
    timed = [(int(real), numel) for step, real, numel in rec["batches"] if step >= warmup]
    wall, cpu = (ends[-1][k] - ends[warmup - 1][k] for k in (0, 1))
    tokens, padded = sum(r for r, _ in timed), sum(n for _, n in timed)
    losses = [r["loss"] for r in rec["logs"] if "loss" in r]
    return {
        "steps": len(ends),
        "timed_steps": len(ends) - warmup,
        "timed_seconds": wall,
        "tokens": tokens,
        "padded_tokens": padded,
        "tokens_per_s": tokens / wall,
        "padded_tokens_per_s": padded / wall,
        "seconds_per_step": wall / (len(ends) - warmup),
        "cpu_seconds": cpu,
        "tokens_per_cpu_s": tokens / cpu,
        "after_last_step_seconds": rec["train_end"] - ends[-1][0],
        "end_to_end_seconds": seconds,
        "threads": torch.get_num_threads(),
        "rss_at_train_mb": rec["rss_at_train_kb"] / 1024,
        "cuda_max_allocated_mb": cuda_peak_mb(),
        "losses": losses,
    }


def child_prmkit(job: dict[str, Any]) -> dict[str, Any]:
    from prmkit.formats.inputs import read_traces
    from prmkit.training import PrmConfig, train_prm

    rec = instrument()
    traces = read_traces(job["traces"])
    config = PrmConfig(
        base_model=job["base"], separator="newline", max_steps=job["max_steps"],
        batch_size=job["batch_size"], lr=job["lr"], max_length=job["max_length"], threads=job["threads"],
        seed=job["seed"], dev_fraction=job["dev_fraction"], dev_label_source=NO_DEV, resume=False,
        mixed_precision="no",
    )  # fmt: skip
    t0 = time.perf_counter()
    result = train_prm(traces, job["out"], config)
    out = summarise(rec, job["warmup"], time.perf_counter() - t0)
    if result["training"]["steps"] != job["max_steps"] or result["dev"]:
        raise RuntimeError(f"prmkit did not run as planned: {result['training']}, dev {result['dev']}")
    return out


def child_trl(job: dict[str, Any]) -> dict[str, Any]:
    import torch
    import trl
    from datasets import load_dataset
    from transformers import AutoModelForTokenClassification, AutoTokenizer
    from trl.experimental.prm import PRMConfig, PRMTrainer

    rec = instrument()
    torch.set_num_threads(job["threads"])
    torch.manual_seed(job["seed"])
    t0 = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(job["base"])
    model = AutoModelForTokenClassification.from_pretrained(job["base"], num_labels=2)
    data = load_dataset("json", data_files=job["rows"], split="train")
    config = PRMConfig(
        output_dir=job["out"], max_steps=job["max_steps"], per_device_train_batch_size=job["batch_size"],
        learning_rate=job["lr"], weight_decay=0.01, warmup_steps=0.05, lr_scheduler_type="cosine",
        max_length=job["max_length"], step_separator="\n", train_on_last_step_only=False,
        gradient_checkpointing=False, bf16=False, use_cpu=job["device"] == "cpu", report_to=[],
        save_strategy="no", eval_strategy="no", logging_steps=10, seed=job["seed"], disable_tqdm=True,
        dataloader_num_workers=0, disable_dropout=job["trl_disable_dropout"],
        train_sampling_strategy="group_by_length" if job["trl_group_by_length"] else "random",
    )  # fmt: skip
    trainer = PRMTrainer(model=model, args=config, processing_class=tokenizer, train_dataset=data)
    trainer.train()
    trainer.save_model(job["out"])
    out = summarise(rec, job["warmup"], time.perf_counter() - t0)
    if trainer.state.global_step != job["max_steps"]:
        raise RuntimeError(f"TRL ran {trainer.state.global_step} of {job['max_steps']} steps")
    return {**out, "trl": trl.__version__}


def child(side: str, job_path: str) -> None:
    import warnings

    warnings.filterwarnings("ignore")
    job = json.loads(Path(job_path).read_text())
    result = (child_prmkit if side == "prmkit" else child_trl)(job)
    Path(job["result"]).write_text(json.dumps(result))


# ---------------------------------------------------------------- the parent


def make_data(work: Path, a: argparse.Namespace) -> dict[str, Any]:
    """World traces (prmkit JSONL), the same training traces as TRL rows, and the tiny backbone folder."""
    import torch

    from prmkit.formats import write
    from prmkit.modeling import TinyConfig, build_tokenizer, causal_lm, tiny_config
    from prmkit.modeling.tokenizer import trace_texts
    from prmkit.training.data import split_by_problem
    from prmkit.worlds.arithmetic import generate_problems, gold_label, sample_traces

    traces = gold_label(sample_traces(generate_problems(a.problems, seed=a.seed, split="train"),
                                      a.per_problem, seed=a.seed))  # fmt: skip
    write(work / "traces.jsonl", traces, "prmkit")
    train, _ = split_by_problem(traces, a.dev_fraction, a.seed)  # the traces prmkit trains on
    rows = write(work / "rows.jsonl", train, "trl", source="gold").written
    if rows != len(train):
        raise RuntimeError(f"{len(train)} training traces became {rows} TRL rows: not the same data")
    tok = build_tokenizer(trace_texts(traces))
    torch.manual_seed(a.seed)
    size = TinyConfig(
        layers=a.layers, width=a.width, heads=a.heads, max_length=a.max_length, positions="rope"
    )
    base = work / "base"
    causal_lm(tiny_config(tok, size)).save_pretrained(base)  # a LlamaForCausalLM
    tok.save_pretrained(base)
    return {"traces": len(traces), "train_traces": len(train), "vocab": len(tok)}


def run_child(side: str, job: dict[str, Any], work: Path, n: int) -> dict[str, Any]:
    """One training run in a fresh process; its result with the process's peak RSS (``os.wait4``)."""
    job = {**job, "out": str(work / f"{side}-{n}"), "result": str(work / f"{side}-{n}.json")}
    job_path = work / f"{side}-{n}.job.json"
    job_path.write_text(json.dumps(job))
    env = os.environ | QUIET
    if side == "trl":  # TRL 1.13 first, .venv's trl 1.16 (no PRMTrainer) after it
        env["PYTHONPATH"] = os.pathsep.join([str(TRL), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    if job["device"] == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    log = work / f"{side}-{n}.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen([sys.executable, __file__, "--child", side, str(job_path)],
                                stdout=fh, stderr=subprocess.STDOUT, env=env)  # fmt: skip
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"the {side} run failed ({proc.returncode}):\n{log.read_text()[-4000:]}")
    return {
        "side": side,
        **json.loads(Path(job["result"]).read_text()),
        "peak_rss_mb": usage.ru_maxrss / 1024,
    }


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("prmkit", "torch", "transformers", "accelerate", "datasets")}


def show(row: dict[str, Any]) -> None:
    cuda = f" {row['cuda_max_allocated_mb']:9.0f}" if row["cuda_max_allocated_mb"] is not None else ""
    print(
        f"{row['side']:>7} {row['timed_steps']:>6} {row['timed_seconds']:>8.2f} {row['tokens']:>8} "
        f"{row['tokens_per_s']:>10,.0f} {row['padded_tokens_per_s']:>10,.0f} {row['peak_rss_mb']:>9.0f} "
        f"{row['rss_at_train_mb']:>9.0f} {row['end_to_end_seconds']:>7.1f}{cuda}",
        flush=True,
    )


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", type=int, default=64)
    ap.add_argument("--per-problem", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=16, help="traces per optimiser step, both sides")
    ap.add_argument("--max-steps", type=int, default=25, help="optimiser steps per run, both sides")
    ap.add_argument("--warmup", type=int, default=5, help="first optimiser steps left out of the timing")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--dev-fraction", type=float, default=0.01, help="prmkit's held-out share (must be > 0)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per side, interleaved")
    ap.add_argument(
        "--threads", type=int, default=1, help="torch threads of each run (the docstring says why 1)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--trl-group-by-length", action="store_true", help="TRL batches by length as prmkit does")
    ap.add_argument(
        "--trl-disable-dropout", action="store_true", help="TRL's default: no dropout (prmkit's on)"
    )
    ap.add_argument("--out", type=Path, help="default bench/results/train-<device>-<date>.json")
    ap.add_argument("--child", nargs=2, metavar=("SIDE", "JOB"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if not a.child and not 1 <= a.warmup < a.max_steps:
        ap.error("--warmup must be at least 1 and less than --max-steps (the timing starts at a step's end)")
    return a


def medians(runs: list[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], dict[str, float]]:
    """Per side, the median of each of :data:`MEDIANS` (and the largest CUDA peak); the ratios of the
    medians, prmkit / TRL."""
    med: dict[str, dict[str, Any]] = {}
    for side in ("prmkit", "trl"):
        mine = [r for r in runs if r["side"] == side]
        med[side] = {key: statistics.median(r[key] for r in mine) for key in MEDIANS}
        cuda = [r["cuda_max_allocated_mb"] for r in mine]
        med[side]["cuda_max_allocated_mb"] = max(cuda) if None not in cuda else None
    ratios = {f"ratio_{key}": med["prmkit"][key] / med["trl"][key]
              for key in ("tokens_per_s", "tokens_per_cpu_s", "padded_tokens_per_s")}  # fmt: skip
    return med, ratios


def main() -> None:
    a = parse_args()
    os.environ.update(QUIET)
    if a.child:
        child(*a.child)
        return
    if not (TRL / "trl" / "experimental" / "prm").is_dir():
        print(
            f"TRL 1.13 is missing ({TRL.relative_to(ROOT)}/): run `make trl-prm-env` to install it; skipped"
        )
        return
    load0, version = os.getloadavg()[0], code_version()
    with tempfile.TemporaryDirectory(prefix="bench-train-") as tmp:
        work = Path(tmp)
        data = make_data(work, a)
        job = {k: v for k, v in vars(a).items() if k in JOB} | {
            "base": str(work / "base"), "traces": str(work / "traces.jsonl"), "rows": str(work / "rows.jsonl")
        }  # fmt: skip
        sampling = "by length" if a.trl_group_by_length else "random"
        print(
            f"{data['train_traces']} training traces ({data['traces']} made), vocab {data['vocab']}, Llama "
            f"{a.layers}x{a.width}, batch {a.batch_size}, {a.max_steps} optimiser steps ({a.warmup} warm-up "
            f"untimed), {a.threads} threads, {a.device}, fp32, TRL's batches {sampling}, TRL's dropout "
            f"{'off' if a.trl_disable_dropout else 'on'}; load average "
            f"{load0:.2f} at start (shared machine)"
        )
        print(f"\n{'side':>7} {'steps':>6} {'seconds':>8} {'tokens':>8} {'tokens/s':>10} {'padded/s':>10} "
              f"{'peak MB':>9} {'@train MB':>9} {'e2e s':>7}{' cuda MB' if a.device == 'cuda' else ''}")  # fmt: skip
        runs = []
        for n in range(a.repeats):
            for side in ("prmkit", "trl"):
                runs.append(run_child(side, job, work, n))
                show(runs[-1])
    med, ratios = medians(runs)
    ours, trl = med["prmkit"], med["trl"]
    print(
        f"\nmedian tokens/s: prmkit {ours['tokens_per_s']:,.0f}, TRL {trl['tokens_per_s']:,.0f}; ratio prmkit / "
        f"TRL {ratios['ratio_tokens_per_s']:.2f} (goal >= 1.0); per CPU-second "
        f"{ratios['ratio_tokens_per_cpu_s']:.2f}; padded tokens/s {ratios['ratio_padded_tokens_per_s']:.2f}"
    )
    print(
        f"median peak RSS: prmkit {ours['peak_rss_mb']:,.0f} MB, TRL {trl['peak_rss_mb']:,.0f} MB (when "
        f"training began: {ours['rss_at_train_mb']:,.0f} / {trl['rss_at_train_mb']:,.0f})"
    )
    load1 = os.getloadavg()[0]
    record = {
        "versions": {**versions(), "trl": runs[1].get("trl"), "python": platform.python_version()},
        **version,
        "cpus": os.cpu_count(),
        "threads": a.threads,
        "shared_machine": True,
        "load_avg_start": load0,
        "load_avg_end": load1,
        "settings": {k: v for k, v in vars(a).items() if k not in ("out", "child")},
        "data": data,
        "measured": "non-pad tokens of optimiser steps warmup+1..max_steps / wall seconds from the end of "
        "step warmup to the end of the last step (batch fetch + collate + forward + backward + optimiser)",
        "median": med,
        **ratios,
        "goal": "ratio_tokens_per_s >= 1.0",
        "runs": runs,
    }
    out = a.out or ROOT / "bench" / "results" / f"train-{a.device}-{datetime.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    print(f"load average {load1:.2f} at the end; wrote {shown}")


if __name__ == "__main__":
    main()

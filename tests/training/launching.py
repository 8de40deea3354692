"""What the tests of launched runs share: a dropout-free tiny backbone (with the traces it was made for,
built once per test run: :func:`inputs`), ``accelerate launch`` of prmkit's command line through
``dist_run.py``, the writes each rank recorded, and one uninterrupted launch of two processes that two
test files compare with (built once per test run: :func:`two_processes_whole`)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import torch

from prmkit.core.dataset import write_traces
from prmkit.core.model import Trace
from prmkit.modeling import TinyConfig
from prmkit.modeling.backbone import tiny_config
from prmkit.modeling.tokenizer import build_tokenizer, trace_texts
from tests.run_cache import once
from tests.serving.conftest import free_port
from tests.training.conftest import world_traces

ROOT = Path(__file__).resolve().parents[2]
DDP = ROOT / "recipes" / "accelerate" / "ddp.yaml"
TINY = TinyConfig(layers=1, width=64, heads=2, max_length=512, positions="rope")
PER_RANK_FILES = ("rng_state_1.pth", "prmkit_order_rng_1.safetensors")
"""What rank 1 writes itself, inside each checkpoint: its own RNG states, which only it holds."""


def backbone(folder: Path, traces: Sequence[Trace]) -> Path:
    """A tiny causal-LM folder without dropout (its token classifier's too): each rank draws its own
    dropout masks, so only a model without dropout can equal a one-process run."""
    from transformers import AutoModelForCausalLM

    tok = build_tokenizer(trace_texts(traces))
    config = tiny_config(tok, TINY)
    config.classifier_dropout = 0.0
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def inputs() -> tuple[Path, Path]:
    """World traces on disk (30 problems x 4, seed 0) and :func:`backbone` on them, built once per test run
    for every launched-run test (none writes into them)."""

    def build(folder: Path) -> None:
        traces = world_traces(30, 4, seed=0)
        write_traces(folder / "traces.jsonl", traces)
        backbone(folder / "backbone", traces)

    folder = once("training/launch-inputs", build)
    return folder / "traces.jsonl", folder / "backbone"


def train_args(out: Path, data: Path, base: Path, batch: int, accumulate: int, steps: int = 10) -> list[str]:
    """``prmkit train prm`` of :func:`inputs`' traces on a backbone, as the launched-training tests run it."""
    return ["train", "prm", str(data), "-o", str(out), "--base-model", str(base), "--batch-size", str(batch),
            "--grad-accum", str(accumulate), "--max-steps", str(steps), "--eval-every", "5", "--threads", "1",
            "--max-length", "256"]  # fmt: skip


WHOLE_STEPS = 20
"""Steps of :func:`two_processes_whole`: two passes over :func:`inputs`' training traces (13 steps a pass
at 2 x 4 traces a step), so a run killed at checkpoint 10 resumes mid-pass and crosses into the next."""


def two_processes_whole() -> Path:
    """The output folder of one uninterrupted launch of two processes (batch 4 each, no accumulation,
    :data:`WHOLE_STEPS` steps, dev scored every 5), each rank's writes recorded beside it (:func:`writes`):
    built once per test run and read by both tests/training/test_distributed.py (one writer, equal to one
    process) and tests/training/test_distributed_resume.py (a killed launch resumes to it). A launch costs
    ~15 s of interpreter start-ups for under a second of training; none writes into it."""
    data, base = inputs()

    def build(folder: Path) -> None:
        out = folder / "two"
        done = launch(2, out, train_args(out, data, base, batch=4, accumulate=1, steps=WHOLE_STEPS))
        assert done.returncode == 0, done.stderr[-4000:]
        assert done.stdout.count("output_dir:") == 1  # the result is printed once

    return once("training/two-processes-whole", build) / "two"


def _command(processes: int, watched: Path, args: list[str]) -> tuple[list[str], dict[str, str]]:
    command = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(DDP),
               "--num_processes", str(processes), "--main_process_port", str(free_port()),
               str(ROOT / "tests" / "training" / "dist_run.py"), str(watched), *args]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    return command, env


def launch(processes: int, watched: Path, args: list[str], timeout: int = 900) -> subprocess.CompletedProcess:
    """``accelerate launch --config_file recipes/accelerate/ddp.yaml --num_processes N`` of ``prmkit
    ARGS``, as a user launches it, each rank recording its writes under ``watched`` (:func:`writes`)."""
    command, env = _command(processes, watched, args)
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def killed_when(processes: int, watched: Path, args: list[str], saved: Path, timeout: float = 600) -> int:
    """:func:`launch`, every process of it (launcher and ranks) SIGKILLed as soon as ``saved`` exists, as
    a machine that loses power kills them; returns the launcher's exit code."""
    import psutil

    command, env = _command(processes, watched, args)
    run = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while not saved.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    family = [*psutil.Process(run.pid).children(recursive=True), psutil.Process(run.pid)]
    for proc in family:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.send_signal(signal.SIGKILL)
    return run.wait(timeout=60)


def writes(watched: Path, rank: int) -> list[list[str]]:
    """``[event, path under watched]`` of every write, rename or removal rank ``rank`` made there."""
    return json.loads(watched.with_name(f"{watched.name}.rank{rank}.json").read_text())


def strays(watched: Path) -> list[list[str]]:
    """What rank 1 wrote under ``watched`` besides its own RNG states and the folders it made."""
    return [w for w in writes(watched, 1) if not w[1].endswith(PER_RANK_FILES) and w[0] != "os.mkdir"]

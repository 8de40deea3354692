"""What the tests of launched runs share: a dropout-free tiny backbone, ``accelerate launch`` of
prmkit's command line through ``dist_run.py``, and the writes each rank recorded."""

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

from prmkit.core.model import Trace
from prmkit.modeling import TinyConfig
from prmkit.modeling.backbone import tiny_config
from prmkit.modeling.tokenizer import build_tokenizer, trace_texts
from tests.serving.conftest import free_port

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

"""CPU training's heap (``training/heap.py``): freed memory kept for the next step while training on the CPU,
glibc's settings handed back afterwards, nothing done elsewhere."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from prmkit.modeling import TinyConfig
from prmkit.training import PrmConfig, heap, loop, train_prm

from .conftest import world_traces


class FakeLibc:
    def __init__(self, takes: int = 1) -> None:
        self.calls: list[tuple] = []
        self.takes = takes

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append(("mallopt", param, value))
        return self.takes

    def malloc_trim(self, pad: int) -> int:
        self.calls.append(("malloc_trim", pad))
        return 1


def test_kept_heap_raises_the_thresholds_and_hands_them_back_even_after_an_error():
    libc = FakeLibc()
    with pytest.raises(RuntimeError), heap.kept_heap(True, libc) as kept:
        assert kept
        assert libc.calls == [("mallopt", heap.M_MMAP_THRESHOLD, heap.MMAP_CEILING),
                              ("mallopt", heap.M_TRIM_THRESHOLD, heap.TRIM_WHILE_TRAINING)]  # fmt: skip
        raise RuntimeError("a step failed")
    assert libc.calls[2:] == [("mallopt", heap.M_TRIM_THRESHOLD, 2 * heap.MMAP_CEILING), ("malloc_trim", 0)]


def test_kept_heap_does_nothing_off_the_cpu_or_where_mallopt_refuses():
    libc = FakeLibc()
    with heap.kept_heap(False, libc) as kept:
        assert not kept
    assert libc.calls == []
    refusing = FakeLibc(takes=0)
    with heap.kept_heap(True, refusing) as kept:
        assert not kept
    assert refusing.calls == [("mallopt", heap.M_MMAP_THRESHOLD, heap.MMAP_CEILING)]


STEPS = """
import resource, torch
from prmkit.training import heap

def step():
    held = [torch.ones(n) for n in (2**20, 3 * 2**19, 2**21, 2**18, 5 * 2**18)]
    del held

with heap.kept_heap(True):
    for _ in range(2):  # the heap grows
        step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        step()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(heap.glibc() is None, reason="glibc's mallopt only")
def test_steps_inside_the_kept_heap_reuse_their_pages():
    """Steps that each hold 24 MiB of tensors of five sizes at once, then free them: once the heap has
    grown, twenty steps together fault in fewer pages than one step holds (6,144 of 4 KiB), where a heap
    handing its pages back faults them in again at every step. In a fresh interpreter, as a training run
    starts: a test worker's heap, fragmented by the tests before, faulted 7,428 pages once (CI, stop 67),
    a fresh one faults about 256."""
    done = subprocess.run(
        [sys.executable, "-c", STEPS], capture_output=True, text=True, timeout=120, check=True
    )
    assert int(done.stdout.split()[-1]) < 6144


def test_training_steps_run_inside_the_kept_heap_on_the_cpu(tmp_path, monkeypatch):
    entered = []
    kept = heap.kept_heap

    def recording(on_cpu, libc=None):
        entered.append(on_cpu)
        return kept(on_cpu, libc)

    monkeypatch.setattr(loop, "kept_heap", recording)
    tiny = TinyConfig(layers=1, width=32, heads=2, max_length=256, positions="rope")
    config = PrmConfig(tiny=tiny, max_steps=2, batch_size=4, threads=1, resume=False)
    train_prm(world_traces(6, 2, seed=0), tmp_path / "prm", config)
    assert entered == [not torch.accelerator.is_available()]

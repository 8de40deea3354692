"""CPU training's heap: the memory one optimiser step frees is kept for the next, not handed back to the OS.

Every step on the CPU allocates and frees the same activations and gradients (a few MiB each). glibc's
malloc serves blocks that size by ``mmap``, or from the top of its heap, which it trims back to the OS
whenever more than ``M_TRIM_THRESHOLD`` lies free there; either way the next step maps the pages again,
one page fault and a page of zeros per 4 KiB, all of it kernel time inside the step. While
:func:`kept_heap` is open, blocks up to glibc's ceiling (32 MiB) come from the heap and the heap is not
trimmed, so a step reuses the last step's pages. ``bench/bench_train.py`` measures what that is worth
against TRL's ``PRMTrainer``, which leaves glibc's defaults (``docs/models.md``, "Training throughput").

It changes where memory comes from, never what is computed. Only on glibc (Linux) and only for a run
that computes on the CPU; elsewhere it does nothing. On leaving, the trim threshold is set to what
glibc's own sliding rule sets beside a 32 MiB mmap threshold (twice it), and ``malloc_trim(0)`` hands the
free heap back.
"""

from __future__ import annotations

import contextlib
import ctypes
import platform
from collections.abc import Iterator
from typing import Any

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
"""``mallopt`` parameters (glibc's ``malloc.h``)."""
MMAP_CEILING = 32 * 2**20
"""The largest ``M_MMAP_THRESHOLD`` glibc takes on 64-bit (``DEFAULT_MMAP_THRESHOLD_MAX``)."""
TRIM_WHILE_TRAINING = 2**31 - 1
"""``M_TRIM_THRESHOLD`` while training (``mallopt`` takes an ``int``): the heap is never trimmed."""


def glibc() -> Any:
    """The process's C library when it is glibc with ``mallopt`` and ``malloc_trim``, else None."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


@contextlib.contextmanager
def kept_heap(on_cpu: bool, libc: Any = None) -> Iterator[bool]:
    """Keep freed memory in the heap for the block's length when ``on_cpu`` (the module docstring says
    why); yields whether it does. ``libc``: the C library to set (default :func:`glibc`)."""
    libc = (libc or glibc()) if on_cpu else None
    if libc is None or not libc.mallopt(M_MMAP_THRESHOLD, MMAP_CEILING):
        yield False
        return
    libc.mallopt(M_TRIM_THRESHOLD, TRIM_WHILE_TRAINING)
    try:
        yield True
    finally:
        libc.mallopt(M_TRIM_THRESHOLD, 2 * MMAP_CEILING)
        libc.malloc_trim(0)

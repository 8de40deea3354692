"""Shared fixtures: where the real data samples live, and small helpers every test area uses."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.run_cache import RUN_CACHE

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PRMKIT_SHARED", REPO.parent / "shared"))
REAL = SHARED / "data" / "real"
_OWNED = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """Under ``pytest -n N`` (``make test``), each worker's torch (and its subprocesses') gets its share of
    the cores: N workers each using every core would only fight over them. The controller makes the run's
    shared cache (tests/run_cache.py), which its workers inherit."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        share = str(max(1, len(os.sched_getaffinity(0)) // workers))
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, share)
    if RUN_CACHE not in os.environ:  # the controller (or a run without -n); the workers inherit it
        os.environ[RUN_CACHE] = tempfile.mkdtemp(prefix="prmkit-test-run-")
        config.stash[_OWNED] = os.environ[RUN_CACHE]


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run's shared cache goes with the run that made it."""
    owned = config.stash.get(_OWNED, None)
    if owned is not None:
        shutil.rmtree(owned, ignore_errors=True)
        os.environ.pop(RUN_CACHE, None)


@pytest.fixture(scope="session")
def real_data() -> Path:
    """``../shared/data/real``: verbatim samples of the field's formats (read in place, never copied)."""
    if not REAL.is_dir():
        pytest.fail(f"real data samples not found at {REAL}; CI clones the repo with shared/ beside it")
    return REAL

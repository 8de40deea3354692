"""Shared fixtures: where the real data samples live, and small helpers every test area uses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PRMKIT_SHARED", REPO.parent / "shared"))
REAL = SHARED / "data" / "real"


def pytest_configure(config: pytest.Config) -> None:
    """Under ``pytest -n N`` (``make test``), each worker's torch (and its subprocesses') gets its share of
    the cores: N workers each using every core would only fight over them."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        share = str(max(1, len(os.sched_getaffinity(0)) // workers))
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, share)


@pytest.fixture(scope="session")
def real_data() -> Path:
    """``../shared/data/real``: verbatim samples of the field's formats (read in place, never copied)."""
    if not REAL.is_dir():
        pytest.fail(f"real data samples not found at {REAL}; CI clones the repo with shared/ beside it")
    return REAL

"""Fixtures of the evaluation tests (the hand-built traces and scores live in worldlike.py)."""

from __future__ import annotations

import pytest

from prmkit.core.model import Trace

from .worldlike import synthetic_world


@pytest.fixture(scope="module")
def world_traces() -> list[Trace]:
    return synthetic_world()

"""The embedded world's simulated policy and judge, registered like any other backend."""

from __future__ import annotations

from typing import Any


def make_world_policy(**options: Any):
    """A ``prmkit.world.WorldPolicy``; ``options`` are fields of ``prmkit.world.PolicyConfig``."""
    from prmkit.world import PolicyConfig, WorldPolicy

    return WorldPolicy(PolicyConfig(**options)) if options else WorldPolicy()


def make_world_judge(**options: Any):
    """A ``prmkit.world.SimulatedJudge``; ``options`` go to its constructor (miss / false-alarm rates, seed)."""
    from prmkit.world import SimulatedJudge

    return SimulatedJudge(**options)

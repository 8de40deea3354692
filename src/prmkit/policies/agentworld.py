"""The agent world's simulated agent and judge, registered like any other backend."""

from __future__ import annotations

from typing import Any


def make_agent_policy(**options: Any):
    """A ``prmkit.agentworld.SimulatedAgent``; ``options`` are fields of ``prmkit.agentworld.AgentConfig``."""
    from prmkit.agentworld import AgentConfig, SimulatedAgent

    return SimulatedAgent(AgentConfig(**options)) if options else SimulatedAgent()


def make_agent_judge(**options: Any):
    """A ``prmkit.agentworld.AgentJudge``; ``options`` go to its constructor (miss / false-alarm rates, seed)."""
    from prmkit.agentworld import AgentJudge

    return AgentJudge(**options)

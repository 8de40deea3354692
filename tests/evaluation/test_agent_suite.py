"""The evaluation suite on agent trajectories adds AgentProcessBench's step metrics beside first-error F1."""

from __future__ import annotations

from prmkit.evaluation.suite import agent_step_metrics, world_traces
from prmkit.worlds.agent import AgentOracleScorer


def test_the_checker_names_every_first_error_and_math_traces_get_no_agent_metrics() -> None:
    test = world_traces(12, 4, 0, "test", world="agentworld")
    heldout = world_traces(6, 2, 0, "heldout", world="agentworld")
    metrics = agent_step_metrics(AgentOracleScorer(), test, heldout, 4, 0.5)
    assert metrics is not None and set(metrics) == {"world-test", "world-heldout", "AVG"}
    assert all(m["firsterroracc"] == 1.0 for m in metrics.values())  # the oracle is the first-error truth
    # but not every step's: after a first error it says -1 everywhere, while gold rates recovered steps +1
    assert all(0.5 < m["step_micro_acc"] < 1.0 for m in metrics.values())
    math = world_traces(6, 2, 0, "test")
    assert agent_step_metrics(AgentOracleScorer(), math, math, 2, 0.5) is None

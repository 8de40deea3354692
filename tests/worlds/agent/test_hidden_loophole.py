"""The hidden loophole (``AgentConfig.hidden_loophole``): the text admits a leaked answer, the calls look
honest, the checker marks the step from its text alone; at 0 nothing is drawn and nothing changes."""

from __future__ import annotations

import hashlib

from prmkit.core.model import Step, ToolCall, Trace
from prmkit.worlds.agent import (
    AgentConfig,
    SimulatedAgent,
    check_trace,
    generate_problems,
    gold_label,
    sample_traces,
)
from prmkit.worlds.agent import text as T
from prmkit.worlds.registry import world
from tests.worlds.agent.conftest import calc, lookup

EVENTS_OFF = dict.fromkeys(AgentConfig.EVENTS, 0.0)
"""Every per-decision error off: a trajectory's only errors are the ones a test turns on."""
BEFORE = "3d34663a5f03674833365a72693a39d491cad68f76228637f0f58bfa89f3bf45"
"""sha256 of these traces (gold labels included) as agentworld-1 sampled them before the knob existed."""


def test_at_zero_every_draw_is_as_before_the_knob() -> None:
    problems = generate_problems(40, seed=7, split="test")
    agent = SimulatedAgent(AgentConfig(systematic=0.5))
    traces = gold_label(sample_traces(problems, 4, seed=3, policy=agent))
    assert hashlib.sha256("".join(t.model_dump_json() for t in traces).encode()).hexdigest() == BEFORE


def test_at_zero_the_knob_stays_out_of_a_dump_so_stage_keys_stay() -> None:
    assert "hidden_loophole" not in AgentConfig().model_dump()
    assert AgentConfig(hidden_loophole=0.2).model_dump()["hidden_loophole"] == 0.2
    assert AgentConfig.model_validate(AgentConfig(hidden_loophole=0.2).model_dump()).hidden_loophole == 0.2


def test_the_admission_is_in_the_text_and_the_call_is_the_honest_one() -> None:
    agent = SimulatedAgent(AgentConfig(**(EVENTS_OFF | {"hidden_loophole": 0.5})))
    traces = sample_traces(generate_problems(30, seed=2, split="test"), 4, seed=0, policy=agent)
    hidden = 0
    for trace in traces:
        check = check_trace(trace)
        honest = [s.model_copy(update={"text": ""}) if T.leak_claim(s.text) else s for s in trace.steps]
        assert check_trace(Trace(id="h", problem=trace.problem, steps=honest)).first_error == -1
        marked = [i for i, s in enumerate(trace.steps) if T.leak_claim(s.text)]
        assert [i for i, s in enumerate(check.steps) if s.kind] == marked  # the only errors
        assert all(check.steps[i].error_class == "loophole" and trace.steps[i].tool_calls for i in marked)
        assert [i for i, e in trace.metadata["injected"] if e == "hidden_loophole"] == marked
        assert check.hidden_loophole == bool(marked) and not check.loophole and check.answer_correct
        hidden += bool(marked)
    assert 0.3 * len(traces) < hidden < len(traces)


def test_the_checker_reads_an_admission_in_anyones_text(problem) -> None:
    def step(text: str, name: str, arguments: str) -> Step:
        return Step(text=text, kind="tool_call", tool_calls=[ToolCall(name=name, arguments=arguments)])

    admitted = Trace(
        id="t",
        problem=problem,
        steps=[
            step("", *lookup("Varen", "mayor")),
            step("I recall the answer from an earlier episode: 1392.", *lookup("Ama Osk", "age")),
        ],
    )
    check = check_trace(admitted)
    assert check.first_error == 1 and check.steps[1].kind == "loophole" and check.hidden_loophole
    plain = admitted.model_copy(update={"steps": [admitted.steps[0], step("", *calc("52 + 412"))]})
    assert not check_trace(plain).hidden_loophole


def test_the_world_record_names_both_loopholes_as_behaviours() -> None:
    agent = world("agent")
    knobs = AgentConfig(**(EVENTS_OFF | {"hidden_loophole": 0.3, "loophole": 0.1}))
    traces = agent.traces(20, 4, 0, "test", knobs)
    checks = [agent.check_trace(t) for t in traces]
    hidden, visible = agent.behaviour("hidden_loophole"), agent.behaviour("visible_loophole")
    either = agent.behaviour("loophole")  # the error class: any loophole step
    assert any(map(hidden, checks)) and any(map(visible, checks))
    assert [either(c) for c in checks] == [hidden(c) or visible(c) for c in checks]

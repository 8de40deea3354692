"""A world problem's graph read back from its words equals the one the generator stored, at every phrasing
level, so text-only clients (OpenRLHF on ``prmkit serve world-oracle``) get gold scores."""

from __future__ import annotations

import pytest

from prmkit.core.model import Problem, Trace
from prmkit.world import WorldConfig, check_trace, generate_problems, sample_traces
from prmkit.world.parse import graph_from_text


@pytest.mark.parametrize("variety", [0, 1, 2])
def test_graph_from_text_matches_the_generator(variety):
    config = WorldConfig(phrasing_variety=variety, distractor_prob=0.5)
    problems = generate_problems(300, seed=variety, config=config)
    assert sum(p.metadata["graph"]["distractor"] is not None for p in problems) > 50
    for p in problems:
        stored, read = p.metadata["graph"], graph_from_text(p.text)
        assert read is not None, p.text
        assert read["quantities"] == stored["quantities"], p.text
        assert read["ops"] == stored["ops"], p.text
        assert read["distractor"] == stored["distractor"], p.text


@pytest.mark.parametrize(
    "text",
    [
        "",
        "What is 2 + 3?",
        "Ann has 4 apples. She flies to the moon. How many apples does Ann have now?",
        "Ann has 4 apples. How many apples does Ann have now?",  # no operation
        "Ann has 4 apples. She gets 3 more apples.",  # no question
    ],
)
def test_text_that_is_not_a_world_problem_gives_none(text):
    assert graph_from_text(text) is None


def test_checker_judges_a_world_problem_sent_as_text_only():
    traces = sample_traces(generate_problems(20, seed=4), 2, seed=4)
    for t in traces:
        bare = Trace(id=t.id, problem=Problem(id=t.problem.id, text=t.problem.text), steps=t.steps,
                     final_answer=t.final_answer)  # fmt: skip
        assert check_trace(bare).first_error == check_trace(t).first_error


def test_checker_still_refuses_other_text():
    bare = Trace(id="t", problem=Problem(id="p", text="What is 2 + 3?"), steps=[], final_answer="5")
    with pytest.raises(ValueError, match="not a world problem"):
        check_trace(bare)

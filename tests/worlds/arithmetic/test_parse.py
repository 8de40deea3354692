"""A world problem's graph read back from its words equals the one the generator stored, at every phrasing
level, so text-only clients (OpenRLHF on ``prmkit serve arithmetic-oracle``) get gold scores; also where a
trainer wraps the problem in its instructions (issue 36), with the exact strings verl and OpenRLHF use."""

from __future__ import annotations

import pytest

from prmkit.core.model import Problem, Trace
from prmkit.worlds.arithmetic import WorldConfig, check_trace, generate_problems, sample_traces
from prmkit.worlds.arithmetic.parse import find_problem, graph_from_text

VERL_MATH = "Let's think step by step and output the final answer within \\boxed{}."
"""verl's ``examples/data_preprocess/math_dataset.py`` (``instruction_following``, v0.6.0 to v0.7.0 and
main at b178a3cd): ``question + " " + instruction_following``."""
VERL_GSM8K = 'Let\'s think step by step and output the final answer after "####".'
"""verl's ``examples/data_preprocess/gsm8k.py``, the same way."""
OPENRLHF_INPUT_TEMPLATE = "User: {}\nAssistant: "
"""OpenRLHF 0.11.0's README example of ``--data.input_template`` (``prompts_dataset.preprocess_data``
formats the problem into it)."""
OPENRLHF_QWEN3 = (
    "<|im_start|>user\nQuestion: {problem}"
    "\nPlease reason step by step, and put your final answer within \\boxed{}.<|im_end|>\n"
    "<|im_start|>assistant\n"
)
"""OpenRLHF 0.11.0's ``examples/python/agent_func_gem_multiturn.py``, ``apply_qwen3_general_template``
(an f-string there: ``{question}`` where this has ``{problem}``)."""
WRAPPERS = {
    "bare": "{problem}",
    "verl_math": "{problem} " + VERL_MATH,
    "verl_gsm8k": "{problem} " + VERL_GSM8K,
    "openrlhf_input_template": OPENRLHF_INPUT_TEMPLATE.format("{problem}"),
    "openrlhf_qwen3": OPENRLHF_QWEN3,
    "system_line_before": "You are a careful math tutor. Answer briefly.\n{problem}",
    "both_sides": 'Solve this problem:\n"{problem}"\n' + VERL_MATH,
}
"""How trainers wrap a problem: ``wrap(name, problem)``."""


def wrap(name: str, problem: str) -> str:
    """``problem`` as the trainer ``name`` of :data:`WRAPPERS` hands it to a reward."""
    return WRAPPERS[name].replace("{problem}", problem)


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


@pytest.mark.parametrize("wrapper", list(WRAPPERS))
@pytest.mark.parametrize("variety", [0, 2])
def test_a_problem_wrapped_in_instructions_is_found_intact(wrapper: str, variety: int) -> None:
    config = WorldConfig(phrasing_variety=variety, distractor_prob=0.5)
    for p in generate_problems(60, seed=10 + variety, config=config):
        found = find_problem(wrap(wrapper, p.text))
        assert found is not None, wrap(wrapper, p.text)
        text, graph = found
        assert text == p.text
        stored = p.metadata["graph"]
        assert (graph["quantities"], graph["ops"], graph["distractor"]) == (
            stored["quantities"], stored["ops"], stored["distractor"],
        )  # fmt: skip


PROBLEM = "Ann has 4 apples. She gets 3 more apples. How many apples does Ann have now?"


@pytest.mark.parametrize(
    "text",
    [
        "Suppose " + PROBLEM,  # its first sentence is part of a longer one
        "Ann has 4 apples. She gets 3 more apples. Think hard. How many apples does Ann have now?",
        "Ann has 4 apples, she gets 3 more apples. How many apples does Ann have now?",
        PROBLEM.replace("?", "") + " " + VERL_MATH,  # the question cut off
        VERL_MATH,
    ],
)
def test_a_problem_not_intact_is_not_found(text: str) -> None:
    assert find_problem(text) is None and graph_from_text(text) is None


def test_two_different_problems_are_refused_and_one_twice_is_one() -> None:
    other = PROBLEM.replace("4 apples", "5 apples")
    few_shot = f"Example: {other}\nThe answer is 8.\nNow you: {PROBLEM} {VERL_MATH}"
    with pytest.raises(ValueError, match=r"2 different world problems \('Ann has 5 apples"):
        find_problem(few_shot)
    assert find_problem(f"{PROBLEM}\nAgain: {PROBLEM}") == find_problem(PROBLEM)

from __future__ import annotations

import pytest

from prmkit.core.model import Problem, Step
from prmkit.core.steps import StepFormat, last_boxed
from prmkit.policies import POLICIES, load_policy
from prmkit.policies.options import JudgeOptions, PolicyOptions

P = Problem(id="p", text="Ann has 3 apples. She gets 4 more. How many?", answer="7")


def test_prompt_and_parse_round_trip():
    fmt = StepFormat()
    prefix = [Step(text="She gets 4 more, so 3 + 4 = 7 apples.")]
    prompt = fmt.prompt(P, prefix)
    assert prompt == P.text + "\n" + prefix[0].text + "\n"
    problem, steps = fmt.split_prompt(prompt, {P.text: P})
    assert problem is P and [s.text for s in steps] == [prefix[0].text]
    cont = fmt.parse("Step two here.\nThe answer is 7.\nextra junk after the answer")
    assert [s.text for s in cont.steps] == ["Step two here.", "The answer is 7."]
    assert cont.final_answer == "7" and cont.finished
    unfinished = fmt.parse("one\ntwo\nthr", max_steps=2)
    assert [s.text for s in unfinished.steps] == ["one", "two"] and not unfinished.finished
    assert fmt.split_prompt("Someone else's problem\n", {P.text: P}) is None


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("so the answer is \\boxed{\\frac{1}{2}} indeed", "\\frac{1}{2}"),
        ("The final answer is: 42", "42"),
        ("#### 1,000", "1,000"),
        ("The answer is $18$.", "18"),
        ("no answer here", None),
    ],
)
def test_answer_reader(text, answer):
    assert StepFormat().answer_in(text) == answer


def test_last_boxed_balances_braces():
    assert last_boxed("\\boxed{1} then \\boxed{{a}+{b}}") == "{a}+{b}"
    assert last_boxed("\\boxed{unclosed") is None


def test_registries_and_options_fail_clearly():
    assert {"arithmetic", "agent", "hf", "endpoint"} <= set(POLICIES.names())
    assert POLICIES.canonical("world") == "arithmetic" and "world" in POLICIES  # the old name, still read
    with pytest.raises(KeyError, match="Did you mean 'endpoint'"):
        load_policy("endpoints")
    with pytest.raises(ValueError, match="needs --url and --model"):
        PolicyOptions(policy="endpoint")
    with pytest.raises(ValueError, match="only used by policy 'endpoint'"):
        PolicyOptions(policy="arithmetic", url="http://x")
    with pytest.raises(ValueError, match="judge 'endpoint' needs"):
        JudgeOptions(judge="endpoint")
    assert PolicyOptions(step_separator="\\n\\n").step_separator == "\n\n"
    with pytest.raises(ValueError, match="group capturing the answer"):
        PolicyOptions(answer_pattern="answer is")
    custom = PolicyOptions(
        policy="endpoint", url="http://x", model="m", prompt_template="Q: {problem}\\nA:\\n"
    )
    assert custom.build_policy().format.prompt(P, []) == f"Q: {P.text}\nA:\n"
    assert load_policy("world").name == "world"

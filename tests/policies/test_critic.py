from __future__ import annotations

import pytest

from prmkit.core.model import Step
from prmkit.policies.critic import (
    CRITIC_TEMPLATE,
    critic_prompt,
    parse_first_error,
    read_critic_prompt,
    verdict_from_first_error,
)

STEPS = [Step(text="a = 1"), Step(text="b = a + 1 = 3"), Step(text="The answer is 3.")]


@pytest.mark.parametrize(
    ("raw", "index"),
    [
        ("Paragraph 1 is wrong.\n\n\\boxed{1}", 1),
        ("first \\boxed{0}, on reflection \\boxed{ -1 }", -1),
        ("**Final answer**: $\\boxed{2}$", 2),
        ("The earliest error is in paragraph 2.", None),  # no box: a miss, not "no error"
        ("\\boxed{two}", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_first_error_tolerates_junk(raw, index):
    assert parse_first_error(raw) == index


@pytest.mark.parametrize(
    ("raw", "index"),
    [
        ("paragraph 1 looks wrong: \\boxed{1}. Final answer: \\boxed{x}", None),
        ("\\boxed{1}\n\nFinal: \\boxed{\\text{none}}", None),
        ("\\boxed{$2$}", None),
        ("\\boxed{ +2 }", 2),
        ("\\boxed{-1}", -1),
    ],
)
def test_parse_first_error_reads_the_last_box_as_the_official_script(raw, index):
    r"""Only the last ``\boxed{}`` is the critic's answer; a non-integer there is no prediction.

    QwenLM/ProcessBench ``code/run_eval.py`` (commit e8024636bcabdf8bd514440551b531d3f90dd18b)::

        boxed_pattern = r'\\boxed\{([^}]*)\}'
        matches = re.findall(boxed_pattern, solution_text)
        if matches:
            return matches[-1].strip()
        return None
        ...
        pred = extract_answer(generated_critique)
        try:
            pred = int(pred)
        except:
            pred = None

    so an earlier integer box is never taken when the last box holds something else.
    """
    assert parse_first_error(raw) == index


def test_verdicts_from_indices():
    assert verdict_from_first_error(1, 3, "r").ratings == [1, -1, None]
    assert verdict_from_first_error(-1, 3, "r").ratings == [1, 1, 1]
    for bad, status in ((None, "unparseable"), (3, "out_of_range"), (-2, "out_of_range")):
        v = verdict_from_first_error(bad, 3, "r")
        assert v.ratings == [None] * 3 and v.extra["status"] == status and v.raw == "r"


@pytest.mark.parametrize("raw", ["I cannot help with that.", "", "\\boxed{7}", "\\boxed{-2}"])
def test_no_index_is_never_the_verdict_no_error(raw):
    """An answer without a usable index gives first_error None, never -1 ("no error").

    QwenLM/ProcessBench ``code/run_eval.py`` (commit e8024636bcabdf8bd514440551b531d3f90dd18b) keeps
    ``pred = None`` for such an answer and scores ``d['match'] = (pred == d['label'])``, which is False
    for every label, -1 included; an out-of-range integer likewise never equals a label.
    """
    v = verdict_from_first_error(parse_first_error(raw), 3, raw)
    assert v.first_error is None and v.first_error != -1
    assert v.ratings == [None] * 3 and v.extra["status"] in ("unparseable", "out_of_range")


def test_prompt_round_trip_and_template_checks():
    prompt = critic_prompt("What is b?", STEPS)
    assert "<paragraph_1>\nb = a + 1 = 3\n</paragraph_1>" in prompt and prompt.endswith("\\boxed{}.")
    text, steps = read_critic_prompt(prompt)
    assert text == "What is b?" and [s.text for s in steps] == [s.text for s in STEPS]
    assert read_critic_prompt("hello") is None
    with pytest.raises(ValueError, match="tagged_response"):
        critic_prompt("q", STEPS, template="Problem: {problem}")
    assert "{problem}" in CRITIC_TEMPLATE


THINKPRM_ANSWER = """<think>
Let's verify step by step:
Step 1: 3 + 4 = 7, right. The step is \\boxed{correct}
Step 2: 7 * 2 should be 14, not 15. The step is \\boxed{incorrect}
Step 3: It builds on step 2. \\boxed{incorrect}
</think>
Is the solution correct? No"""


def test_thinkprm_prompt_and_verdicts() -> None:
    from prmkit.policies.critic import (
        THINKPRM_TEMPLATE,
        parse_step_verdicts,
        thinkprm_prompt,
        verdict_from_steps,
    )

    steps = [Step(text="Step 1: 3 + 4 = 7"), Step(text="7 * 2 = 15"), Step(text="The answer is 15.")]
    prompt = thinkprm_prompt("Add 3 and 4, then double it.", steps)
    assert prompt.startswith(
        "You are given a math problem and a proposed step-by-step solution:\n\n[Math Problem]"
    )
    assert "[Solution]\n\nStep 1: 3 + 4 = 7\nStep 2: 7 * 2 = 15\nStep 3: The answer is 15.\n\n" in prompt
    assert prompt.endswith("If the solution is incomplete, only verify the provided steps.")
    assert THINKPRM_TEMPLATE.count("{solution}") == 1
    assert parse_step_verdicts(THINKPRM_ANSWER, 3) == [True, False, False]
    verdict = verdict_from_steps([True, False, False], THINKPRM_ANSWER)
    assert verdict.first_error == 1 and verdict.ratings == [1, -1, None] and verdict.extra["status"] == "ok"
    # a chain that stops early leaves the rest unverified: no first error can be named
    partial = verdict_from_steps(parse_step_verdicts("Step 1: fine \\boxed{correct}", 3), "x")
    assert partial.first_error is None and partial.ratings == [1, None, None]
    assert partial.extra["status"] == "partial"
    assert verdict_from_steps([True, True], "y").first_error == -1  # every step verified correct
    # a step checked twice keeps its last verdict; verdicts past the last step, and junk, are ignored
    twice = "Step 1: \\boxed{incorrect} Wait, let me double check... Step 1: \\boxed{correct} Step 9: \\boxed{incorrect}"
    assert parse_step_verdicts(twice, 2) == [True, None]
    none = verdict_from_steps(parse_step_verdicts("I cannot help with that.", 2), "z")
    assert none.first_error is None and none.extra["status"] == "unparseable"
    with pytest.raises(ValueError, match=r"\{solution\}"):
        thinkprm_prompt("p", steps, "no placeholder {problem}")


def test_an_endpoint_judge_in_the_thinkprm_format(monkeypatch) -> None:
    from prmkit.core.model import Problem
    from prmkit.policies import load_judge

    judge = load_judge("endpoint", url="http://127.0.0.1:9", model="ThinkPRM-1.5B", verdict_format="thinkprm")
    sent = []

    def post(path, payload, max_bytes=None):
        sent.append((path, payload))
        return {"choices": [{"message": {"content": THINKPRM_ANSWER}}]}

    monkeypatch.setattr(judge.client, "post", post)
    steps = [Step(text="3 + 4 = 7"), Step(text="7 * 2 = 15"), Step(text="The answer is 15.")]
    verdict = judge.judge(Problem(id="p", text="Add 3 and 4, then double it.", answer="14"), steps)
    assert verdict.first_error == 1 and verdict.ratings == [1, -1, None]
    ((path, payload),) = sent
    assert path == "/v1/chat/completions" and payload["messages"][0]["content"].startswith("You are given")
    assert judge.settings()["format"] == "thinkprm" and judge.settings()["template"] == "thinkprm"


def test_the_judge_format_is_an_endpoint_option() -> None:
    from prmkit.policies.options import JudgeOptions

    with pytest.raises(ValueError, match=r"--judge-format .* only used by judge 'endpoint'"):
        JudgeOptions(judge="arithmetic", judge_format="thinkprm")
    options = JudgeOptions(
        judge="endpoint", judge_url="http://127.0.0.1:9", judge_model="m", judge_format="thinkprm"
    )
    assert options.build_judge().format == "thinkprm"

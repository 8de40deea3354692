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

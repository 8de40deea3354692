"""Training data: split by problem (no leakage) and per-step targets under every option."""

from __future__ import annotations

import pytest

from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.training.data import IGNORE, outcome_targets, split_by_problem, step_targets


def _trace(ratings, scores=None, answer_correct=None, pid="p") -> Trace:
    gold = Provenance(method="gold", actor="world:local")
    steps = [Step(text=f"s{i}", labels=[Label(rating=r, provenance=gold)]) for i, r in enumerate(ratings)]
    if scores is not None:
        mc = Provenance(method="mc_soft")
        for step, s in zip(steps, scores, strict=True):
            step.labels.append(Label(score=s, provenance=mc))
    return Trace(id=f"t{pid}", problem=Problem(id=pid, text="q"), steps=steps, answer_correct=answer_correct)


def test_split_keeps_every_problem_on_one_side(small_world):
    train, dev = split_by_problem(small_world, 0.2, seed=3)
    assert {t.problem.id for t in train}.isdisjoint({t.problem.id for t in dev})
    assert len(train) + len(dev) == len(small_world)
    assert len({t.problem.id for t in dev}) == 6
    assert split_by_problem(small_world, 0.2, seed=3)[1] == dev  # deterministic


def test_mask_after_first_error_is_the_default_shape():
    t = _trace([1, 0, -1, 1, -1])
    args = ("gold", "hard", 2)
    assert step_targets(t, *args, "positive", "mask", False) == [1, 1, 0, IGNORE, IGNORE]
    assert step_targets(t, *args, "positive", "keep", False) == [1, 1, 0, 1, 0]
    assert step_targets(t, *args, "negative", "mask", False) == [1, 0, 0, IGNORE, IGNORE]


def test_three_classes_soft_scores_and_last_step_only():
    t = _trace([1, 0, -1], scores=[0.9, 0.6, 0.0])
    assert step_targets(t, "gold", "hard", 3, "positive", "keep", False) == [2, 1, 0]
    assert step_targets(t, "mc_soft", "soft", 2, "positive", "keep", False) == pytest.approx([0.9, 0.6, 0.0])
    assert step_targets(t, "gold", "hard", 2, "positive", "keep", True) == [IGNORE, IGNORE, 0]


def test_orm_targets_only_the_last_step():
    assert outcome_targets(_trace([1, -1, 1], answer_correct=True)) == [IGNORE, IGNORE, 1.0]
    assert outcome_targets(_trace([1, 1], answer_correct=None)) == [IGNORE, IGNORE]


class _Chars:
    """A tokenizer with one id per character (enough to read back what an LM example holds)."""

    eos_token_id = 0

    def __call__(self, text: str):
        from types import SimpleNamespace

        return SimpleNamespace(input_ids=[ord(c) for c in text])


def test_lm_examples_read_an_agent_step_as_its_scorer_does():
    """The LM learns from the same text the PRM scores: an agent's calls and the results it read, so it
    can learn to copy a looked-up value; a math trace is its problem and step texts, as before."""
    from prmkit.core.model import Observation, ToolCall
    from prmkit.core.render import step_inputs
    from prmkit.training.data import lm_examples

    call = ToolCall(name="lookup", arguments='{"entity": "Sarhal"}', id="c1")
    looked = Step(
        text="Look it up.",
        tool_calls=[call],
        observations=[Observation(content='{"value": 19}', call_id="c1")],
    )
    agent = Trace(id="a", problem=Problem(id="a", text="q"), steps=[looked, Step(text="It is 19.")])
    math = Trace(
        id="m",
        problem=Problem(id="m", text="q"),
        steps=[Step(text="2 + 3 = 5"), Step(text="The answer is 5.")],
    )
    (a, m) = lm_examples([agent, math], _Chars(), max_length=10_000, loss_on_problem=False)
    text = "".join(map(chr, a["input_ids"][:-1]))
    assert text == "q\n" + "".join(s + "\n" for s in step_inputs(agent.steps))
    assert (
        '<tool_call>\n{"name": "lookup"' in text
        and '<tool_response>\n{"value": 19}\n</tool_response>\nIt is 19.' in text
    )
    assert "".join(map(chr, m["input_ids"][:-1])) == "q\n2 + 3 = 5\nThe answer is 5.\n"
    assert a["prompt_len"] == m["prompt_len"] == 2

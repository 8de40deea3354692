"""Step templates: one read position per step, at the tag, for every named separator."""

from __future__ import annotations

import pytest

from prmkit.modeling import SEPARATORS, StepTemplate, build_tokenizer, encode_trace

TEXTS = ["Ann has 36 apples. She gives away 7 apples.", "So 36 - 7 = 29 apples.", "The answer is 29."] * 20
STEPS = ["So 36 - 7 = 29 apples.", "The answer is 29."]


@pytest.fixture(scope="module")
def tok():
    return build_tokenizer(TEXTS, vocab_size=300, extra_tokens=["<|step|>", "<extra_0>"])


@pytest.mark.parametrize("name", sorted(SEPARATORS))
def test_each_step_is_read_at_its_tag(tok, name):
    template = StepTemplate.named(name)
    enc = encode_trace(tok, template, "Ann has 36 apples.", STEPS)
    tag = template.tag_id(tok)
    assert len(enc.tag_positions) == len(STEPS)
    assert all(enc.input_ids[p] == tag for p in enc.tag_positions)
    assert enc.input_ids[0] == tok.bos_token_id


def test_default_template_matches_tokenizing_the_whole_text(tok):
    """A reader outside prmkit tokenizes the joined string; the pieces must agree with it."""
    template = StepTemplate()
    enc = encode_trace(tok, template, "Ann has 36 apples.", STEPS)
    assert enc.input_ids == tok(template.text("Ann has 36 apples.", STEPS)).input_ids
    assert enc.tag_positions == [i for i, t in enumerate(enc.input_ids) if t == template.tag_id(tok)]


def test_truncation_drops_steps_whose_tag_does_not_fit(tok):
    full = encode_trace(tok, StepTemplate(), "Ann has 36 apples.", STEPS)
    cut = encode_trace(tok, StepTemplate(), "Ann has 36 apples.", STEPS, max_length=full.tag_positions[0] + 2)
    assert cut.tag_positions == full.tag_positions[:1]
    assert len(cut.input_ids) <= full.tag_positions[0] + 2


def test_a_separator_without_its_tag_is_refused(tok):
    with pytest.raises(ValueError, match="does not contain tag"):
        StepTemplate(separator="\n", tag="<|step|>").separator_ids(tok)

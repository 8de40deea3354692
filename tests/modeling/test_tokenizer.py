"""The data-built tokenizer: digits one by one, exact decoding, the step tag as one special token."""

from __future__ import annotations

from transformers import AutoTokenizer

from prmkit.modeling import STEP_TAG, build_tokenizer

TEXTS = [
    "Ann has 36 apples. She gives away 7 apples.",
    "She gives away 7, so 36 - 7 = 29 apples.",
    "The answer is 29.",
] * 20


def test_digits_are_single_tokens_and_decoding_is_exact(tmp_path):
    tok = build_tokenizer(TEXTS, vocab_size=300)
    text = "So 123 - 45 = 78 apples.\nThe answer is 78."
    ids = tok(text).input_ids
    pieces = tok.convert_ids_to_tokens(ids)
    assert pieces[0] == tok.bos_token  # a policy prompt starts like the pretraining text
    assert {"1", "2", "3", "4", "5", "7", "8"} <= set(pieces)
    assert not any(any(c.isdigit() for c in p) and len(p.strip("Ġ")) > 1 for p in pieces)
    assert tok.decode(ids, skip_special_tokens=True) == text


def test_step_tag_is_one_special_token_and_survives_a_save(tmp_path):
    tok = build_tokenizer(TEXTS, vocab_size=300)
    tag_ids = tok.encode(STEP_TAG, add_special_tokens=False)
    assert len(tag_ids) == 1
    tok.save_pretrained(tmp_path)
    assert (tmp_path / "tokenizer.json").exists()
    again = AutoTokenizer.from_pretrained(tmp_path)
    assert again.encode(f"29.{STEP_TAG}\n", add_special_tokens=False) == tok.encode(
        f"29.{STEP_TAG}\n", add_special_tokens=False
    )
    assert again.pad_token_id == tok.pad_token_id is not None

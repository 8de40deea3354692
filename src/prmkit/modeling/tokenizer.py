"""A small byte-level BPE tokenizer built on the data, with numbers split digit by digit.

Why digit by digit: a model that sees ``29`` as one token must memorise every fact it meets, while one
that sees ``2`` ``9`` can learn the arithmetic of a place value. Byte-level BPE keeps decoding exact
(spaces, newlines), which the tiny LM needs when it doubles as a policy. The result is an ordinary
``PreTrainedTokenizerFast`` saved as ``tokenizer.json``, loadable with ``AutoTokenizer`` anywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from prmkit.core.render import step_inputs

BOS, EOS, PAD = "<|bos|>", "<|eos|>", "<|pad|>"
STEP_TAG = "<|step|>"
"""prmkit's default step tag: one dedicated token after every step, never produced by ordinary text."""


def build_tokenizer(
    texts: Iterable[str], vocab_size: int = 1024, extra_tokens: Iterable[str] = (STEP_TAG,)
) -> Any:
    """Train a byte-level BPE tokenizer on ``texts`` (digits always single tokens) and wrap it for HF.

    ``extra_tokens`` become special added tokens (one id each), e.g. the step tag.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tok.decoder = decoders.ByteLevel()
    specials = [PAD, BOS, EOS, *extra_tokens]
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    bos_id = tok.token_to_id(BOS)
    # BOS on every encoded text, so a policy prompt looks like the pretraining text it continues.
    tok.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A $B", special_tokens=[(BOS, bos_id)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        extra_special_tokens=list(extra_tokens),
        padding_side="right",
    )


def trace_texts(traces: Iterable[Any]) -> Iterable[str]:
    """The strings a tokenizer for these traces should learn from: each problem once, every step."""
    seen: set[str] = set()
    for trace in traces:
        if trace.problem.id not in seen:
            seen.add(trace.problem.id)
            yield trace.problem.text
        yield from step_inputs(trace.steps)
        if trace.steps and trace.steps[-1].observations:  # results after the last step (no next step)
            yield from (o.content for o in trace.steps[-1].observations)


def save_tokenizer(tokenizer: Any, path: str | Path) -> None:
    """Save as ``tokenizer.json`` + ``tokenizer_config.json`` + special tokens map."""
    tokenizer.save_pretrained(str(path))

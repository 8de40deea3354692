"""How a trace becomes token ids with one read-out position per step (the step tag).

The input is ``[bos] prompt`` then, for every step, the step's tokens followed by the separator's
tokens, built piece by piece exactly like TRL's ``PRMTrainer.tokenize_row``. The score of a step is read
at the *tag* token inside its separator (at the tag's own position, no shift: the convention of the
Math-Shepherd and Qwen reference code and of vLLM's STEP pooling). Because the backbone is causal, the
hidden state there has seen the problem and every step up to this one and nothing after, so one
forward pass scores every prefix at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from prmkit.core.render import context_length
from prmkit.modeling.tokenizer import STEP_TAG

SEPARATORS: dict[str, tuple[str, str]] = {
    "token": (STEP_TAG + "\n", STEP_TAG),
    "ki": (" ки\n", "ки"),
    "extra_0": ("<extra_0>", "<extra_0>"),
    "newline": ("\n", "\n"),
}
"""Named separator choices: name -> (separator text written after each step, tag read in it)."""


class StepTemplate(BaseModel):
    """The input layout of a step-scoring model; saved in its config and process card.

    ``separator`` is written after every step and must contain ``tag``, whose position is where the
    step's score is read. The default is a dedicated added token (it cannot occur in step text, so
    vLLM's STEP pooling by ``step_tag_id`` finds exactly one row per step); ``"ки"`` (Math-Shepherd),
    ``"<extra_0>"`` (Qwen) and a newline (TRL's default) are the named alternatives in
    :data:`SEPARATORS`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt_template: str = "{problem}\n"
    separator: str = STEP_TAG + "\n"
    tag: str = STEP_TAG
    add_bos: bool = True

    @classmethod
    def named(cls, name: str, **kwargs: Any) -> StepTemplate:
        """The template of a named separator (``token``, ``ki``, ``extra_0``, ``newline``)."""
        if name not in SEPARATORS:
            raise ValueError(f"unknown separator {name!r}; expected one of {', '.join(SEPARATORS)}")
        sep, tag = SEPARATORS[name]
        return cls(separator=sep, tag=tag, **kwargs)

    def tag_id(self, tokenizer: Any) -> int:
        """The id of the tag token (the last id the tag text encodes to)."""
        ids = tokenizer.encode(self.tag, add_special_tokens=False)
        if not ids:
            raise ValueError(f"step tag {self.tag!r} encodes to no token with this tokenizer")
        return ids[-1]

    def separator_ids(self, tokenizer: Any) -> tuple[list[int], int]:
        """The separator's ids and the offset of the tag inside them."""
        sep = tokenizer.encode(self.separator, add_special_tokens=False)
        tag = self.tag_id(tokenizer)
        if tag not in sep:
            raise ValueError(f"separator {self.separator!r} does not contain tag {self.tag!r} once tokenized")
        return sep, len(sep) - 1 - sep[::-1].index(tag)

    def text(self, problem: str, steps: Sequence[str]) -> str:
        """The whole input as one string (what vLLM or a pipeline is given)."""
        return self.prompt_template.replace("{problem}", problem) + "".join(s + self.separator for s in steps)


class Encoded(BaseModel):
    """Token ids of one trace and the position of each step's tag (None where truncation cut it)."""

    input_ids: list[int]
    tag_positions: list[int]
    prompt_length: int | None = None
    """Tokens before the first step (BOS and the prompt); None where a convention does not record it."""
    context_tokens: list[int] = []
    """Per kept step, how many of its first tokens are tool results it reads
    (:func:`~prmkit.core.render.context_length`); empty when no step reads any (math)."""


def encode_trace(
    tokenizer: Any,
    template: StepTemplate,
    problem: str,
    steps: Sequence[str],
    max_length: int | None = None,
    separator: tuple[list[int], int] | None = None,
) -> Encoded:
    """Tokenize piecewise (one batched tokenizer call) and record where each step's tag sits.

    Steps whose tag would fall past ``max_length`` are cut off; callers decide whether that is an error
    (scoring) or a shorter training example (training). ``separator`` is ``template.separator_ids``,
    passed in by callers that encode many traces.
    """
    return encode_traces(tokenizer, template, [(problem, steps)], max_length, separator)[0]


def encode_traces(
    tokenizer: Any,
    template: StepTemplate,
    items: Sequence[tuple[str, Sequence[str]]],
    max_length: int | None = None,
    separator: tuple[list[int], int] | None = None,
) -> list[Encoded]:
    """:func:`encode_trace` of many (problem, steps) pairs, every prompt and step in one tokenizer call
    (a fast tokenizer spreads it over every core); the ids are those of one call per trace."""
    sep = separator or template.separator_ids(tokenizer)
    texts, contexts = [], []
    for problem, steps in items:
        texts += [template.prompt_template.replace("{problem}", problem), *steps]
        contexts.append([context_length(s) for s in steps])
    fast = any(any(c) for c in contexts) and getattr(tokenizer, "is_fast", False)
    offsets = {"return_offsets_mapping": True} if fast else {}  # math: the call as it always was
    enc = tokenizer(texts, add_special_tokens=False, **offsets) if texts else {"input_ids": []}
    out, at = [], 0
    for (_, steps), ctx in zip(items, contexts, strict=True):
        part = {key: value[at : at + 1 + len(steps)] for key, value in enc.items()}
        out.append(_assemble(tokenizer, template, steps, ctx, part, max_length, sep))
        at += 1 + len(steps)
    return out


def _assemble(
    tokenizer: Any,
    template: StepTemplate,
    steps: Sequence[str],
    contexts: Sequence[int],
    enc: dict[str, Any],
    max_length: int | None,
    separator: tuple[list[int], int],
) -> Encoded:
    """One trace's :class:`Encoded` from its prompt's and steps' ids (``enc``: ``[prompt, *steps]``)."""
    sep_ids, tag_offset = separator
    pieces = enc["input_ids"]
    context_tokens = _context_tokens(tokenizer, steps, contexts, enc) if any(contexts) else []
    ids: list[int] = []
    if template.add_bos and tokenizer.bos_token_id is not None:
        ids.append(tokenizer.bos_token_id)
    ids += pieces[0]
    prompt_length = len(ids)
    positions: list[int] = []
    for step_ids in pieces[1:]:
        tag_at = len(ids) + len(step_ids) + tag_offset
        if max_length is not None and tag_at >= max_length:
            break
        positions.append(tag_at)
        ids += step_ids + sep_ids
    if max_length is not None:
        ids = ids[:max_length]
    return Encoded(input_ids=ids, tag_positions=positions, prompt_length=prompt_length,
                   context_tokens=context_tokens[: len(positions)])  # fmt: skip


def _context_tokens(tokenizer: Any, steps: Sequence[str], contexts: Sequence[int], enc: Any) -> list[int]:
    """How many of each step's tokens lie within its first ``contexts[i]`` characters: from the tokens'
    character offsets with a fast tokenizer (a token straddling the boundary counts as the step's own),
    else the token count of the context text alone, the same wherever the boundary (a newline) separates
    tokens, as it does for byte-level BPE."""
    if "offset_mapping" in enc:
        return [sum(1 for _, end in spans if end <= n) if n else 0
                for spans, n in zip(enc["offset_mapping"][1:], contexts, strict=True)]  # fmt: skip
    alone = tokenizer([s[:n] for s, n in zip(steps, contexts, strict=True)], add_special_tokens=False)
    return [min(len(c), len(p)) if n else 0
            for c, p, n in zip(alone["input_ids"], enc["input_ids"][1:], contexts, strict=True)]  # fmt: skip

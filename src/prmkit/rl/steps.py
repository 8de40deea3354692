"""Where a completion's steps are in tokens: the step of every token an RL trainer pays.

A completion is cut into steps, in characters, by :func:`prmkit.core.steps.parse_completion` (the one
parser of text into steps: chat markers removed, split at the separator or pattern, each step stripped,
empty ones dropped, cut after the answer step), so a step reward is paid on exactly the steps the PRM
scored. This module maps those character ends to token positions.

Token positions: a step *ends* at the token holding its last character; a token belongs to the first
step ending at or after it, and tokens past the last step's end (the separator, text past the answer,
EOS) to the last step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def token_text_ends(ids: Sequence[int], tokenizer: Any) -> list[int]:
    """For each token, how many characters of the whole decoded text (``skip_special_tokens=True``)
    are settled once it is decoded: the length of the prefix ``decode(ids[: j + 1])`` shares with it.

    Decoding tokens one by one is exact when their texts concatenate to the whole decode (byte-level
    BPE on whole characters); otherwise (a character split across tokens, which decodes to a
    replacement character until its last byte; SentencePiece's leading spaces) every prefix is
    decoded and compared, which is quadratic but always right.
    """
    ids = list(ids)
    whole = tokenizer.decode(ids, skip_special_tokens=True)
    pieces = [tokenizer.decode([i], skip_special_tokens=True) for i in ids]
    if "".join(pieces) == whole:
        out, total = [], 0
        for p in pieces:
            total += len(p)
            out.append(total)
        return out
    return [_shared(tokenizer.decode(ids[: j + 1], skip_special_tokens=True), whole) for j in range(len(ids))]


def _shared(a: str, b: str) -> int:
    """Length of the common prefix of two strings."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def token_ends(char_ends: Sequence[int], text_ends: Sequence[int]) -> list[int]:
    """The token index where each step ends: the first token whose decoded prefix reaches the step's
    last character (``text_ends`` from :func:`token_text_ends`); the last token if none does."""
    out, j = [], 0
    last = len(text_ends) - 1
    for end in char_ends:
        while j < last and text_ends[j] < end:
            j += 1
        out.append(max(j, 0))
    return out


def step_of_tokens(ends: Sequence[int], length: int) -> list[int]:
    """The step each of ``length`` tokens belongs to (see the module docstring); ``ends`` must be
    non-decreasing token indices, and a completion with no step has every token in step 0."""
    out, k = [], 0
    for t in range(length):
        while k < len(ends) - 1 and ends[k] < t:
            k += 1
        out.append(k)
    return out

"""Turning the strings RL trainers send into prmkit traces: split a completion into steps.

RL frameworks hand a reward function plain text (TRL: the completion; OpenRLHF: prompt + response with
the chat template's special tokens; verl: the decoded response). :class:`StepSplit` says how that text
becomes steps, and is the one place the server, the TRL/verl/OpenRLHF adapters and the docs agree on.
:func:`parse_completion` cuts a completion at its answer step and says whether it has one (an
*unfinished* completion has none), for every reward path: ``prmkit.rl`` and the server's ``/get_reward``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from prmkit.core.model import Problem, Step, Trace
from prmkit.policies.text import StepFormat

DEFAULT_SPECIAL = r"<\|[^|<>]{1,40}\|>|</?s>|\[/?INST\]"
"""Chat-template markers removed before splitting: ``<|im_end|>``, ``<|eot_id|>``, ``</s>``, ``[INST]``..."""
ASSISTANT_MARKERS = ("<|im_start|>assistant", "<|start_header_id|>assistant<|end_header_id|>", "[/INST]")


class StepSplit(BaseModel):
    """How a completion string is cut into steps (the same rule the PRM was trained with)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    separator: str = "\n"
    """Literal text between steps (prmkit's world and policies write one step per line)."""
    pattern: str | None = None
    """A regex to split on instead of ``separator`` (e.g. ``"\\n\\n+|(?=Step \\d+:)"``)."""
    strip_special: str | None = DEFAULT_SPECIAL
    """Regex of chat-template special tokens to delete first; None keeps the text as sent."""
    max_chars: int = Field(default=100_000, gt=0)
    """Longer texts are rejected rather than scored (a runaway generation is not a solution)."""

    def clean(self, text: str) -> str:
        return re.sub(self.strip_special, "", text) if self.strip_special else text

    def split(self, text: str) -> list[str]:
        """Non-empty, stripped steps of ``text``."""
        text = self.clean(text)
        parts = re.split(self.pattern, text) if self.pattern else text.split(self.separator)
        return [p.strip() for p in parts if p and p.strip()]


def message_text(value: Any, role: str) -> str:
    """Text of a TRL/verl value that is either a string or a list of ``{"role", "content"}`` messages."""
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence):
        contents = [m.get("content", "") for m in value if isinstance(m, dict) and m.get("role") == role]
        if not contents:
            contents = [m.get("content", "") for m in value if isinstance(m, dict)]
        return "\n".join(c if isinstance(c, str) else str(c) for c in contents[-1:] if c is not None)
    return "" if value is None else str(value)


def split_query(query: str, prompt: str) -> tuple[str, str]:
    """Cut OpenRLHF's ``query`` (prompt + response, template tokens included) into (problem, response)."""
    if prompt and query.startswith(prompt):
        return prompt, query[len(prompt) :]
    for marker in ASSISTANT_MARKERS:
        at = query.rfind(marker)
        if at >= 0:
            return query[:at], query[at + len(marker) :]
    return prompt, query


def problem_text(prompt: str, split: StepSplit) -> str:
    """The problem as the PRM should read it: the last user turn of a chat prompt, markers removed."""
    for start in ("<|im_start|>user", "<|start_header_id|>user<|end_header_id|>", "[INST]"):
        at = prompt.rfind(start)
        if at >= 0:
            prompt = prompt[at + len(start) :]
            break
    for marker in ASSISTANT_MARKERS:
        prompt = prompt.replace(marker, "")
    return split.clean(prompt).strip()


def make_trace(
    problem: str, steps: Sequence[str], answer: str | None = None, trace_id: str | None = None
) -> Trace:
    """A trace for scoring from plain strings (ids are random when not given; scorers don't read them)."""
    tid = trace_id or uuid.uuid4().hex[:12]
    return Trace(
        id=tid,
        problem=Problem(id=f"p-{tid}", text=problem, answer=answer),
        steps=[Step(text=s) for s in steps],
    )


@dataclass(frozen=True)
class CompletionSteps:
    """A completion's steps (stripped texts), where each ends in the completion's characters
    (exclusive offsets into the text as given), and its final answer (None: unfinished)."""

    steps: list[str]
    char_ends: list[int]
    answer: str | None

    @property
    def finished(self) -> bool:
        return self.answer is not None


def _cleaned(text: str, split: StepSplit) -> tuple[str, list[int]]:
    """``split.clean(text)`` and, for every kept character, its offset in ``text``."""
    if not split.strip_special:
        return text, list(range(len(text)))
    kept, at = [], 0
    for m in re.finditer(split.strip_special, text):
        kept.extend(range(at, m.start()))
        at = m.end()
    kept.extend(range(at, len(text)))
    return "".join(text[i] for i in kept), kept


def parse_completion(
    text: str, split: StepSplit | None = None, step_format: StepFormat | None = None
) -> CompletionSteps:
    """Steps, their character ends and the final answer of ``text`` (see the module docstring).

    The steps are exactly ``split.split(text)`` up to the answer step, so a PRM scores the same steps.
    """
    split = split or StepSplit()
    step_format = step_format or StepFormat()
    cleaned, origin = _cleaned(text, split)
    boundary = re.compile(split.pattern if split.pattern else re.escape(split.separator))
    steps: list[str] = []
    ends: list[int] = []
    start = 0
    pieces = [(m.start(), m.end()) for m in boundary.finditer(cleaned) if m.end() > m.start()]
    for cut_start, cut_end in [*pieces, (len(cleaned), len(cleaned))]:
        chunk = cleaned[start:cut_start]
        start = cut_end
        stripped = chunk.strip()
        if not stripped:
            continue
        last = cut_start - (len(chunk) - len(chunk.rstrip())) - 1  # the chunk's last non-space char
        steps.append(stripped)
        ends.append(origin[last] + 1)
        answer = step_format.answer_in(stripped)
        if answer is not None:
            return CompletionSteps(steps=steps, char_ends=ends, answer=answer)
    return CompletionSteps(steps=steps, char_ends=ends, answer=None)

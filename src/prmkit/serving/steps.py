"""Turning the strings RL trainers send into prmkit traces: split a completion into steps.

RL frameworks hand a reward function plain text (TRL: the completion; OpenRLHF: prompt + response with
the chat template's special tokens; verl: the decoded response). :class:`StepSplit` says how that text
becomes steps, and is the one place the server, the TRL/verl/OpenRLHF adapters and the docs agree on.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from prmkit.core.model import Problem, Step, Trace

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

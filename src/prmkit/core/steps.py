"""Text <-> steps <-> answer: the one home of how words become prmkit steps and back.

A language model (local or behind an endpoint) sees one string: the problem, then the steps so far, each
followed by the step separator (:class:`StepFormat` renders it, as a prompt or as chat messages). What a
policy writes back, and what an RL trainer hands a reward function, is cut into steps by one parser,
:func:`parse_completion`: chat-template markers removed (:class:`StepSplit`), split at the separator or a
pattern, each step stripped, empty ones dropped, and cut after the first step stating a final answer
(the last ``\\boxed{...}``, else the answer pattern: "The answer is 29."). A completion with no answer
is *unfinished*. The policies, the servers, the labellers and every RL reward path read steps here, so a
PRM scores exactly the steps a policy wrote and a trainer pays for.

RL frameworks hand a reward function plain text (TRL: the completion; OpenRLHF: prompt + response with
the chat template's special tokens; verl: the decoded response): :func:`message_text`,
:func:`split_query` and :func:`problem_text` read the problem and response out of what each sends.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from prmkit.core.model import Continuation, Problem, Step, Trace
from prmkit.core.render import render_observation, step_inputs

DEFAULT_ANSWER_PATTERN = r"(?i)(?:the\s+(?:final\s+)?answer\s+is|####)\s*:?\s*\$?\s*(.+?)\s*\$?\s*\.?\s*$"


def last_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` in ``text`` (braces balanced), or None."""
    start = text.rfind("\\boxed{")
    while start != -1:
        depth, i = 0, start + len("\\boxed")
        for j in range(i, len(text)):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    return text[i + 1 : j].strip()
        start = text.rfind("\\boxed{", 0, start)  # unbalanced: try an earlier one
    return None


class StepFormat(BaseModel):
    """The prompt layout and the parser for one family of text policies.

    Defaults match the embedded world's traces (one step per line, "The answer is N."). Replace them for
    a model trained on another layout, e.g. ``step_separator="\\n\\n"`` for most chat models.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    step_separator: str = "\n"
    """Written after every step, and where the policy's text is cut into steps."""
    prompt_template: str = "{problem}\n"
    """The text before the first step; ``{problem}`` is replaced by the problem text."""
    answer_pattern: str = DEFAULT_ANSWER_PATTERN
    """Regex whose first group is the final answer, searched in each step (a ``\\boxed{}`` wins)."""

    def prompt(self, problem: Problem, prefix: Sequence[Step]) -> str:
        """The string a text policy continues: the problem header, then each step and a separator."""
        head = self.prompt_template.replace("{problem}", problem.text)
        text = head + "".join(text + self.step_separator for text in step_inputs(prefix))
        if prefix and prefix[-1].observations:  # an agent continues after seeing its last call's results
            text += "".join(render_observation(o) + self.step_separator for o in prefix[-1].observations)
        return text

    def messages(self, problem: Problem, prefix: Sequence[Step]) -> tuple[list[dict[str, str]], bool]:
        """The chat a chat model continues, and whether it continues the last message.

        The problem (through ``prompt_template``) is the user's message; the steps so far, each followed
        by the separator, open the assistant's, which the model continues (vLLM's
        ``continue_final_message``, transformers' ``apply_chat_template(continue_final_message=True)``).
        With no steps yet there is nothing to continue: the assistant's turn opens as usual.
        """
        head = self.prompt(problem, [])
        steps = self.prompt(problem, prefix)[len(head) :]
        user = {"role": "user", "content": head.strip()}
        if not steps:
            return [user], False
        return [user, {"role": "assistant", "content": steps}], True

    def answer_in(self, step_text: str) -> str | None:
        """The final answer stated in one step, or None."""
        boxed = last_boxed(step_text)
        if boxed is not None:
            return boxed
        m = re.search(self.answer_pattern, step_text.strip())
        return m.group(1).strip() if m else None

    def parse(self, text: str, max_steps: int | None = None, num_tokens: int | None = None) -> Continuation:
        """Cut generated text into steps, stopping at the first step that states an answer.

        ``finished`` is True only when an answer was found; text after the answer step is dropped, as
        is a trailing partial step when ``max_steps`` cut the continuation short. The steps are
        :func:`parse_completion`'s with this format's separator and nothing stripped: one parser for
        the policy's words and for the completions RL trainers send.
        """
        cut = parse_completion(text, StepSplit(step_separator=self.step_separator, strip_special=None), self)
        steps, answer = cut.steps, cut.answer
        if max_steps is not None and len(steps) > max_steps:
            steps, answer = steps[:max_steps], None  # the answer step was past the budget
        return Continuation(
            steps=[Step(text=s) for s in steps], final_answer=answer, finished=answer is not None,
            num_tokens=num_tokens,
        )  # fmt: skip

    def split_prompt(self, prompt: str, problems: dict[str, Problem]) -> tuple[Problem, list[Step]] | None:
        """Inverse of :meth:`prompt` for a known set of problems (keyed by text); None if none matches."""
        for text, problem in problems.items():
            head = self.prompt_template.replace("{problem}", text)
            if prompt.startswith(head):
                rest = prompt[len(head) :]
                chunks = rest.split(self.step_separator)
                return problem, [Step(text=c.strip()) for c in chunks if c.strip()]
        return None


DEFAULT_SPECIAL = r"<\|[^|<>]{1,40}\|>|</?s>|\[/?INST\]"
"""Chat-template markers removed before splitting: ``<|im_end|>``, ``<|eot_id|>``, ``</s>``, ``[INST]``..."""
ASSISTANT_MARKERS = ("<|im_start|>assistant", "<|start_header_id|>assistant<|end_header_id|>", "[/INST]")


class StepSplit(BaseModel):
    """How a completion string is cut into steps (the same rule the PRM was trained with)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    step_separator: str = "\n"
    """Literal text between steps (prmkit's worlds and policies write one step per line); the same name as
    :attr:`StepFormat.step_separator`, the ``--step-separator`` flag and verl's ``step_separator``."""
    step_pattern: str | None = None
    """A regex to split on instead of ``step_separator`` (e.g. ``"\\n\\n+|(?=Step \\d+:)"``)."""
    strip_special: str | None = DEFAULT_SPECIAL
    """Regex of chat-template special tokens to delete first; None keeps the text as sent."""
    max_chars: int = Field(default=100_000, gt=0)
    """Longer texts are rejected rather than scored (a runaway generation is not a solution)."""

    def clean(self, text: str) -> str:
        return re.sub(self.strip_special, "", text) if self.strip_special else text

    def split(self, text: str) -> list[str]:
        """Non-empty, stripped steps of ``text``."""
        text = self.clean(text)
        parts = re.split(self.step_pattern, text) if self.step_pattern else text.split(self.step_separator)
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
    boundary = re.compile(split.step_pattern if split.step_pattern else re.escape(split.step_separator))
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

"""How a text policy's words map to prmkit steps: the prompt it reads and the steps/answer it writes.

A language model (local or behind an endpoint) sees one string: the problem, then the steps so far, each
followed by the step separator. What it writes back is split at the same separator into steps, and the
final answer is read from the last ``\\boxed{...}`` or from the answer pattern ("The answer is 29.").
The same :class:`StepFormat` renders prompts for the client and parses them back on the policy server,
so both ends of the wire agree by construction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from prmkit.core.model import Continuation, Problem, Step
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
        is a trailing partial step when ``max_steps`` cut the continuation short.
        """
        steps: list[Step] = []
        for chunk in text.split(self.step_separator):
            if not chunk.strip():
                continue
            if max_steps is not None and len(steps) >= max_steps:
                break
            steps.append(Step(text=chunk.strip()))
            answer = self.answer_in(chunk)
            if answer is not None:
                return Continuation(steps=steps, final_answer=answer, finished=True, num_tokens=num_tokens)
        return Continuation(steps=steps, final_answer=None, finished=False, num_tokens=num_tokens)

    def split_prompt(self, prompt: str, problems: dict[str, Problem]) -> tuple[Problem, list[Step]] | None:
        """Inverse of :meth:`prompt` for a known set of problems (keyed by text); None if none matches."""
        for text, problem in problems.items():
            head = self.prompt_template.replace("{problem}", text)
            if prompt.startswith(head):
                rest = prompt[len(head) :]
                chunks = rest.split(self.step_separator)
                return problem, [Step(text=c.strip()) for c in chunks if c.strip()]
        return None

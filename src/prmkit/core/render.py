"""The text a model reads for each step of a trace: math steps as they are, agent steps with their calls.

Every model input (training, scoring, serving, tokenizer corpora, content keys of labelling jobs) goes
through :func:`step_inputs`, so a PRM reads a trajectory the same way everywhere. For a trace without
tool calls or observations each step's input *is* its text, byte for byte: math data, world digests
and checkpoints trained before agents existed read exactly as before.

For an agent step, the results that came back after the previous step come first (what the agent knew
when it acted), then the step's own text, then its calls. A step is therefore scored before its own
results are seen: a PRM judges the call, not the luck of its outcome. The markup is the Hermes / Qwen
chat templates' (``<tool_call>`` ... ``</tool_call>``, ``<tool_response>`` ... ``</tool_response>``), so
a real chat model's tokenizer has seen it.

The results a step reads are its *context*, not its writing: :func:`context_length` finds them in a step's
input text, so a read-out that judges what the agent wrote (the likelihood head's least likely token) can
leave out tokens that no model could predict after a right step any better than after a wrong one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from prmkit.core.model import Observation, Step, ToolCall

CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
RESPONSE_OPEN, RESPONSE_CLOSE = "<tool_response>", "</tool_response>"


def render_call(call: ToolCall) -> str:
    """One call as Hermes-style markup; the arguments are the agent's own text, never re-serialised."""
    return f'{CALL_OPEN}\n{{"name": {json.dumps(call.name, ensure_ascii=False)}, "arguments": {call.arguments}}}\n{CALL_CLOSE}'


def render_observation(observation: Observation) -> str:
    """A tool's result in ``<tool_response>`` markup; a user's turn as ``User: ...``."""
    if observation.role == "user":
        return f"User: {observation.content}"
    return f"{RESPONSE_OPEN}\n{observation.content}\n{RESPONSE_CLOSE}"


def render_step(step: Step, before: Sequence[Observation] = ()) -> str:
    """The input text of ``step``, after the observations that came back before it."""
    if not step.tool_calls and not before:
        return step.text
    parts = [render_observation(o) for o in before]
    if step.text:
        parts.append(step.text)
    parts.extend(render_call(c) for c in step.tool_calls)
    return "\n".join(parts)


def step_inputs(steps: Sequence[Step]) -> list[str]:
    """The input text of every step (see the module docstring); ``[s.text for s in steps]`` for math."""
    out: list[str] = []
    before: Sequence[Observation] = ()
    for step in steps:
        out.append(render_step(step, before))
        before = step.observations
    return out


def is_agentic(steps: Sequence[Step]) -> bool:
    """Whether any step calls a tool or has observations (an agent trajectory, not a math solution)."""
    return any(s.tool_calls or s.observations for s in steps)


def context_length(text: str) -> int:
    """Characters at the start of a step input that are tool results it reads (``<tool_response>`` blocks
    and the newline after each), as :func:`render_step` puts them first; 0 for a math step.

    Read from the markup rather than passed beside the text, so a step input that travelled as a string
    (the reward server, a remote scorer) gives the same answer. A user's turn (``User: ...``) is not
    recognised and counts as the step's own text.
    """
    end, opener, closer = 0, RESPONSE_OPEN + "\n", "\n" + RESPONSE_CLOSE
    while text.startswith(opener, end):
        close = text.find(closer, end + len(opener))
        if close < 0:
            break
        end = close + len(closer)
        if text.startswith("\n", end):
            end += 1
    return end

"""Step rewards in the shapes other trainers take.

- :func:`verl_reward_tensor`: verl's token-level reward, a ``(batch, response_length)`` float32 tensor
  shaped like ``data.batch["responses"]`` (what verl's reward managers return as ``reward_tensor`` and
  its trainer stores as ``token_level_scores``), holding each step's reward at the token where the step
  ends and 0 elsewhere. verl's naive manager writes its one scalar at ``valid_response_length - 1``; a
  one-step response here gets exactly that.
- :func:`turn_step_rewards`: per-turn lists for multi-turn trainers (``step_rewards`` per assistant turn,
  the shape NeMo Gym and AReaL are adding): the steps of every assistant turn scored as one trace, then
  cut back into turns; a tool-using trajectory gets one reward per assistant message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prmkit.core.steps import make_trace, message_text, parse_completion
from prmkit.rl.rewards import ProcessReward
from prmkit.rl.steps import token_ends, token_text_ends


def step_token_ends(ids: Sequence[int], tokenizer: Any, char_ends: Sequence[int]) -> list[int]:
    """Token index where each step ends, for steps ending at ``char_ends`` of the decoded ``ids``
    (``decode(ids, skip_special_tokens=True)``, the text the rewards were computed on)."""
    if not ids:
        return []
    return token_ends(char_ends, token_text_ends(ids, tokenizer))


def verl_reward_tensor(
    step_rewards: Sequence[Sequence[float]], ends: Sequence[Sequence[int]], response_length: int
) -> Any:
    """``(len(step_rewards), response_length)`` float32: ``out[i, ends[i][k]] += step_rewards[i][k]``.

    Two steps ending on one token add up there (the step text ended inside a multi-character token).
    """
    import torch

    out = torch.zeros((len(step_rewards), response_length), dtype=torch.float32)
    for i, (row, at) in enumerate(zip(step_rewards, ends, strict=True)):
        if len(row) != len(at):
            raise ValueError(f"verl_reward_tensor: row {i}: {len(row)} rewards but {len(at)} step ends")
        for value, t in zip(row, at, strict=True):
            if not 0 <= t < response_length:
                raise ValueError(
                    f"verl_reward_tensor: row {i}: step end {t} outside the response (length {response_length})"
                )
            out[i, t] += float(value)
    return out


def split_by_turn(values: Sequence[float], steps_per_turn: Sequence[int]) -> list[list[float]]:
    """Cut one list of step values into consecutive turns of ``steps_per_turn[k]`` steps each."""
    if sum(steps_per_turn) != len(values):
        raise ValueError(f"split_by_turn: {len(values)} values for {sum(steps_per_turn)} steps")
    out, at = [], 0
    for n in steps_per_turn:
        out.append([float(v) for v in values[at : at + n]])
        at += n
    return out


def turn_step_rewards(messages: Sequence[dict[str, Any]], process: ProcessReward) -> list[list[float]]:
    """One list of step rewards per assistant turn of a conversation (``{"role", "content"}`` dicts).

    The problem is the first user turn; every assistant turn is cut into steps with ``process.split``
    and all are scored together (a PRM judges a step in the light of every step before it). Under the
    unfinished rule (no assistant step states an answer) the last assistant turn gets
    ``[process.unfinished_reward]`` and the others ``[]``.
    """
    if any(m.get("role") == "assistant" and m.get("tool_calls") for m in messages):
        return _trajectory_rewards(messages, process)
    problem = next((message_text(m.get("content"), "user") for m in messages if m.get("role") == "user"), "")
    turns = [message_text(m.get("content"), "assistant") for m in messages if m.get("role") == "assistant"]
    if not turns:
        return []
    parsed = [parse_completion(t, process.split, process.step_format) for t in turns]
    answered = next((k for k, p in enumerate(parsed) if p.finished), None)
    if answered is None and process.unfinished_reward is not None:
        return [[] for _ in turns[:-1]] + [[float(process.unfinished_reward)]]
    kept = parsed if answered is None else parsed[: answered + 1]
    steps = [s for p in kept for s in p.steps]
    (scores,) = process.scorer.score([make_trace(problem, steps)]) if steps else ([],)
    rows = split_by_turn(scores, [len(p.steps) for p in kept])
    return rows + [[] for _ in turns[len(kept) :]]


def _trajectory_rewards(messages: Sequence[dict[str, Any]], process: ProcessReward) -> list[list[float]]:
    """One reward per assistant message of a tool-using trajectory (see :func:`turn_step_rewards`); it is
    unfinished when its last assistant message still calls a tool (the agent never answered)."""
    from prmkit.core.errors import InputError
    from prmkit.core.model import Problem, Trace
    from prmkit.formats.base import RecordChecker
    from prmkit.formats.chat import first_user_text, read_messages

    ck = RecordChecker("messages", None)
    prompt, steps = read_messages(ck, list(messages))
    if ck.issues:
        raise InputError(ck.issues)
    if not steps:
        return []
    if steps[-1].tool_calls and process.unfinished_reward is not None:
        return [[] for _ in steps[:-1]] + [[float(process.unfinished_reward)]]
    trace = Trace(id="0", problem=Problem(id="0", text=first_user_text(prompt)), steps=steps)
    (scores,) = process.scorer.score([trace])
    return [[float(x)] for x in scores]

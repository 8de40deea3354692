"""What a verl dataset row tells prmkit's reward manager: the problem the PRM reads and the reference
answer the outcome forms grade against, from the row fields verl passes or, where it passes only
``raw_prompt`` (its v1 trainer's colocated path), from verl's dataset files.

Split from :mod:`prmkit.rl.verl_client` (the manager and the server's side) so each reads in one
sitting; like it, this file imports without verl, torch or pandas (verl's own dependencies load when a
dataset file is read).
"""

# No ``from __future__ import annotations``: verl_client, loaded by path by verl, imports this file.
import logging
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from prmkit.core.steps import DEFAULT_SPECIAL

logger = logging.getLogger("prmkit.verl")

USER_TURNS = (("<|im_start|>user", "<|im_end|>"), ("<|start_header_id|>user<|end_header_id|>", "<|eot_id|>"))
"""(start, end) of a user turn in the chat templates whose markers prmkit knows (ChatML, Llama 3)."""


def _section(config: Any, *keys: str) -> Any:
    """``config[keys[0]][keys[1]]...`` of verl's DictConfig (or a dict); {} where one is missing."""
    for key in keys:
        config = config.get(key, {}) if hasattr(config, "get") else {}
    return config


def _content(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence):  # OpenAI content parts
        return "\n".join(
            p.get("text", "") for p in value if isinstance(p, Mapping) and p.get("type") == "text"
        )
    return "" if value is None else str(value)


def user_turn(messages: Any) -> str:
    """The last user message's text of a ``raw_prompt`` (a list or numpy array of message dicts)."""
    try:
        items = list(messages)
    except TypeError:
        return ""
    users = [m for m in items if isinstance(m, Mapping) and m.get("role") == "user"]
    return _content(users[-1].get("content")).strip() if users else ""


def template_user_turn(prompt: str) -> str:
    """The last user turn of a chat-templated prompt decoded with its special tokens; the prompt with
    known markers removed when it has no known user turn."""
    for start, end in USER_TURNS:
        at = prompt.rfind(start)
        if at >= 0:
            return prompt[at + len(start) :].split(end, 1)[0].strip()
    return re.sub(DEFAULT_SPECIAL, "", prompt).strip()


def problem_of(
    extra_info: Mapping[str, Any] | None, raw_prompt: Any = None, prompt_text: str | None = None
) -> str:
    """The problem as the PRM should read it, from what verl's own preprocessing writes.

    ``extra_info["question"]`` (gsm8k.py writes the question without the instruction) or ``"problem"``
    first; then the last user turn of ``raw_prompt`` (every verl dataset row has one; MATH's
    math_dataset.py writes only ``extra_info.split/index``, so its problem comes from here, instruction
    included); then the user turn of ``prompt_text``, the prompt decoded **with** its special tokens
    (decoding with ``skip_special_tokens=True`` leaves the roles' words, ``system``/``user``, in the text).
    """
    info = extra_info or {}
    for key in ("question", "problem"):
        value = info.get(key) if isinstance(info, Mapping) else None
        if isinstance(value, str) and value.strip():
            return value.strip()
    if raw_prompt is not None and (text := user_turn(raw_prompt)):
        return text
    return template_user_turn(prompt_text) if prompt_text else ""


def dataset_rows(data: Any) -> dict[str, dict[str, str]]:
    """What each row of verl's dataset files holds that a colocated reward path is not handed: its
    ``extra_info`` question (``question``/``problem``) and its ``reward_model.ground_truth``, keyed by
    the last user turn of the row's prompt (``data.prompt_key``), from ``data.train_files`` and
    ``data.val_files`` (local parquet files, as verl's ``RLHFDataset`` reads them).

    Why: verl 0.9.1's v1 trainer hands a colocated reward path only ``raw_prompt``
    (``PPOTrainer._compute_reward_colocate``), not ``extra_info``, so without this the PRM read gsm8k's
    question with verl's instruction attached (scores off by up to 0.013, advantages by up to 0.30), and
    the outcome estimators would have no reference answer. A file that cannot be read is logged and left
    out; its rows fall back to the user turn (and an unknown outcome)."""
    import pandas as pd  # verl's own dependencies: its datasets are parquet files read with them
    import pyarrow.parquet as pq

    key = str(_section(data, "prompt_key") or "prompt")
    files: list[str] = []
    for name in ("train_files", "val_files"):
        value = _section(data, name)
        files += [value] if isinstance(value, str) else [str(v) for v in value or [] if isinstance(v, str)]
    out: dict[str, dict[str, str]] = {}
    for name in dict.fromkeys(files):
        path = os.path.expanduser(name)
        try:
            present = set(pq.read_schema(path).names)
            frame = pd.read_parquet(
                path, columns=[c for c in (key, "extra_info", "reward_model") if c in present]
            )
            prompts, infos = frame[key], frame.get("extra_info", [None] * len(frame))
            golds = frame.get("reward_model", [None] * len(frame))
        except (OSError, ValueError, KeyError, ImportError) as err:
            logger.warning("prmkit verl: %s: not read for its rows' question and answer (%s)", path, err)
            continue
        for prompt, info, gold in zip(prompts, infos, golds, strict=True):
            turn = user_turn(prompt)
            row = {
                "question": problem_of(info if isinstance(info, Mapping) else None),
                "ground_truth": ground_truth_of(gold),
            }
            row = {k: v for k, v in row.items() if v}
            if turn and row:
                out.setdefault(turn, row)
    return out


def ground_truth_of(reward_model: Any) -> str | None:
    """A verl row's reference answer: ``reward_model["ground_truth"]`` as text (None where absent)."""
    gold = reward_model.get("ground_truth") if isinstance(reward_model, Mapping) else None
    return None if gold is None or not str(gold).strip() else str(gold).strip()


def _dataset_row(extras: Mapping[str, Any], manager: Any) -> Mapping[str, str]:
    raw = extras.get("raw_prompt")
    if raw is None:
        return {}
    if manager.questions is None:
        manager.questions = dataset_rows(_section(manager.config, "data"))
    return manager.questions.get(user_turn(raw), {})


def row_info(extras: Mapping[str, Any], manager: Any) -> Mapping[str, Any]:
    """A row's ``extra_info``; where verl passed none with a question (its v1 trainer's colocated path
    passes only ``raw_prompt``), the question its dataset row holds (:func:`dataset_rows`, read once
    per ``manager`` from its ``config.data`` into ``manager.questions``)."""
    info = extras.get("extra_info")
    info = info if isinstance(info, Mapping) else {}
    if problem_of(info):
        return info
    question = _dataset_row(extras, manager).get("question")
    return {**info, "question": question} if question else info


def row_answer(extras: Mapping[str, Any], manager: Any) -> str | None:
    """A row's reference answer: ``reward_model.ground_truth`` as verl passes it, else its dataset row's
    (:func:`dataset_rows`; the colocated path passes only ``raw_prompt``), else None."""
    return ground_truth_of(extras.get("reward_model")) or _dataset_row(extras, manager).get("ground_truth")

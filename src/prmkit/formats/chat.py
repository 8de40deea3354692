"""OpenAI-style chat logs: JSONL of ``{"messages": [...], "tools": [...]}``, what agent frameworks write.

This module also holds the message mapping that :mod:`prmkit.formats.agentprocessbench` shares, so both
formats read a trajectory the same way:

- the messages before the first assistant message (system prompt, the task's user message) are the
  trajectory's prompt, kept raw in ``Trace.metadata["chat"]["prompt"]``;
- each assistant message is one :class:`~prmkit.core.model.Step`: ``text`` = content, ``tool_calls`` from
  ``tool_calls`` (arguments kept as the agent's JSON *text*), kind ``tool_call`` when it calls tools;
- the tool results and user turns after it, before the next assistant message, are its ``observations``
  (role, ``tool_call_id`` -> ``call_id``, ``name``).

Whatever a message holds beyond that (``reasoning_content``, a ``null`` content, a call's ``type``, an
unusual key order) is kept in the ``"chat"`` metadata of its Step, ToolCall or Observation as the
difference from what the writer would build, so reading then writing gives the file back byte for byte.
The JSON layout (separators, ASCII escapes) is judged from the file's first line and kept too.

A chat log holds no labels. What it cannot hold (ids, labels with their provenance, outcome, final
answer, generator, a step kind other than the derived one, other formats' metadata) is written under one
top-level ``"prmkit"`` key, only when a trace has any of it, and read back from there: prmkit -> chat ->
prmkit loses nothing.

Errors, all located (``file:line: field: expected ..., found ...``): an unknown role; a tool message whose
``tool_call_id`` names no earlier call; arguments that are not a string (malformed JSON *text* is the
agent's error to be judged, kept as written); a system message after the first assistant message.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prmkit.core.errors import issues_from_validation, short
from prmkit.core.files import atomic_write, read_input_head
from prmkit.core.model import Label, Observation, Problem, Step, ToolCall, Trace
from prmkit.formats.base import (
    Format,
    ReadResult,
    RecordChecker,
    WriteReport,
    digest,
    dump_rows,
    ordered,
    read_records,
    take_options,
    unique_ids,
)

NAME = "chat"
KEY = "chat"
"""Metadata namespace of message-level details, shared with agentprocessbench so a conversion keeps them."""
ROLES = ("system", "user", "assistant", "tool")
BLOCK = "prmkit"
"""Top-level key of a chat record holding what a chat log cannot (labels, ids, outcome...)."""
STYLES: tuple[dict[str, Any], ...] = (
    {"separators": [", ", ": "], "ensure_ascii": True},
    {"separators": [", ", ": "], "ensure_ascii": False},
    {"separators": [",", ":"], "ensure_ascii": False},
    {"separators": [",", ":"], "ensure_ascii": True},
)
"""JSON layouts a log may use; the first that reproduces a file's first line is the file's."""
LOST: list[str] = []
"""Nothing: what the messages cannot hold goes in the ``prmkit`` block."""


# --- raw details: what a writer needs besides the model to give a JSON object back exactly ----------------


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def keep(raw: dict, built: dict) -> dict[str, Any]:
    """The difference between ``raw`` and what a writer builds from the model (``built``).

    ``raw``: keys whose value differs or that the writer does not build (extras such as
    ``reasoning_content``); ``absent``: built keys the original lacked; ``key_order`` when the order
    differs. Values are compared as JSON text, so ``1`` and ``true`` or key orders inside differ.
    """
    meta: dict[str, Any] = {}
    diff = {k: v for k, v in raw.items() if k not in built or _dumps(built[k]) != _dumps(v)}
    absent = [k for k in built if k not in raw]
    if diff:
        meta["raw"] = diff
    if absent:
        meta["absent"] = absent
    if list(restore(built, meta)) != list(raw):
        meta["key_order"] = list(raw)
    return meta


def restore(built: dict, meta: dict[str, Any]) -> dict:
    """``built`` with the details :func:`keep` recorded applied: the original object."""
    out = {k: v for k, v in built.items() if k not in meta.get("absent", ())}
    out.update(meta.get("raw", {}))
    return ordered(out, meta.get("key_order"))


def json_style(path: Path, default: dict[str, Any]) -> dict[str, Any]:
    """The JSON layout of a JSONL file: the style in :data:`STYLES` that reproduces its first line."""
    if path.suffix == ".parquet":
        return default
    head = read_input_head(path, 1 << 24).decode("utf-8", errors="replace")
    line = head.lstrip("\ufeff").split("\n", 1)[0]
    try:
        first = json.loads(line)
    except ValueError:
        return default
    return next((style for style in (default, *STYLES) if dumps(first, style) == line), default)


def dumps(record: dict, style: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=style["ensure_ascii"], separators=tuple(style["separators"]))


def write_lines(path: str | Path, records: Iterable[dict], style: dict[str, Any]) -> int:
    """Write records atomically, one per line in ``style`` (Parquet by suffix)."""
    if Path(path).suffix == ".parquet":
        return dump_rows(path, records)
    n = 0
    with atomic_write(path) as fh:
        for rec in records:
            fh.write(dumps(rec, style) + "\n")
            n += 1
    return n


# --- messages -> steps ---------------------------------------------------------------------------------


def _call(ck: RecordChecker, raw: Any, at: str) -> ToolCall | None:
    if not isinstance(raw, dict):
        ck.issue(at, "a tool call object {id, type, function}", short(raw), "type")
        return None
    call_id = ck.get(raw, "id", str, "a string (the call id)", at, nullable=True) if "id" in raw else None
    fn = ck.get(raw, "function", dict, "an object {name, arguments}", at)
    if fn is RecordChecker.BAD:
        return None
    name = ck.get(fn, "name", str, "a string (the tool's name)", f"{at}.function")
    args = ck.get(
        fn, "arguments", str, 'a JSON string (the arguments as text, e.g. \'{"q": "x"}\')', f"{at}.function"
    )
    if RecordChecker.BAD in (call_id, name, args):
        return None
    call = ToolCall(name=name, arguments=args, id=call_id)
    details = keep(raw, _call_dict(call))
    if details:
        call.metadata[KEY] = details
    return call


def _assistant(ck: RecordChecker, msg: dict, at: str, seen: set[str]) -> Step | None:
    content = ck.get(msg, "content", str, "a string or null", at, nullable=True) if "content" in msg else ""
    raw_calls = (
        ck.get(msg, "tool_calls", list, "a list of tool calls or null", at, nullable=True)
        if "tool_calls" in msg
        else None
    )
    calls = []
    for j, raw in enumerate(raw_calls if isinstance(raw_calls, list) else []):
        if isinstance(raw, dict) and isinstance(raw.get("id"), str):
            seen.add(raw["id"])  # even when the call is bad: its results are not a second error
        call = _call(ck, raw, f"{at}.tool_calls[{j}]")
        if call is not None:
            calls.append(call)
    if content is RecordChecker.BAD or raw_calls is RecordChecker.BAD:
        return None
    step = Step(text=content or "", kind="tool_call" if calls else "reasoning", tool_calls=calls)
    details = keep(msg, _assistant_dict(step))
    if details:
        step.metadata[KEY] = details
    return step


def _observation(ck: RecordChecker, msg: dict, at: str, role: str, seen: set[str]) -> Observation | None:
    content = ck.get(msg, "content", str, "a string", at)
    call_id = name = None
    if role == "tool":
        if "tool_call_id" in msg:
            call_id = ck.get(msg, "tool_call_id", str, "a string or null", at, nullable=True)
            if isinstance(call_id, str) and call_id not in seen:
                ck.issue(
                    f"{at}.tool_call_id",
                    "the id of a tool call in an earlier assistant message",
                    short(call_id),
                    "mismatch",
                )
        if "name" in msg:
            name = ck.get(msg, "name", str, "a string or null (the tool's name)", at, nullable=True)
    if RecordChecker.BAD in (content, call_id, name):
        return None
    obs = Observation(content=content, role=role, call_id=call_id, name=name)  # type: ignore[arg-type]
    details = keep(msg, _observation_dict(obs))
    if details:
        obs.metadata[KEY] = details
    return obs


def read_messages(ck: RecordChecker, messages: list, where: str = "messages") -> tuple[list, list[Step]]:
    """The prompt (raw messages before the first assistant message) and the steps of ``messages``.

    Issues go to ``ck``; the caller checks ``ck.issues`` before using the result.
    """
    prompt: list = []
    steps: list[Step] = []
    seen: set[str] = set()
    for i, msg in enumerate(messages):
        at = f"{where}[{i}]"
        if not isinstance(msg, dict):
            ck.issue(at, "a message object {role, content, ...}", short(msg), "type")
            continue
        role = ck.get(msg, "role", str, "a string: system, user, assistant or tool", at)
        if role is RecordChecker.BAD:
            continue
        if role not in ROLES:
            ck.issue(f"{at}.role", "one of system, user, assistant, tool", short(role), "range")
        elif role == "assistant":
            step = _assistant(ck, msg, at, seen)
            steps.append(step if step is not None else Step(text=""))
        elif not steps:
            if role == "tool":  # checked (its call id cannot match), kept raw
                _observation(ck, msg, at, role, seen)
            prompt.append(msg)
        elif role == "system":
            ck.issue(
                f"{at}.role",
                "tool or user (a system message belongs before the first step)",
                "'system'",
                "range",
            )
        else:
            obs = _observation(ck, msg, at, role, seen)
            if obs is not None:
                steps[-1].observations.append(obs)
    return prompt, steps


# --- steps -> messages ---------------------------------------------------------------------------------


def _call_dict(call: ToolCall) -> dict:
    out: dict[str, Any] = {} if call.id is None else {"id": call.id}
    out.update({"type": "function", "function": {"name": call.name, "arguments": call.arguments}})
    return out


def _assistant_dict(step: Step) -> dict:
    out: dict[str, Any] = {"role": "assistant", "content": step.text}
    if step.tool_calls:
        out["tool_calls"] = [restore(_call_dict(c), c.metadata.get(KEY, {})) for c in step.tool_calls]
    return out


def _observation_dict(obs: Observation) -> dict:
    out: dict[str, Any] = {"role": obs.role}
    if obs.name is not None:
        out["name"] = obs.name
    out["content"] = obs.content
    if obs.call_id is not None:
        out["tool_call_id"] = obs.call_id
    return out


def prompt_meta(prompt: list, text: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``chat`` metadata of a trace: ``meta`` plus its prompt unless it is the one a writer would make."""
    meta = dict(meta or {})
    if prompt != [{"role": "user", "content": text}]:
        meta = {"prompt": prompt, **meta}
    return {KEY: meta} if meta else {}


def prompt_messages(trace: Trace) -> list:
    """The messages before the first step: as read, else one user message holding the problem's text."""
    prompt = trace.metadata.get(KEY, {}).get("prompt")
    return list(prompt) if prompt is not None else [{"role": "user", "content": trace.problem.text}]


def write_messages(trace: Trace) -> tuple[list[dict], list[int]]:
    """The messages of ``trace`` and the message index of each step."""
    out = prompt_messages(trace)
    index = []
    for step in trace.steps:
        index.append(len(out))
        out.append(restore(_assistant_dict(step), step.metadata.get(KEY, {})))
        out.extend(restore(_observation_dict(o), o.metadata.get(KEY, {})) for o in step.observations)
    return out, index


def step_index(prompt: list, steps: list[Step]) -> list[int]:
    """The message index of each step, as :func:`write_messages` places them."""
    out, at = [], len(prompt)
    for step in steps:
        out.append(at)
        at += 1 + len(step.observations)
    return out


def first_user_text(prompt: list) -> str:
    """The problem a trajectory solves: its first user message's text ("" when there is none)."""
    for msg in prompt:
        if msg.get("role") == "user" and isinstance(msg.get("content"), str):
            return msg["content"]
    return ""


# --- the chat format -----------------------------------------------------------------------------------


def _tools(ck: RecordChecker, rec: dict) -> list | None:
    if "tools" not in rec:
        return []
    tools = ck.get(rec, "tools", list, "a list of tool schemas {type, function}")
    if tools is RecordChecker.BAD:
        return None
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            ck.issue(f"tools[{i}]", "a tool schema object", short(tool), "type")
    return tools


def _block(ck: RecordChecker, rec: dict, index: list[int], steps: list[Step]) -> dict:
    """The ``prmkit`` block's fields, with its labels put on the steps they name."""
    block = ck.get(rec, BLOCK, dict, "an object (what prmkit wrote beside the chat)")
    if block is RecordChecker.BAD:
        return {}
    for key in ("problem", "labels", "steps", "metadata"):
        if key in block and not isinstance(block[key], dict):
            ck.issue(f"{BLOCK}.{key}", "an object", short(block[key]), "type")
            return {}
    by_index = dict(zip(index, steps, strict=True))
    for key, labels in block.get("labels", {}).items():
        step = by_index.get(int(key)) if key.isascii() and key.isdigit() else None
        if step is None:
            ck.issue(f"{BLOCK}.labels.{key}", "the index of an assistant message", short(key), "range")
            continue
        if not isinstance(labels, list):
            ck.issue(f"{BLOCK}.labels.{key}", "a list of labels", short(labels), "type")
            continue
        for n, lab in enumerate(labels):
            try:
                step.labels.append(Label.model_validate(lab, strict=True))
            except ValidationError as err:
                ck.issues.extend(issues_from_validation(err, ck.file, ck.line, f"{BLOCK}.labels.{key}[{n}]."))
    position = {i: k for k, i in enumerate(index)}
    for key, extra in block.get("steps", {}).items():
        k = position.get(int(key)) if key.isascii() and key.isdigit() else None
        if k is None or not isinstance(extra, dict):
            ck.issue(
                f"{BLOCK}.steps.{key}",
                "an assistant message's index -> {kind, metadata}",
                short(key),
                "range",
            )
            continue
        try:
            steps[k] = Step.model_validate(
                {
                    **steps[k].model_dump(),
                    **extra,
                    "metadata": {**steps[k].metadata, **extra.get("metadata", {})},
                },
                strict=True,
            )
        except ValidationError as err:
            ck.issues.extend(issues_from_validation(err, ck.file, ck.line, f"{BLOCK}.steps.{key}."))
    return block


def _parse(rec: dict, ck: RecordChecker) -> Trace | None:
    messages = ck.get(rec, "messages", list, "a list of chat messages")
    tools = _tools(ck, rec)
    if messages is RecordChecker.BAD or tools is None:
        return None
    prompt, steps = read_messages(ck, messages)
    block = _block(ck, rec, step_index(prompt, steps), steps) if BLOCK in rec else {}
    if ck.issues:
        return None
    derived = f"{NAME}-{digest(_dumps(messages))}"
    text = first_user_text(prompt)
    pb = block.get("problem", {})
    meta: dict[str, Any] = {}
    if "id" not in block:  # the id is the content's: written back without a prmkit block
        meta["derived_id"] = derived
    record = keep(rec, _record(messages, tools, block))
    if record:
        meta["record"] = record
    try:
        problem = Problem.model_validate(
            {"id": f"{NAME}-{digest(text)}", "text": text, **pb, "tools": tools}, strict=True
        )
    except ValidationError as err:
        ck.issues.extend(issues_from_validation(err, ck.file, ck.line, f"{BLOCK}.problem."))
        return None
    fields = {k: block[k] for k in ("final_answer", "answer_correct", "generator") if k in block}
    try:
        return Trace.model_validate(
            {
                "id": block.get("id", derived),
                "problem": problem,
                "steps": steps,
                **fields,
                "metadata": {**block.get("metadata", {}), **prompt_meta(prompt, problem.text, meta)},
            },
            strict=True,
        )
    except ValidationError as err:
        ck.issues.extend(issues_from_validation(err, ck.file, ck.line, f"{BLOCK}."))
        return None


def _record(messages: list, tools: list, block: dict) -> dict:
    out: dict[str, Any] = {"messages": messages, "tools": tools}
    if block:
        out[BLOCK] = block
    return out


def read(path: str | Path, skip_invalid: bool = False) -> ReadResult:
    """Read a chat log (JSONL: one ``{"messages": [...], "tools": [...]}`` per line)."""
    path = Path(path)
    traces, report = read_records(path, NAME, _parse, skip_invalid)
    style = json_style(path, STYLES[0])
    for trace in traces:
        if style != STYLES[0]:
            trace.metadata.setdefault(KEY, {})["style"] = style
    return ReadResult(unique_ids(traces), format=NAME, path=str(path), skipped=report)


def _labels(trace: Trace, index: list[int]) -> dict[str, list]:
    return {
        str(i): [lab.model_dump(mode="json", exclude_defaults=True) for lab in step.labels]
        for i, step in zip(index, trace.steps, strict=True)
        if step.labels
    }


def _step_details(trace: Trace, index: list[int]) -> dict[str, dict]:
    """Per step, what its message cannot say: a kind other than the one derived, other formats' metadata."""
    out = {}
    for i, step in zip(index, trace.steps, strict=True):
        extra: dict[str, Any] = {}
        if step.kind != ("tool_call" if step.tool_calls else "reasoning"):
            extra["kind"] = step.kind
        others = {k: v for k, v in step.metadata.items() if k != KEY}
        if others:
            extra["metadata"] = others
        if extra:
            out[str(i)] = extra
    return out


def block_of(trace: Trace, index: list[int]) -> dict[str, Any]:
    """What a chat log cannot hold of ``trace`` (empty when nothing), as the ``prmkit`` block."""
    meta = trace.metadata.get(KEY, {})
    derived = meta.get("derived_id")
    block: dict[str, Any] = {}
    if derived is None or not (trace.id == derived or trace.id.startswith(derived + "-")):
        block["id"] = trace.id
    p = trace.problem
    text = first_user_text(prompt_messages(trace))
    problem = {
        "id": p.id if p.id != f"{NAME}-{digest(text)}" else None,
        "text": p.text if p.text != text else None,
        "answer": p.answer,
        "source": p.source,
        "metadata": p.metadata or None,
    }
    problem = {k: v for k, v in problem.items() if v is not None}
    others = {k: v for k, v in trace.metadata.items() if k != KEY}
    fields = {
        "problem": problem or None,
        "final_answer": trace.final_answer,
        "answer_correct": trace.answer_correct,
        "generator": trace.generator,
        "labels": _labels(trace, index) or None,
        "steps": _step_details(trace, index) or None,
        "metadata": others or None,
    }
    block.update({k: v for k, v in fields.items() if v is not None})
    return block


def to_record(trace: Trace) -> dict:
    messages, index = write_messages(trace)
    block = block_of(trace, index)
    rec = _record(messages, trace.problem.tools, block)
    return restore(rec, trace.metadata.get(KEY, {}).get("record", {}))


def write(path: str | Path, traces: list[Trace], **options: Any) -> WriteReport:
    """Write traces as a chat log, one ``{"messages", "tools"}`` record per trace (plus ``prmkit`` when needed).

    The JSON layout is the one the traces were read with (a chat log's own), else ``json.dumps``
    defaults. Traces of any format can be written: a trace with no prompt gets one user message with its
    problem's text.
    """
    opts = take_options(NAME, options, {})
    report = WriteReport(format=NAME, path=str(path), traces=len(traces), lost=list(LOST), options=opts)
    style = next((t.metadata[KEY]["style"] for t in traces if "style" in t.metadata.get(KEY, {})), STYLES[0])
    report.written = write_lines(path, (to_record(t) for t in traces), style)
    return report


FORMAT = Format(
    NAME,
    read,
    write,
    "messages with tool calls and observations, tools; labels and ids under a prmkit key",
)

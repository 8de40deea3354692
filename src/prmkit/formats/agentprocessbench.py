"""AgentProcessBench (``RUCBM/AgentProcessBench``, ``data/AgentProcessBench/<dataset>.jsonl``): agent trajectories
with human step labels in {+1, 0, -1} on assistant messages and a final label.

A record (compact JSON, non-ASCII raw) is ``{total_index, query_index, sample_index, question,
data_source, ground_truth, answer_text, messages, tool_metrics, tools, step_labels, final_label}``.
``messages`` are OpenAI-style chat messages, read with the mapping of :mod:`prmkit.formats.chat`: each
assistant message is a Step (tool calls with their JSON *text* arguments), the tool results and user
turns after it are its observations, the messages before the first assistant message are the prompt.

Core mapping: ``step_labels`` (message index as a string -> rating) -> a Label on that assistant
message's step, provenance method ``human`` (the benchmark's expert annotations, as ProcessBench's reader reads them), actor ``agentprocessbench`` (source
``human:agentprocessbench``); ``final_label`` 1 / -1 -> ``Trace.answer_correct`` True / False;
``question`` -> Problem.text, ``tools`` -> Problem.tools, ``data_source`` -> Problem.source,
``ground_truth.target[0]`` -> Problem.answer (the whole ``ground_truth`` is kept when it holds more),
``answer_text`` -> Trace.final_answer. Trace.id is ``<data_source>-<total_index>`` (the key of the
benchmark's own metric script; else query_index and sample_index, else ``record_id``); Problem.id is
``<data_source>-q<query_index>``, so the samples of one question share their problem. The indices,
``tool_metrics``, unknown keys, a missing key and an unusual key order are kept in
``Trace.metadata["agentprocessbench"]``, message-level details under ``"chat"``: reading then writing
gives the file back byte for byte.

Errors, all located: a message with an unknown role; a tool message whose ``tool_call_id`` names no
earlier call; arguments that are not a string; a ``step_labels`` key that is not an integer string or not
an assistant message's index; a label not in -1, 0, 1 (``true`` is not 1); a ``final_label`` not 1 or -1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prmkit.core.errors import short
from prmkit.core.model import Label, Problem, Provenance, Trace
from prmkit.formats import chat
from prmkit.formats.base import (
    FORMAT_VERSION,
    Format,
    ReadResult,
    RecordChecker,
    WriteReport,
    digest,
    graded,
    ordered,
    read_records,
    take_options,
    unique_ids,
)
from prmkit.formats.binary import pick_source

NAME = "agentprocessbench"
SOURCE = "human:agentprocessbench"
PROVENANCE = Provenance(
    method="human",
    actor="agentprocessbench",
    params={
        "source": "RUCBM/AgentProcessBench",
        "annotation": "human step labels on assistant messages: +1 good, 0 neutral, -1 wrong",
    },
    version=FORMAT_VERSION,
)
KEYS = (
    "total_index",
    "query_index",
    "sample_index",
    "question",
    "data_source",
    "ground_truth",
    "answer_text",
    "messages",
    "tool_metrics",
    "tools",
    "step_labels",
    "final_label",
)
INDICES = ("total_index", "query_index", "sample_index")
STYLE: dict[str, Any] = {"separators": [",", ":"], "ensure_ascii": False}
"""How the benchmark's files are written: compact, non-ASCII raw."""
LOST = [
    "Trace.id, Problem.id and generator (records are keyed by total_index, query_index, sample_index)",
    "labels of other sources than the exported one, label provenance, soft scores (thresholded to +1 / -1)",
    "step kinds (derived from tool calls when read back), metadata of other formats (a chat log's extra keys)",
]


def _labels(ck: RecordChecker, raw: Any, roles: list[str]) -> dict[int, int]:
    """``step_labels`` as message index -> rating; issues for keys and values the benchmark cannot hold."""
    out: dict[int, int] = {}
    for key, value in raw.items():
        where = f"step_labels.{key}"
        if not (key.isascii() and key.isdigit()):
            ck.issue(where, "a message index written as a string, e.g. '2'", short(key), "type")
            continue
        i = int(key)
        if i >= len(roles) or roles[i] != "assistant":
            found = f"{key} (a {roles[i]} message)" if i < len(roles) else f"{key} ({len(roles)} messages)"
            ck.issue(where, "the index of an assistant message", found, "range")
        elif isinstance(value, bool) or value not in (-1, 0, 1) or not isinstance(value, int):
            ck.issue(where, "a rating -1, 0 or 1", short(value), "range")
        else:
            out[i] = value
    return out


def _fields(ck: RecordChecker, rec: dict) -> dict[str, Any]:
    """The typed fields of a record (only those present); BAD where a check failed."""
    out = {
        "question": ck.get(rec, "question", str, "a string (the task)"),
        "messages": ck.get(rec, "messages", list, "a list of chat messages"),
    }
    for key in INDICES:
        if key in rec:
            out[key] = ck.get(rec, key, int, "an integer")
    checks: dict[str, tuple[type | tuple[type, ...], str, bool]] = {
        "data_source": (str, "a string such as 'searchR1_hotpotqa' or null", True),
        "answer_text": (str, "a string or null", True),
        "tools": (list, "a list of tool schemas {type, function}", False),
        "step_labels": (dict, "an object: message index -> -1, 0 or 1", False),
        "final_label": (int, "1 or -1", False),
    }
    for key, (types, expected, nullable) in checks.items():
        if key in rec:
            out[key] = ck.get(rec, key, types, expected, nullable=nullable)
    if out.get("final_label") not in (None, RecordChecker.BAD, 1, -1):
        ck.issue("final_label", "1 or -1", short(out["final_label"]), "range")
    return out


def _answer(ground_truth: Any) -> str | None:
    target = ground_truth.get("target") if isinstance(ground_truth, dict) else None
    if isinstance(target, list) and target and isinstance(target[0], str):
        return target[0]
    return target if isinstance(target, str) else None


def _ground_truth(answer: str | None) -> dict | None:
    return None if answer is None else {"target": [answer]}


def _ids(rec: dict, f: dict[str, Any]) -> tuple[str, str]:
    """(trace id, problem id): keyed as the benchmark's metric script keys records."""
    ds = f.get("data_source") or NAME
    if "total_index" in f:
        tid = f"{ds}-{f['total_index']}"
    elif "query_index" in f and "sample_index" in f:
        tid = f"{ds}-{f['query_index']}-{f['sample_index']}"
    elif isinstance(rec.get("record_id"), str | int):
        tid = f"{ds}-{rec['record_id']}"
    else:
        tid = f"{ds}-{digest(chat._dumps(rec['messages']))}"
    pid = f"{ds}-q{f['query_index']}" if "query_index" in f else f"{ds}-{digest(f['question'])}"
    return tid, pid


def _parse(rec: dict, ck: RecordChecker) -> Trace | None:
    f = _fields(ck, rec)
    if RecordChecker.BAD in (f["question"], f["messages"]):
        return None
    prompt, steps = chat.read_messages(ck, f["messages"])
    roles = [m.get("role") if isinstance(m, dict) else None for m in f["messages"]]
    labels = _labels(ck, f["step_labels"], roles) if isinstance(f.get("step_labels"), dict) else {}
    for i, tool in enumerate(f.get("tools") or []):
        if not isinstance(tool, dict):
            ck.issue(f"tools[{i}]", "a tool schema object", short(tool), "type")
    if ck.issues or RecordChecker.BAD in f.values():
        return None
    index = chat.step_index(prompt, steps)
    for i, step in zip(index, steps, strict=True):
        if i in labels:
            step.labels.append(Label(rating=labels[i], provenance=PROVENANCE))  # type: ignore[arg-type]
    tid, pid = _ids(rec, f)
    answer = _answer(rec.get("ground_truth"))
    problem = Problem(
        id=pid, text=f["question"], answer=answer, source=f.get("data_source"), tools=f.get("tools", [])
    )
    if "ground_truth" in rec and rec["ground_truth"] != _ground_truth(answer):
        problem.metadata[NAME] = {"ground_truth": rec["ground_truth"]}
    final = f.get("final_label")
    trace = Trace(
        id=tid,
        problem=problem,
        steps=steps,
        final_answer=f.get("answer_text"),
        answer_correct=None if final is None else final == 1,
        metadata=chat.prompt_meta(prompt, f["question"]),
    )
    meta: dict[str, Any] = {
        "fields": {k: rec[k] for k in rec if k in (*INDICES, "tool_metrics") or k not in KEYS}
    }
    if "step_labels" in rec and list(rec["step_labels"]) != sorted(rec["step_labels"], key=_as_index):
        meta["label_order"] = list(rec["step_labels"])
    built = to_record(trace.model_copy(update={"metadata": {**trace.metadata, NAME: meta}}), SOURCE, 0.5)
    absent = [k for k in built if k not in rec]
    if absent:
        meta["absent"] = absent
    if list(ordered({k: v for k, v in built.items() if k not in absent}, None)) != list(rec):
        meta["key_order"] = list(rec)
    trace.metadata[NAME] = meta
    return trace


def _as_index(key: str) -> int:
    return int(key) if key.isdigit() else -1


def read(path: str | Path, skip_invalid: bool = False) -> ReadResult:
    """Read an AgentProcessBench JSONL file: one trajectory per line, labelled ``human:agentprocessbench``."""
    path = Path(path)
    traces, report = read_records(path, NAME, _parse, skip_invalid)
    style = chat.json_style(path, STYLE)
    for trace in traces:
        if style != STYLE:
            trace.metadata[NAME]["style"] = style
    return ReadResult(unique_ids(traces), format=NAME, path=str(path), skipped=report)


def step_labels(trace: Trace, index: list[int], source: str | None, threshold: float) -> dict[str, int]:
    """The ``step_labels`` of ``trace`` from ``source``: message index -> -1, 0 or 1 (soft scores thresholded)."""
    out = {}
    for i, step in zip(index, trace.steps, strict=True):
        lab = step.label(source) if source is not None else None
        if lab is not None:
            out[str(i)] = lab.rating if lab.rating is not None else lab.verdict(threshold)
    return out


def to_record(trace: Trace, source: str | None, threshold: float = 0.5) -> dict:
    """The benchmark record of ``trace`` (keys the trace was read without stay absent)."""
    meta = trace.metadata.get(NAME, {})
    fields = meta.get("fields", {})
    messages, index = chat.write_messages(trace)
    labels = step_labels(trace, index, source, threshold)
    p = trace.problem
    rec: dict[str, Any] = {
        **{k: fields.get(k, 0) for k in INDICES},
        "question": p.text,
        "data_source": p.source,
        "ground_truth": p.metadata.get(NAME, {}).get("ground_truth", _ground_truth(p.answer)),
        "answer_text": trace.final_answer,
        "messages": messages,
        "tool_metrics": fields.get("tool_metrics", {}),
        "tools": p.tools,
        "step_labels": ordered(labels, meta.get("label_order")),
        "final_label": None if trace.answer_correct is None else 1 if trace.answer_correct else -1,
        **{k: v for k, v in fields.items() if k not in KEYS},
    }
    absent = meta.get("absent", ())
    rec = {k: v for k, v in rec.items() if not (k in absent and v in (None, {}, [], 0))}
    if rec["final_label"] is None:
        del rec["final_label"]
    return ordered(rec, meta.get("key_order"))


def _number(traces: list[Trace]) -> list[Trace]:
    """Copies of traces not read from this format, given benchmark indices in file order."""
    problems: dict[str, int] = {}
    samples: dict[str, int] = {}
    out = []
    for i, trace in enumerate(traces):
        if NAME in trace.metadata:
            out.append(trace)
            continue
        q = problems.setdefault(trace.problem.id, len(problems))
        s = samples[trace.problem.id] = samples.get(trace.problem.id, -1) + 1
        fields = {"total_index": i, "query_index": q, "sample_index": s}
        out.append(trace.model_copy(update={"metadata": {**trace.metadata, NAME: {"fields": fields}}}))
    return out


def write(path: str | Path, traces: list[Trace], **options: Any) -> WriteReport:
    """Write traces as AgentProcessBench JSONL (compact, non-ASCII raw, as the benchmark's files).

    Options: ``source`` (label source; default ``human:agentprocessbench`` when present, else the first
    on each trace), ``threshold`` (soft scores -> +1 / -1), ``grade`` (fill a missing outcome by
    checking ``final_answer`` against the problem's answer). A trace not read from this format gets
    indices in file order (total, per problem, per sample), one user message with its problem's text
    as prompt, and no ``final_label`` when its outcome is unknown (counted in notes).
    """
    opts = take_options(NAME, options, {"source": None, "threshold": 0.5, "grade": False})
    report = WriteReport(format=NAME, path=str(path), traces=len(traces), lost=list(LOST), options=opts)
    records = []
    for trace in _number(traces):
        if opts["grade"] and trace.answer_correct is None:
            trace = graded(trace, report)
            if trace.answer_correct is None:
                report.notes["answer_not_gradable"] += 1
        if trace.answer_correct is None:
            report.notes["no_final_label"] += 1
        source = opts["source"] or (SOURCE if SOURCE in trace.sources() else pick_source(trace, None))
        if not trace.sources():
            report.notes["no_step_labels"] += 1
        records.append(to_record(trace, source, opts["threshold"]))
    style = next((t.metadata[NAME]["style"] for t in traces if "style" in t.metadata.get(NAME, {})), STYLE)
    report.written = chat.write_lines(path, records, style)
    return report


FORMAT = Format(
    NAME,
    read,
    write,
    "messages with tool calls and observations, tools, step labels on assistant messages, final label",
    options={"source": None, "threshold": None, "grade": None},
)

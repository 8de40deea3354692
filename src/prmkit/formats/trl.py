"""TRL stepwise supervision: ``{prompt, completions, labels}`` rows (``trl-lib/prm800k``, ``trl-lib/math_shepherd``).

Rows are written as TRL's own converters (``examples/datasets/{prm800k,math_shepherd}.py``) write them:

- ``mode="expand"`` (default) on a PRM800K trace runs TRL's algorithm on the PRM800K record: every
  non-chosen completion becomes its own terminal row ``prefix + [it]``, the chosen (or human) completion
  extends the prefix, the walk breaks at an all-null step or when nothing was chosen, and one last row
  holds the whole prefix. Labels are ``rating == 1`` (neutral negative) unless ``neutral="positive"``.
- ``mode="first_error"``: the trace's own path up to and including its first negative step.
- A trace read from Math-Shepherd keeps TRL's layout: prompt = question stripped, completions =
  ``"Step k: ..."`` (TRL keeps the prefixes), one row per trace.
- Soft scores are never truncated (TRL's trainer does ``int(label)``): they go in a separate ``scores``
  column (option ``scores="column"``, default) or, with ``scores="labels"``, as float labels.

- The label source: ``source`` when given; else, per trace, a PRM800K trace's labeller or a trace's only
  source. A trace carrying several sources (the world writes ``gold:world:local`` and
  ``gold:world:prefix``; a labelled file adds ``mc_hard:...``, ``judge:...``) is refused with the list of
  sources on the file rather than exported from whichever came first: the views disagree (on world data
  the local view marks a right step after a wrong one True, 92 of 160 rows differ from the prefix view),
  and TRL's own data sets (PRM800K, Math-Shepherd) hold the prefix view, which is what to pick for
  PRMTrainer. The source each trace was exported from is reported (``report.options["source"]``).

Reading gives one trace per row, labels rating +1/-1 (score for float labels or a ``scores`` column),
provenance ``imported`` / ``trl``: the file does not say how its labels were made.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prmkit.core.errors import short
from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.formats import math_shepherd, prm800k
from prmkit.formats.base import (
    FORMAT_VERSION,
    Format,
    ReadResult,
    RecordChecker,
    WriteReport,
    check_choice,
    digest,
    dump_rows,
    note_agent_steps,
    read_records,
    take_options,
    unique_ids,
)
from prmkit.formats.binary import MODES, NEUTRAL, binary_path, pick_source, resolve_neutral

NAME = "trl"
PROVENANCE = Provenance(
    method="imported", actor="trl", params={"format": "trl stepwise supervision"}, version=FORMAT_VERSION
)
LOST = [
    "neutral 0 and null ratings (mapped by option neutral), labels of other sources, provenance",
    "unlabelled steps (cut from the end, or the trace dropped when a gap sits between labelled steps)",
    "Trace.final_answer, answer_correct, generator, ids, problem answer and source, step kinds, metadata",
]


def _is_label(value: Any) -> bool:
    return isinstance(value, bool) or (isinstance(value, int | float) and 0 <= value <= 1)


def _parse(rec: dict, ck: RecordChecker) -> Trace | None:
    prompt = ck.get(rec, "prompt", str, "a string (TRL's standard stepwise form)")
    completions = ck.strings(rec, "completions")
    labels = ck.get(rec, "labels", list, "a list of booleans (or floats in [0, 1])")
    scores = (
        ck.get(rec, "scores", list, "a list of floats in [0, 1] or nulls", nullable=True)
        if "scores" in rec
        else None
    )
    for name, values, nullable in (("labels", labels, False), ("scores", scores, True)):
        if not isinstance(values, list):
            continue
        for i, v in enumerate(values):
            if not (_is_label(v) or (nullable and v is None)):
                ck.issue(
                    f"{name}[{i}]",
                    "true, false or a number in [0, 1]",
                    short(v),
                    "range" if isinstance(v, int | float) else "type",
                )
        if isinstance(completions, list) and len(values) != len(completions):
            ck.issue(name, f"{len(completions)} values (one per completion)", str(len(values)), "count")
    if ck.issues:
        return None
    numbered = _numbered(completions)
    steps = []
    for i, (text, lab) in enumerate(zip(completions, labels, strict=True)):
        score = scores[i] if scores else None
        if isinstance(lab, bool):
            label = Label(rating=1 if lab else -1, score=score, provenance=PROVENANCE)
        else:
            label = Label(score=float(lab), provenance=PROVENANCE)
        body = text[len(_prefix(i + 1)) :] if numbered else text
        steps.append(Step(text=body, labels=[label]))
    extra = {k: v for k, v in rec.items() if k not in ("prompt", "completions", "labels", "scores")}
    meta: dict[str, Any] = {"extra": extra} if extra else {}
    if numbered:
        meta["numbered"] = True
    problem = Problem(id=f"{NAME}-{digest(prompt)}", text=prompt)
    return Trace(
        id=f"{NAME}-{digest(prompt, *completions)}",
        problem=problem,
        steps=steps,
        metadata={NAME: meta} if meta else {},
    )


def _prefix(k: int) -> str:
    return f"Step {k}: "


def _numbered(completions: list[str]) -> bool:
    """Whether every completion starts ``"Step k: "`` (TRL's Math-Shepherd layout). The prefix is then cut
    from Step.text, as the Math-Shepherd reader cuts it, so writing Math-Shepherd does not double it, and
    put back when writing TRL."""
    return bool(completions) and all(c.startswith(_prefix(k)) for k, c in enumerate(completions, start=1))


def read(path: str | Path, skip_invalid: bool = False) -> ReadResult:
    """Read TRL stepwise rows (JSONL or Parquet)."""
    traces, report = read_records(path, NAME, _parse, skip_invalid)
    return ReadResult(unique_ids(traces), format=NAME, path=str(path), skipped=report)


def expand_prm800k(record: dict, neutral: str = "negative") -> list[dict]:
    """TRL's ``examples/datasets/prm800k.py`` on one PRM800K record, with the neutral mapping as an option."""
    prompt = record["question"]["problem"]

    def good(rating: int | None) -> bool:
        return rating == 1 or (neutral == "positive" and rating in (0, None))

    rows, prefix, labels = [], [], []
    for step in record["label"]["steps"]:
        comps, chosen, human = step["completions"], step["chosen_completion"], step["human_completion"]
        if comps is None and human is None and chosen is None:
            break
        for i, comp in enumerate(comps or []):
            if i != chosen:
                rows.append(
                    {
                        "prompt": prompt,
                        "completions": [*prefix, comp["text"]],
                        "labels": [*labels, good(comp["rating"])],
                    }
                )
        if chosen is not None:
            prefix.append(comps[chosen]["text"])
            labels.append(good(comps[chosen]["rating"]))
        elif human is not None:
            prefix.append(human["text"])
            labels.append(True)
        else:
            break
    rows.append({"prompt": prompt, "completions": prefix, "labels": labels})
    return rows


PREFIX_VIEW = "gold:world:prefix"
"""The source to suggest when a trace is ambiguous: the prefix view, what PRM800K and Math-Shepherd hold."""


def resolve_sources(traces: list[Trace], source: str | None) -> list[str | None]:
    """The label source each trace is exported from; ValueError when a trace has several and none was asked.

    A PRM800K trace keeps its labeller (TRL's converter reads that labeller's ratings); any other trace
    needs exactly one source, so that no view is picked by the order labels happened to be written in.
    """
    if source is not None:
        return [source] * len(traces)
    out: list[str | None] = []
    ambiguous: dict[str, int] = {}
    for trace in traces:
        sources = trace.sources()
        labeler = trace.metadata.get(prm800k.NAME, {}).get("labeler")
        if labeler is not None or len(sources) <= 1:
            out.append(f"human:{labeler}" if labeler is not None else pick_source(trace, None))
            continue
        for name in sources:
            ambiguous[name] = ambiguous.get(name, 0) + 1
        out.append(None)
    if ambiguous:
        n = sum(
            1
            for t in traces
            if len(t.sources()) > 1 and (t.metadata.get(prm800k.NAME) or {}).get("labeler") is None
        )
        listed = ", ".join(f"{name} ({count} traces)" for name, count in ambiguous.items())
        pick = PREFIX_VIEW if PREFIX_VIEW in ambiguous else next(iter(ambiguous))
        raise ValueError(
            f"{n} trace(s) carry several label sources and none was chosen: {listed}; pick one with "
            f"--source (option source), e.g. --source {pick}"
            + (
                " (the prefix view, what TRL's PRM800K and Math-Shepherd rows hold)"
                if pick == PREFIX_VIEW
                else ""
            )
        )
    return out


def _used(sources: list[str | None]) -> str | list[str] | None:
    """The source(s) actually exported, for the report: one name, or every distinct name in order."""
    names = list(dict.fromkeys(s for s in sources if s is not None))
    return names[0] if len(names) == 1 else (names or None)


def _row(trace: Trace, source: str | None, opts: dict, report: WriteReport) -> list[dict]:
    if opts["mode"] == "expand" and prm800k.NAME in trace.metadata:
        return expand_prm800k(prm800k.to_record(trace, source), opts["neutral"])
    path = binary_path(trace, source, opts["neutral"], opts["mode"], opts["threshold"])
    if path.drop:
        report.dropped[path.drop] += 1
        return []
    if path.note:
        report.notes[path.note] += 1
    if _from_math_shepherd(trace):
        prompt = trace.problem.text.strip()
        completions = [seg.strip() for seg in math_shepherd.segments(trace, path.steps)]
    elif trace.metadata.get(NAME, {}).get("numbered"):
        prompt = trace.problem.text
        completions = [_prefix(k) + s.text for k, s in enumerate(path.steps, start=1)]
    else:
        prompt, completions = trace.problem.text, [s.text for s in path.steps]
    row: dict[str, Any] = {"prompt": prompt, "completions": completions, "labels": path.labels}
    if any(s is not None for s in path.scores):
        if opts["scores"] == "labels" and all(s is not None for s in path.scores):
            row["labels"] = path.scores
        else:
            row["scores"] = path.scores
    return [row]


def _from_math_shepherd(trace: Trace) -> bool:
    """Whether a trace was read from Math-Shepherd (its metadata or its mc_hard math-shepherd labels)."""
    if math_shepherd.NAME in trace.metadata or any(math_shepherd.NAME in s.metadata for s in trace.steps):
        return True
    return any(
        lab.provenance.actor == math_shepherd.PROVENANCE.actor for s in trace.steps for lab in s.labels
    )


def write(path: str | Path, traces: list[Trace], **options: Any) -> WriteReport:
    """Write TRL stepwise rows (JSONL, ``ensure_ascii=False``; or Parquet by suffix).

    Options: ``mode`` (``expand`` default, or ``first_error``), ``neutral`` (``negative`` / ``positive``;
    default negative in expand mode as TRL, positive in first_error mode), ``source`` (label source,
    default a PRM800K trace's labeller or a trace's only source; several sources on a trace and none
    given is an error, see the module docstring), ``threshold`` (for score-only labels),
    ``scores`` (``column`` default, or ``labels``).
    """
    opts = take_options(
        NAME,
        options,
        {"mode": "expand", "neutral": None, "source": None, "threshold": 0.5, "scores": "column"},
    )
    check_choice("mode", opts["mode"], MODES)
    opts["neutral"] = resolve_neutral(opts["neutral"], opts["mode"])
    check_choice("neutral", opts["neutral"], NEUTRAL)
    check_choice("scores", opts["scores"], ("column", "labels"))
    sources = resolve_sources(traces, opts["source"])
    report = WriteReport(format=NAME, path=str(path), traces=len(traces), lost=list(LOST), options=opts)
    note_agent_steps(traces, report)
    rows = [row for trace, src in zip(traces, sources, strict=True) for row in _row(trace, src, opts, report)]
    report.options = {**opts, "source": _used(sources)}
    report.written = dump_rows(path, rows, ensure_ascii=False)
    return report


FORMAT = Format(
    NAME,
    read,
    write,
    "prompt, completions, one boolean per step (+ optional soft scores column)",
    options={
        "mode": MODES,
        "neutral": NEUTRAL,
        "source": None,
        "threshold": None,
        "scores": ("column", "labels"),
    },
)

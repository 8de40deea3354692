"""Step-DPO preference pairs (write-only): a shared correct prefix, a correct next step, an erroneous one.

Step-DPO (Lai et al. 2024, arXiv 2406.18629; ``dvlab-research/Step-DPO``, data set
``xinlai/Math-Step-DPO-10K``) trains on one step at a time: the prompt is the problem plus the steps
before the first error, ``chosen`` the step a correct continuation took there and ``rejected`` the
erroneous step. Rows have the data set's columns, laid out as its pipeline
(``data_pipeline/generate_dataset.py``) lays them out for its ``qwen2-boxed-step`` prompt:

- ``prompt``: the problem's text; ``dataset``: ``Problem.source``; ``answer``: ``Problem.answer``.
- ``initial_reason_steps``: ``"Let's think step by step.\\n"``, then ``"Step i: <text>\\n"`` for each
  step of the prefix, then ``"Step k:"`` -- the prefix ends at the erroneous step's header, so
  ``chosen`` and ``rejected`` are the text after it: ``" <step k>"``.
- ``full_chosen`` / ``full_rejected``: from step k to the end of each trace (``"\\nStep i: <text>"``
  joins the later steps), as the pipeline keeps the whole correction (``original_chosen``).
- ``prmkit``: where the pair came from (problem id, the two trace ids, step k, the label source and the
  provenance of the two labels compared). Step-DPO's ``train.py`` drops every column it does not use.

Pairing ``first-error`` (the only one; what Step-DPO does): a trace whose first error under the label
source is at step k is the rejected side; the chosen side is step k of another trace of the same problem
whose first k-1 steps have exactly the same text and whose step k that source rates correct (+1, or a
score at or above ``threshold``; a neutral 0 is neither). One pair per distinct chosen step text, as the
pipeline keeps one per distinct correction (``visited_chosen``). A rejected trace left without a pair is
counted by reason, never paired with an invented step: ``no_shared_prefix`` (no other trace has its
prefix: sample continuations of it, e.g. with a policy's ``continue_from``), ``no_correct_next_step``
(traces share it but none takes a step the source rates correct), ``unlabelled_prefix`` (a step before
the error has no label from the source). Full-Step-DPO (Xu et al. 2025) would need whole traces with
per-step rewards and its own loss; R-PRM's DPO pairs are preferences between judge analyses, not policy
steps: neither maps onto these columns, so neither is written.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prmkit.core.errors import InputError, Issue
from prmkit.core.model import Problem, Trace
from prmkit.formats.base import (
    FORMAT_VERSION,
    Format,
    ReadResult,
    WriteReport,
    check_choice,
    dump_rows,
    note_agent_steps,
    take_options,
)
from prmkit.formats.trl import PREFIX_VIEW

NAME = "step_dpo"
PAIRINGS = ("first-error",)
OPENING = "Let's think step by step.\n"
"""What Step-DPO's ``qwen2-boxed-step`` prompt puts before ``Step 1:`` (and its pipeline before the prefix)."""
NAME_KEY = "prmkit"
"""The column holding where each pair came from (Step-DPO's loaders drop it)."""
LOST = [
    "traces without a pair (counted by reason), labels of other steps and other sources",
    "final_answer, answer_correct, generator, step kinds, trace and problem metadata",
]


@dataclass(frozen=True)
class Pair:
    """One preference pair: two traces of one problem that agree on steps ``[:step]`` and part at ``step``."""

    chosen: Trace
    rejected: Trace
    step: int
    """0-based index of the step where they part (the rejected trace's first error)."""
    source: str


@dataclass
class Pairing:
    """The pairs of a set of traces, and why the rest formed none."""

    pairs: list[Pair] = field(default_factory=list)
    unpaired: Counter[str] = field(default_factory=Counter)
    """Traces that formed no pair (rejected ones without a partner, traces without labels), by reason."""
    notes: Counter[str] = field(default_factory=Counter)
    """``traces_without_error`` (chosen side only), ``problems_without_pair``, ``duplicate_pairs``."""


def _by_problem(traces: list[Trace]) -> dict[str, list[Trace]]:
    groups: dict[str, list[Trace]] = {}
    for trace in traces:
        groups.setdefault(trace.problem.id, []).append(trace)
    return groups


def _texts(trace: Trace, n: int) -> tuple[str, ...]:
    return tuple(s.text for s in trace.steps[:n])


def _partners(
    group: list[Trace], verdicts: dict[int, list[int | None]], rejected: Trace, k: int
) -> tuple[list[Trace], str | None]:
    """The traces of ``group`` that share ``rejected``'s first ``k`` steps and take a correct step ``k``
    (one per distinct step text), or why there are none."""
    prefix = _texts(rejected, k)
    shared = [
        t
        for t in group
        if t is not rejected and len(t.steps) > k and _texts(t, k) == prefix and -1 not in verdicts[id(t)][:k]
    ]
    if not shared:
        return [], "no_shared_prefix"
    wrong = rejected.steps[k].text
    seen: dict[str, Trace] = {}
    for t in shared:
        if verdicts[id(t)][k] == 1 and t.steps[k].text != wrong:
            seen.setdefault(t.steps[k].text, t)
    return list(seen.values()), (None if seen else "no_correct_next_step")


def pair_first_errors(traces: list[Trace], source: str, threshold: float = 0.5) -> Pairing:
    """Step-DPO pairs of ``traces`` under the label ``source`` (see the module docstring for the rule)."""
    out = Pairing()
    for group in _by_problem(traces).values():
        verdicts = {id(t): t.ratings(source, threshold) for t in group}
        keys: set[tuple[Any, ...]] = set()
        before = len(out.pairs)
        for trace in group:
            ratings = verdicts[id(trace)]
            if all(v is None for v in ratings):
                out.unpaired["no_labels"] += 1
                continue
            if -1 not in ratings:
                out.notes["traces_without_error"] += 1
                continue
            k = ratings.index(-1)
            if None in ratings[:k]:
                out.unpaired["unlabelled_prefix"] += 1
                continue
            partners, why = _partners(group, verdicts, trace, k)
            if why is not None:
                out.unpaired[why] += 1
            for chosen in partners:
                key = (_texts(trace, k), chosen.steps[k].text, trace.steps[k].text)
                if key in keys:
                    out.notes["duplicate_pairs"] += 1
                    continue
                keys.add(key)
                out.pairs.append(Pair(chosen, trace, k, source))
        if len(out.pairs) == before:
            out.notes["problems_without_pair"] += 1
    return out


def _steps_from(trace: Trace, k: int) -> str:
    """Step ``k`` (0-based) and the rest, as Step-DPO's continuations read after ``"Step k:"``."""
    rest = "".join(f"\nStep {i}: {s.text}" for i, s in enumerate(trace.steps[k + 1 :], start=k + 2))
    return f" {trace.steps[k].text}{rest}"


def _label_identity(trace: Trace, k: int, source: str) -> dict[str, Any]:
    """The provenance of the label ``source`` gave step ``k`` (no empty params: Parquet has no empty struct)."""
    lab = trace.steps[k].label(source)
    assert lab is not None  # a pair is formed only from labelled steps
    identity = lab.provenance.identity()
    if not identity["params"]:
        del identity["params"]
    return identity


def to_row(pair: Pair) -> dict[str, Any]:
    """One Step-DPO row (the data set's columns, then ``prmkit``) of a pair."""
    k, problem = pair.step, pair.rejected.problem
    prefix = "".join(f"Step {i}: {s.text}\n" for i, s in enumerate(pair.rejected.steps[:k], start=1))
    return {
        "dataset": problem.source,
        "prompt": problem.text,
        "initial_reason_steps": f"{OPENING}{prefix}Step {k + 1}:",
        "chosen": f" {pair.chosen.steps[k].text}",
        "rejected": f" {pair.rejected.steps[k].text}",
        "full_chosen": _steps_from(pair.chosen, k),
        "full_rejected": _steps_from(pair.rejected, k),
        "answer": problem.answer,
        NAME_KEY: {
            "problem_id": problem.id,
            "chosen_trace_id": pair.chosen.id,
            "rejected_trace_id": pair.rejected.id,
            "step": k + 1,
            "pairing": "first-error",
            "source": pair.source,
            "chosen_label": _label_identity(pair.chosen, k, pair.source),
            "rejected_label": _label_identity(pair.rejected, k, pair.source),
            "writer_version": FORMAT_VERSION,
        },
    }


def resolve_source(traces: list[Trace], source: str | None) -> str | None:
    """The one label source both sides of every pair are judged by: ``source``, else the traces' only one.

    Several sources and none chosen is an error naming them: a pair's two steps must be judged by one
    source, and the views disagree (the world's local view rates a right step after a wrong one +1).
    None when no trace carries a label (every trace is then counted ``no_labels``).
    """
    if source is not None:
        return source
    counts = Counter(s for t in traces for s in t.sources())
    if len(counts) <= 1:
        return next(iter(counts), None)
    methods = {name.partition(":")[0] for name in counts}
    pick = next(iter(counts))
    if PREFIX_VIEW in counts:
        pick = PREFIX_VIEW
    elif len(methods) == 1:  # e.g. PRM800K: one labeller per record, all of method human
        pick = methods.pop()
    listed = ", ".join(f"{name} ({n} traces)" for name, n in counts.items())
    raise ValueError(
        f"the traces carry several label sources and none was chosen: {listed}; both steps of a pair "
        f"must be judged by one source: pick it with --source (option source), e.g. --source {pick}"
    )


def write(path: str | Path, traces: list[Trace], **options: Any) -> WriteReport:
    """Write Step-DPO pairs (JSONL with non-ASCII raw, or Parquet by suffix).

    Options: ``source`` (the label source; default the traces' only one, several is an error),
    ``pairing`` (``first-error``, the only one), ``threshold`` (a score-only label at or above it is
    correct). ``written`` counts pairs; ``dropped`` the traces that formed none, by reason; ``notes``
    the traces without an error (chosen side only), the problems without a pair, repeated pairs.
    """
    opts = take_options(NAME, options, {"source": None, "pairing": "first-error", "threshold": 0.5})
    check_choice("pairing", opts["pairing"], PAIRINGS)
    if traces and isinstance(traces[0], Problem):
        raise TypeError("step_dpo pairs steps of traces; problems alone hold none")
    source = resolve_source(traces, opts["source"])
    report = WriteReport(format=NAME, path=str(path), traces=len(traces), lost=list(LOST))
    note_agent_steps(traces, report)
    if source is None:
        pairing = Pairing(unpaired=Counter({"no_labels": len(traces)}))
    else:
        pairing = pair_first_errors(traces, source, opts["threshold"])
    report.dropped.update(pairing.unpaired)
    report.notes.update(pairing.notes)
    report.options = {**opts, "source": source}
    report.written = dump_rows(path, map(to_row, pairing.pairs), ensure_ascii=False)
    return report


def read(path: str | Path, skip_invalid: bool = False) -> ReadResult:
    """Refused: a pair holds a prefix and two next steps, not labelled traces."""
    raise InputError(
        [
            Issue(
                str(path),
                None,
                "--from",
                "a format prmkit reads",
                "step_dpo, which is write-only (pairs of next steps, not labelled traces)",
                "format",
                fix="read the labelled file the pairs were written from",
            )
        ]
    )


FORMAT = Format(
    NAME,
    read,
    write,
    "Step-DPO pairs: problem, shared prefix, correct and erroneous next step, their provenance (write-only)",
    options={"source": None, "pairing": PAIRINGS, "threshold": None},
)

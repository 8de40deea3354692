"""Binary search for the first error (OmegaPRM's divide and conquer), with far fewer rollouts than MC.

A prefix is *good* when the policy can still reach the reference answer from it (some rollout does).
For a trace whose answer is wrong the full trace is bad and the empty prefix is taken as good, so the
first bad prefix is found in ``log2(steps)`` probes; steps before it are labelled +1 and its last step
-1 (method ``binary_search``), later steps stay unlabelled (their state is unknown after the error).
Probing a prefix stops at the first rollout that reaches the answer: only a bad prefix costs the full
``rollouts``; a probe whose rollouts could none be scored (all ``unparseable``) counts as bad and
as ``undecided_probes`` in the summary. A trace whose answer is already right is labelled all +1 at no cost (OmegaPRM searches
wrong answers only; "lucky" right answers by a wrong process are its known blind spot).

The probe rollouts can be kept as new labelled traces, as OmegaPRM reuses its search tree: a rollout
that reaches the answer is +1 throughout; one from a bad prefix inherits the prefix's labels up to the
first error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from prmkit.core.dataset import write_traces
from prmkit.core.model import Label, Trace
from prmkit.core.protocols import Policy
from prmkit.labeling.common import (
    EstimateOptions,
    JobOptions,
    provenance,
    read_labelable,
    record_rollouts,
    write_result,
)
from prmkit.labeling.jobs import Job, derive_seed, prefix_key
from prmkit.labeling.labellers import Labeller
from prmkit.labeling.rollouts import (
    DRAW_FIELDS,
    MAX_ROLLOUTS,
    Truncated,
    continuation_trace,
    draw,
    draw_check,
    merge,
    outcome,
    scored,
)
from prmkit.policies.options import PolicyOptions


class BinarySearchConfig(JobOptions, PolicyOptions, EstimateOptions):
    """``prmkit label binary_search``: first-error labels by binary search over step prefixes."""

    rollouts: int = Field(default=8, ge=1, le=MAX_ROLLOUTS)
    """Most rollouts per probed prefix (at most 1024); a probe stops at the first rollout that reaches
    the answer."""
    batch: int = Field(default=2, ge=1, le=MAX_ROLLOUTS)
    """Rollouts per request while probing (smaller wastes fewer rollouts on good prefixes)."""
    keep_rollouts: Path | None = None
    """Also write the probe rollouts whose labels the search determines, as new traces, to this file."""


def _probe(
    job: Job, policy: Policy, trace: Trace, k: int, rollouts: int, batch: int, seed: int, keep: bool
) -> dict:
    key = prefix_key(trace.problem.id, trace.steps[:k])

    def compute() -> dict:
        parts: list[dict] = []
        while sum(p["n"] for p in parts) < rollouts:
            m = min(batch, rollouts - sum(p["n"] for p in parts))
            parts.append(
                draw(
                    policy,
                    trace.problem,
                    trace.steps[:k],
                    m,
                    derive_seed(seed, "search", key, len(parts)),
                    keep,
                )
            )
            if parts[-1]["correct"]:
                break
        rec = merge(parts)
        return {**rec, "prefix_len": k, "good": rec["correct"] > 0}

    return job.get(key, compute)


def _probe_check(rollouts: int) -> Callable[[dict], tuple[str, str, str] | None]:
    """A probe record's value check: a draw's (:func:`draw_check`, at most ``rollouts``), a
    ``prefix_len`` that is its key's, and ``good`` exactly when a rollout was right."""
    counts = draw_check(rollouts, exact=False)

    def check(rec: dict) -> tuple[str, str, str] | None:
        if (bad := counts(rec)) is not None:
            return bad
        length = rec["key"].split("-", 1)[0]
        if str(rec["prefix_len"]) != length:
            return "prefix_len", f"{length} (the length its key names)", str(rec["prefix_len"])
        if rec["good"] != (rec["correct"] > 0):
            return "good", f"{rec['correct'] > 0} (correct is {rec['correct']})", str(rec["good"])
        return None

    return check


def search_trace(trace: Trace, probe, start: int = 0) -> tuple[int, str, list[str]]:
    """(first error or -1, how it was decided, keys of the probed prefixes) for one trace; ``start``: a
    prefix length known good without a probe (0: the problem alone; MCTS: the state a rollout left)."""
    n = len(trace.steps)
    fin = outcome(trace.problem.answer, trace.final_answer)
    if n == 0 or fin == "correct":
        return -1, "answer_correct" if n else "empty", []
    keys: list[str] = []
    lo, hi = start, n
    if fin in ("no_answer", "unparseable"):  # the full trace is not known to be bad: probe it
        rec = probe(n)
        keys.append(rec["key"])
        if rec["good"]:
            return -1, "unfinished_but_reachable", keys
    while hi - lo > 1:
        mid = (lo + hi) // 2
        rec = probe(mid)
        keys.append(rec["key"])
        lo, hi = (mid, hi) if rec["good"] else (lo, mid)
    return hi - 1, "searched", keys


def label_binary_search(
    traces: Sequence[Trace],
    policy: Policy,
    *,
    rollouts: int = 8,
    batch: int = 2,
    seed: int = 0,
    keep_rollouts: bool = False,
    work_dir: str | None = None,
    restart: bool = False,
    concurrency: int = 4,
    show_progress: bool = False,
    job_params: dict[str, Any] | None = None,
    truncated: Truncated = "skip",
    fail_fast: bool = False,
) -> tuple[list[Trace], list[Trace], dict[str, Any]]:
    """(labelled copies of ``traces``, kept rollout traces, summary). Resumable with ``work_dir``.

    A trace whose search failed (a probe the server refused) stays unlabelled and is listed in the
    summary; a rerun retries its failed probe only (the others are in the log)."""
    if not (1 <= rollouts <= MAX_ROLLOUTS and 1 <= batch <= MAX_ROLLOUTS):
        raise ValueError(f"rollouts and batch: expected 1 to {MAX_ROLLOUTS}, found {rollouts} and {batch}")
    out = [t.model_copy(deep=True) for t in traces]
    params = {
        "method": "binary_search",
        "rollouts": rollouts,
        "batch": batch,
        "seed": seed,
        "policy": policy.name,
        "keep": keep_rollouts,
        "truncated": truncated,
    }
    fields = {**DRAW_FIELDS, "prefix_len": int, "good": bool}
    job_id = {**params, **(job_params or {})}
    check = _probe_check(rollouts)
    with Job(work_dir, "binary_search", job_id, restart, fields, fail_fast, check) as job:

        def one(t: Trace) -> tuple[int, str, list[str]]:
            return search_trace(t, lambda k: _probe(job, policy, t, k, rollouts, batch, seed, keep_rollouts))

        stop = getattr(policy, "stop", None)
        results = job.map(
            out, one, concurrency, "binary search", show_progress, stop, lambda t: {"trace": t.id}
        )
        records, at = job.records, job.started_at
    prov = provenance("binary_search", policy.name, {k: v for k, v in params.items() if k != "keep"}, at)
    labelled, kept, summary = _assemble(out, results, records, prov, keep_rollouts, truncated)
    summary.update(job.failure_summary())
    return labelled, kept, summary


def _first_error_ratings(fe: int, n: int) -> list[int | None]:
    """+1 before the first error, -1 at it, unknown after it (all +1 when ``fe == -1``)."""
    return [1] * n if fe == -1 else [1] * fe + [-1] + [None] * (n - fe - 1)


def _assemble(
    out: list[Trace],
    results: list[tuple[int, str, list[str]] | None],
    records: dict[str, dict],
    prov,
    keep: bool,
    truncated: Truncated = "skip",
) -> tuple[list[Trace], list[Trace], dict[str, Any]]:
    """Labels on the traces, rollouts charged to the first trace (in input order) that probed a prefix."""
    seen: set[str] = set()
    kept: list[Trace] = []
    summary: dict[str, Any] = {"method": "binary_search", "traces": len(out), "rollouts": 0, "probes": 0}
    summary["undecided_probes"] = 0
    for t, result in zip(out, results, strict=True):
        t.drop_labels(prov.source)
        if result is None:  # its search failed: listed under failures, retried by a rerun
            continue
        fe, how, keys = result
        meta = {"decided_by": how}
        ratings = _first_error_ratings(fe, len(t.steps))
        t.add_labels(
            [None if r is None else Label(rating=r, provenance=prov, metadata=meta) for r in ratings]
        )
        new = [k for k in keys if k not in seen]
        seen.update(new)
        spent = sum(records[k]["n"] for k in new)
        record_rollouts(t, "binary_search", spent)
        summary["rollouts"] += spent
        summary["probes"] += len(new)
        summary["undecided_probes"] += sum(1 for k in new if scored(records[k], truncated) == 0)
        summary[how] = summary.get(how, 0) + 1
        if keep:
            kept += _kept(t, fe, [records[k] for k in new], prov, prov.actor or "")
    summary["kept_rollout_traces"] = len(kept)
    return out, kept, summary


def _kept(trace: Trace, fe: int, recs: list[dict], prov, generator: str) -> list[Trace]:
    """The probe rollouts of one trace whose step labels the search determined."""
    kept = []
    for rec in recs:
        k = rec["prefix_len"]
        for j, cont in enumerate(rec.get("rollouts", [])):
            new = continuation_trace(trace, k, cont, f"{trace.id}~{rec['key']}~{j}", generator)
            if cont["outcome"] == "correct":
                ratings: list[int | None] = [1] * len(new.steps)
            elif fe != -1 and k > fe:  # started after the first error: inherits the prefix's labels
                ratings = _first_error_ratings(fe, len(new.steps))
            else:
                continue
            new.add_labels(
                [
                    None
                    if r is None
                    else Label(rating=r, provenance=prov, metadata={"decided_by": "rollout"})
                    for r in ratings
                ]
            )
            kept.append(new)
    return kept


def run_binary_search(config: BinarySearchConfig, show_progress: bool = True) -> dict[str, Any]:
    """``prmkit label binary_search``: read, search with the configured policy, write output, config and summary."""
    traces = read_labelable(config.input, shard=config.shard)
    labelled, kept, summary = label_binary_search(
        traces,
        config.build_policy(),
        rollouts=config.rollouts,
        batch=config.batch,
        seed=config.seed,
        keep_rollouts=config.keep_rollouts is not None,
        work_dir=str(config.job_dir()),
        restart=config.restart,
        concurrency=config.in_flight(),
        show_progress=show_progress,
        job_params=config.identity(),
        truncated=config.truncated,
        fail_fast=config.fail_fast,
    )
    if config.keep_rollouts is not None:
        write_traces(config.keep_rollouts, kept)
    write_result(config, config.output, labelled, summary)
    return summary


LABELLER = Labeller(
    "binary_search", ("binary_search",), BinarySearchConfig, run_binary_search, rollouts="binary_search"
)
"""The first error by divide and conquer over prefixes (OmegaPRM's search), a third of MC's rollouts."""

"""Monte Carlo step labels (Math-Shepherd): roll out from every step prefix and see who still wins.

For step ``i`` of a trace, ``rollouts`` continuations are drawn from the prefix ending at that step.
The hard label (method ``mc_hard``) is +1 when any of them reaches the reference answer, else -1; the
soft label (``mc_soft``) is the share that do. Prefixes shared by several traces of one problem are
rolled out once (the job keys work by content). The last step of a trace that states an answer needs no
rollouts: its label is whether that answer is right. ``outcome`` grades every rollout (and that last
step) by a check the environment ran instead of the reference answer: the code world's ``visible_pass``
labels steps by what CI says, the information a coding agent's trainer has, where the reference answer
is the hidden tests' (docs/codeworld.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import Field

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
    ANSWER,
    DRAW_FIELDS,
    MAX_ROLLOUTS,
    OUTCOMES,
    Truncated,
    draw,
    draw_check,
    outcome,
    scored,
    success_rate,
)
from prmkit.policies.options import PolicyOptions


class MCConfig(JobOptions, PolicyOptions, EstimateOptions):
    """``prmkit label mc``: hard and soft Monte Carlo labels for every step."""

    rollouts: int = Field(default=8, ge=1, le=MAX_ROLLOUTS)
    """Rollouts per step prefix (Math-Shepherd used 8); at most 1024."""
    outcome: str = Field(ANSWER, pattern=r"^[A-Za-z0-9_.-]+$")
    """What makes a rollout right: ``answer`` (its final answer matches the reference), or the name of a
    check the environment ran on it (``Continuation.outcomes``; for the trace's own last step,
    ``Trace.metadata["outcomes"]``), e.g. the code world's ``visible_pass``: the visible tests as the
    workspace holds them, what CI reports, where the reference is the hidden tests'."""

    def identity(self) -> dict[str, Any]:
        """As every labeller's; ``outcome`` only when it is not the answer, so a job folder of the
        answer-graded labels made before the option existed still resumes."""
        out = super().identity()
        if out.get("outcome") == ANSWER:
            del out["outcome"]
        return out


def final_step_record(trace: Trace, by: str = ANSWER) -> dict[str, Any] | None:
    """The zero-rollout record of a trace's last step when it states an answer (None otherwise), graded
    ``by`` its answer or by the environment's check of that name in ``metadata["outcomes"]``."""
    if trace.final_answer is None or not trace.steps:
        return None
    if by == ANSWER:
        kind = outcome(trace.problem.answer, trace.final_answer)
    else:
        value = (trace.metadata.get("outcomes") or {}).get(by)
        if not isinstance(value, bool):
            raise ValueError(
                f"trace {trace.id!r}: metadata.outcomes.{by}: expected true or false, found {value!r} "
                f"(grading MC by outcome {by!r} needs it on every trace that states an answer)"
            )
        kind = "correct" if value else "wrong"
    return {"n": 0, **dict.fromkeys(OUTCOMES, 0), kind: 1, "tokens": 0, "final": True}


def prefix_keys(trace: Trace) -> list[str]:
    """The content key of every step prefix of a trace (prefix ``i`` ends with step ``i``)."""
    return [prefix_key(trace.problem.id, trace.steps[: i + 1]) for i in range(len(trace.steps))]


def label_mc(
    traces: Sequence[Trace],
    policy: Policy,
    *,
    rollouts: int = 8,
    seed: int = 0,
    work_dir: str | None = None,
    restart: bool = False,
    concurrency: int = 4,
    show_progress: bool = False,
    job_params: dict[str, Any] | None = None,
    truncated: Truncated = "skip",
    fail_fast: bool = False,
    outcome: str = ANSWER,
) -> tuple[list[Trace], dict[str, Any]]:
    """Copies of ``traces`` with ``mc_hard`` and ``mc_soft`` labels from ``policy``, and a summary.

    With ``work_dir`` the job is resumable: rerun the same call after a crash and it continues.
    ``job_params`` (e.g. the policy's options) must also match for a folder to be resumed. A prefix whose
    rollouts failed (the server refused it) leaves its step unlabelled, is counted and listed in the
    summary, and is retried by a rerun; ``fail_fast`` stops the job there instead.
    """
    if not 1 <= rollouts <= MAX_ROLLOUTS:
        raise ValueError(f"rollouts: expected 1 to {MAX_ROLLOUTS}, found {rollouts}")
    out = [t.model_copy(deep=True) for t in traces]
    params = {
        "method": "mc",
        "rollouts": rollouts,
        "seed": seed,
        "policy": policy.name,
        "truncated": truncated,
        **({"outcome": outcome} if outcome != ANSWER else {}),  # graded by the answer: keys as before
    }
    todo: dict[str, tuple[Trace, int]] = {}
    for t in out:
        last = len(t.steps) - 1
        for i, key in enumerate(prefix_keys(t)):
            if not (i == last and t.final_answer is not None):
                todo.setdefault(key, (t, i + 1))
    run = RolloutRun(work_dir, restart, concurrency, show_progress, fail_fast)
    records, at, counts = roll_out("mc", todo, policy, params | (job_params or {}), run)
    summary = _assemble(out, records, policy.name, params, at)
    summary.update(counts)
    return out, summary


@dataclass(frozen=True)
class RolloutRun:
    """How a rollout job runs (none of it changes its records): its folder, threads and failure policy."""

    work_dir: str | None = None
    restart: bool = False
    concurrency: int = 4
    show_progress: bool = False
    fail_fast: bool = False


def roll_out(
    method: str,
    todo: dict[str, tuple[Trace, int]],
    policy: Policy,
    params: dict[str, Any],
    run: RolloutRun,
) -> tuple[dict[str, dict], datetime, dict[str, Any]]:
    """``params["rollouts"]`` rollouts from each prefix of ``todo`` (content key -> a trace and the
    prefix length, 0 for the problem alone) as one resumable job of kind ``method``: (records by key, the
    job's start time, counts for the summary). Every prefix's seed derives from the job seed and its
    content under one tag for every method, so two methods rolling out one policy from one prefix with
    one seed draw the very same rollouts, and differ by the rule that reads them alone."""
    seed, n, by = params["seed"], params["rollouts"], params.get("outcome", ANSWER)

    def work(key: str) -> dict:
        trace, k = todo[key]
        return job.get(
            key,
            lambda: draw(policy, trace.problem, trace.steps[:k], n, derive_seed(seed, "mc", key), by=by),
        )

    def about(key: str) -> dict[str, Any]:
        trace, k = todo[key]
        return {"prefix": key, "trace": trace.id, "prefix_len": k}

    check = draw_check(n)
    with Job(run.work_dir, method, params, run.restart, DRAW_FIELDS, run.fail_fast, check) as job:
        resumed = sum(1 for k in todo if k in job.records)
        stop = getattr(policy, "stop", None)
        job.map(list(todo), work, run.concurrency, f"{method} rollouts", run.show_progress, stop, about)
        records, at = job.records, job.started_at
    counts = {"prefixes": len(todo), "prefixes_resumed": resumed, **job.failure_summary()}
    return records, at, counts


def _assemble(out: list[Trace], records: dict[str, dict], actor: str, params: dict, at) -> dict[str, Any]:
    hard_p = provenance("mc_hard", actor, params, at)
    soft_p = provenance("mc_soft", actor, params, at)
    seen: set[str] = set()
    names = ("rollouts", "steps", "unlabelled_steps", "failed_steps", "shared_prefixes", *OUTCOMES)
    totals = dict.fromkeys(names, 0)
    for t in out:
        t.drop_labels(f"mc_hard:{actor}").drop_labels(f"mc_soft:{actor}")
        final = final_step_record(t, params.get("outcome", ANSWER))
        spent = 0
        for i, key in enumerate(prefix_keys(t)):
            rec = final if (final is not None and i == len(t.steps) - 1) else records.get(key)
            totals["steps"] += 1
            if rec is None:  # its rollouts failed: listed in the summary, retried by a rerun
                totals["failed_steps"] += 1
                continue
            if key in seen and not rec.get("final"):
                totals["shared_prefixes"] += 1
            elif not rec.get("final"):
                seen.add(key)
                spent += rec["n"]
                for k in OUTCOMES:
                    totals[k] += rec[k]
            rate = success_rate(rec, params["truncated"])
            if rate is None:
                totals["unlabelled_steps"] += 1
                continue
            meta = (
                {"correct": rec["correct"], "scored": scored(rec, params["truncated"])}
                if rec["n"]
                else {"from": "final_answer"}
            )
            t.steps[i].labels.append(
                Label(rating=1 if rec["correct"] else -1, provenance=hard_p, metadata=meta)
            )
            t.steps[i].labels.append(Label(score=rate, provenance=soft_p, metadata=meta))
        record_rollouts(t, "mc", spent)
        totals["rollouts"] += spent
    return {"method": "mc", "traces": len(out), **totals}


def run_mc(config: MCConfig, show_progress: bool = True) -> dict[str, Any]:
    """``prmkit label mc``: read, label with the configured policy, write output, config and summary."""
    traces = read_labelable(config.input, shard=config.shard)
    labelled, summary = label_mc(
        traces,
        config.build_policy(),
        rollouts=config.rollouts,
        seed=config.seed,
        work_dir=str(config.job_dir()),
        restart=config.restart,
        concurrency=config.in_flight(),
        show_progress=show_progress,
        job_params=config.identity(),
        truncated=config.truncated,
        fail_fast=config.fail_fast,
        outcome=config.outcome,
    )
    write_result(config, config.output, labelled, summary)
    return summary


LABELLER = Labeller("mc", ("mc_hard", "mc_soft"), MCConfig, run_mc, rollouts="mc")
"""Per-step Monte Carlo: rollouts from every prefix; hard (any rollout right) and soft (share right)."""

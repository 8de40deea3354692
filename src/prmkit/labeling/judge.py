"""LLM-as-judge step labels: a judge reads problem and steps and names the first wrong step.

Steps before the judge's first error are labelled +1, the first error -1, later steps keep whatever
per-step verdicts the judge gave (a critic that only names an index leaves them unlabelled). The raw
response is kept in every label's provenance (``params["raw"]``, a per-label param listed in
:data:`prmkit.core.model.PER_LABEL_PARAMS`) for audit. A response the reader cannot parse labels nothing
and is counted under ``unparseable`` in the summary, never read as "no error".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from prmkit.core.errors import ItemError, short
from prmkit.core.model import Label, Trace
from prmkit.core.protocols import Judge, JudgeVerdict
from prmkit.labeling.common import JobOptions, provenance, read_labelable, write_result
from prmkit.labeling.jobs import Job, prefix_key
from prmkit.labeling.labellers import Labeller
from prmkit.policies.options import JudgeOptions


class JudgeConfig(JobOptions, JudgeOptions):
    """``prmkit label judge``: per-step labels and the first error from a judge."""


def verdict_status(verdict: JudgeVerdict, n_steps: int) -> str:
    """``ok``, or why there is no verdict: the judge's own status, else ``unparseable`` for a verdict
    without a first error (a judge that says "no verdict" only by ``first_error=None``) and
    ``out_of_range`` for an index outside ``[-1, n_steps)``."""
    status = str((verdict.extra or {}).get("status", "ok"))
    if status == "ok" and verdict.first_error is None:
        return "unparseable"
    if status == "ok" and not -1 <= verdict.first_error < n_steps:
        return "out_of_range"
    return status


def verdict_labels(verdict: JudgeVerdict, n_steps: int) -> list[int | None]:
    """Per-step ratings: +1 before the first error, -1 at it, the judge's own ratings after it."""
    if verdict_status(verdict, n_steps) != "ok" or verdict.first_error is None:
        return [None] * n_steps
    fe = verdict.first_error
    if fe == -1:
        return [r if r is not None else 1 for r in verdict.ratings]
    return [1] * fe + [-1] + list(verdict.ratings[fe + 1 :])


def verdict_scores(verdict: JudgeVerdict, n_steps: int) -> list[float | None]:
    """Per-step soft scores a judge gave beside its ratings (``extra["scores"]``: GenPRM's P(Yes)), kept
    on the labels that carry a rating; None where it gave none."""
    scores = (verdict.extra or {}).get("scores")
    if not isinstance(scores, list) or len(scores) != n_steps:
        return [None] * n_steps
    return [s if isinstance(s, float) and 0.0 <= s <= 1.0 else None for s in scores]


def verdict_check(rec: dict) -> tuple[str, str, str] | None:
    """A logged verdict's value check: a :class:`JudgeVerdict` with one rating (-1, 0, +1 or none) per
    step of its trace (its key names how many); labels are read from those ratings."""
    try:
        v = JudgeVerdict.model_validate(rec["verdict"])
    except ValidationError as err:
        first = err.errors()[0]
        return "verdict." + ".".join(map(str, first["loc"])), first["msg"], short(first.get("input"))
    n = int(rec["key"].split("-")[1]) if rec["key"].split("-")[1].isdigit() else -1
    if len(v.ratings) != n:
        return "verdict.ratings", f"{n} ratings (the steps its key names)", f"{len(v.ratings)}"
    if any(r not in (-1, 0, 1, None) for r in v.ratings):
        return "verdict.ratings", "ratings of -1, 0, +1 or null", short(v.ratings)
    return None  # a first error out of range is the judge's own, counted as out_of_range


def label_judge(
    traces: Sequence[Trace],
    judge: Judge,
    *,
    work_dir: str | None = None,
    restart: bool = False,
    concurrency: int = 4,
    show_progress: bool = False,
    job_params: dict[str, Any] | None = None,
    fail_fast: bool = False,
) -> tuple[list[Trace], dict[str, Any]]:
    """Copies of ``traces`` with ``judge`` labels, and a summary (statuses counted). Resumable.

    A trace whose request failed stays unlabelled, is listed in the summary and retried by a rerun."""
    out = [t.model_copy(deep=True) for t in traces]
    params: dict[str, Any] = {"method": "judge", "judge": judge.name}
    if callable(getattr(judge, "settings", None)):  # an endpoint judge: its model, sampling and prompt
        params["settings"] = judge.settings()
    shared = {"settings": params["settings"]} if "settings" in params else {}

    def one(t: Trace) -> dict:
        def compute() -> dict:
            v = judge.judge(t.problem, t.steps)
            if len(v.ratings) != len(t.steps):
                raise ItemError(
                    f"judge {judge.name}: {len(v.ratings)} ratings for {len(t.steps)} steps of {t.id}"
                )
            return {"n": 0, "verdict": v.model_dump(mode="json")}

        return job.get("judge-" + prefix_key(t.problem.id, t.steps), compute)

    job_id = {**params, **(job_params or {})}
    with Job(work_dir, "judge", job_id, restart, {"verdict": dict}, fail_fast, verdict_check) as job:
        stop = getattr(judge, "stop", None)
        recs = job.map(out, one, concurrency, "judge", show_progress, stop, lambda t: {"trace": t.id})
        at = job.started_at
    summary: dict[str, Any] = {
        "method": "judge",
        "traces": len(out),
        "ok": 0,
        "unparseable": 0,
        "out_of_range": 0,
    }
    summary.update(job.failure_summary())
    for t, rec in zip(out, recs, strict=True):
        if rec is None:  # its request failed: listed under failures
            t.drop_labels(provenance("judge", judge.name, {}, at).source)
            continue
        v = JudgeVerdict.model_validate(rec["verdict"])
        status = verdict_status(v, len(t.steps))
        summary[status] = summary.get(status, 0) + 1
        prov = provenance("judge", judge.name, shared | ({"raw": v.raw} if v.raw is not None else {}), at)
        t.drop_labels(prov.source)
        ratings = verdict_labels(v, len(t.steps))
        scores = verdict_scores(v, len(t.steps))
        t.add_labels(
            [
                None if r is None else Label(rating=r, score=score, provenance=prov)
                for r, score in zip(ratings, scores, strict=True)
            ]
        )
    return out, summary


def run_judge(config: JudgeConfig, show_progress: bool = True) -> dict[str, Any]:
    """``prmkit label judge``: read, judge with the configured judge, write output, config and summary."""
    traces = read_labelable(config.input, need_answer=False, shard=config.shard)
    labelled, summary = label_judge(
        traces,
        config.build_judge(config.seed),
        work_dir=str(config.job_dir()),
        restart=config.restart,
        concurrency=config.judge_in_flight(),
        fail_fast=config.fail_fast,
        show_progress=show_progress,
        job_params=config.identity(),
    )
    write_result(config, config.output, labelled, summary)
    return summary


LABELLER = Labeller("judge", ("judge",), JudgeConfig, run_judge, reads=("mc",))
"""A judge (the world's simulated one, or an LLM behind an endpoint) rates every step."""

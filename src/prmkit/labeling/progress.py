"""Progress labels (Setlur et al., "Rewarding Progress"; GenPRM's relative progress): what a step changed.

Monte Carlo asks whether the answer is still reachable *after* a step. That reads two things wrong. A
wrong step an agent recovers from lowers the chance of success without killing it, so its hard label
stays +1; and a right step followed by a misconception the policy always falls into reads -1. Progress
asks how much the step *moved* the chance: with ``Q(k)`` the share of a prover policy's rollouts from
the first ``k`` steps that reach the reference answer (``Q(0)``: from the problem alone), step ``k``'s
advantage is ``A = Q(k) - Q(k-1)``. The last step that states an answer needs no rollouts: its ``Q`` is
whether that answer is right.

Two readings of the same estimates (``rule``):

- ``advantage`` (Setlur et al.): the soft label is ``(1 + A) / 2`` (0.5: no change), the hard label -1
  when ``A < -margin``. The default margin, 0.25, is about one standard error of the difference of two
  8-rollout estimates near Q = 0.5, so rollout noise alone rarely marks a step wrong.
- ``rpe`` (GenPRM's relative progress estimation): ``P = Q(k) / Q(k-1)``, the soft label ``min(P, 1)``,
  the hard label +1 when ``P >= rpe_threshold`` (0.8, GenPRM's). Where ``Q(k-1) = 0`` nothing was left to
  lose (the error lies earlier) and ``P = 1``.

The prover (Setlur et al.: a policy other than the one being judged, best-of-K of it in their
experiments) is any policy the options name, an embedded world's with its own knobs (``policy_knobs``:
the policy at another temperature, without its misconceptions), and ``best_of`` K: best-of-K of the
prover succeeds when any of K draws does, so its ``Q`` is ``1 - (1 - q)^K`` read from the same rollouts
(a plug-in estimate, not K times the rollouts). Rollouts are drawn exactly as Monte Carlo's
(:func:`prmkit.labeling.mc.roll_out`): with the same policy and seed the two read the very same
rollouts and differ by their rule alone. Both labels carry ``q``, ``q_prev`` and ``advantage`` in their
metadata; their provenance names the prover and its settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

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
from prmkit.labeling.jobs import prefix_key
from prmkit.labeling.labellers import Labeller
from prmkit.labeling.mc import RolloutRun, final_step_record, prefix_keys, roll_out
from prmkit.labeling.rollouts import MAX_ROLLOUTS, Truncated, success_rate
from prmkit.policies.options import PolicyOptions

Rule = Literal["advantage", "rpe"]


class ProgressConfig(JobOptions, PolicyOptions, EstimateOptions):
    """``prmkit label progress``: each step's advantage under a prover policy (hard and soft labels)."""

    QUIET = ()  # policy_knobs was progress's own field before PolicyOptions had it: its stage keys hold it

    rollouts: int = Field(default=8, ge=1, le=MAX_ROLLOUTS)
    """Rollouts of the prover per step prefix, the problem alone included; at most 1024."""
    best_of: int = Field(default=1, ge=1, le=64)
    """The prover is best-of-K of the policy: Q = 1 - (1 - q)^K from the same rollouts."""
    rule: Rule = "advantage"
    """advantage (Q(k) - Q(k-1), Setlur et al.) or rpe (Q(k) / Q(k-1), GenPRM's relative progress)."""
    margin: float = Field(default=0.25, ge=0.0, le=1.0)
    """advantage: a step is labelled -1 when its advantage is below -margin."""
    rpe_threshold: float = Field(default=0.8, gt=0.0, le=1.0)
    """rpe: a step is labelled +1 when Q(k) / Q(k-1) reaches this (GenPRM's 0.8)."""

    def prover(self) -> dict[str, Any]:
        """The prover's settings, as the labels' provenance records them."""
        out: dict[str, Any] = {
            "policy": self.policy,
            "temperature": self.temperature,
            "best_of": self.best_of,
        }
        if self.model:
            out["model"] = self.model
        return out | ({"knobs": self.policy_knobs} if self.policy_knobs else {})


def step_label(q: float, q_prev: float, rule: Rule, margin: float, rpe_threshold: float) -> tuple[int, float]:
    """(hard rating, soft score) of a step that took the success chance from ``q_prev`` to ``q``."""
    if rule == "advantage":
        a = q - q_prev
        return (-1 if a < -margin else 1), (1.0 + a) / 2.0
    ratio = 1.0 if q_prev == 0 else q / q_prev
    return (1 if ratio >= rpe_threshold else -1), min(ratio, 1.0)


def label_progress(
    traces: Sequence[Trace],
    policy: Policy,
    *,
    rollouts: int = 8,
    seed: int = 0,
    rule: Rule = "advantage",
    margin: float = 0.25,
    rpe_threshold: float = 0.8,
    best_of: int = 1,
    prover: dict[str, Any] | None = None,
    run: RolloutRun | None = None,
    job_params: dict[str, Any] | None = None,
    truncated: Truncated = "skip",
) -> tuple[list[Trace], dict[str, Any]]:
    """Copies of ``traces`` with ``progress_hard`` and ``progress_soft`` labels from prover ``policy``
    (``prover``: its settings, for the provenance), and a summary. ``run`` makes it a resumable job
    (:class:`~prmkit.labeling.mc.RolloutRun`), as Monte Carlo's."""
    if not 1 <= rollouts <= MAX_ROLLOUTS:
        raise ValueError(f"rollouts: expected 1 to {MAX_ROLLOUTS}, found {rollouts}")
    out = [t.model_copy(deep=True) for t in traces]
    params = {
        "method": "progress",
        "rollouts": rollouts,
        "seed": seed,
        "policy": policy.name,
        "truncated": truncated,
        "rule": rule,
        "margin": margin,
        "rpe_threshold": rpe_threshold,
        "prover": {"policy": policy.name, "best_of": best_of} | (prover or {}),
    }
    todo: dict[str, tuple[Trace, int]] = {}
    for t in out:
        todo.setdefault(prefix_key(t.problem.id, []), (t, 0))
        for i, key in enumerate(prefix_keys(t)):
            if not (i == len(t.steps) - 1 and t.final_answer is not None):
                todo.setdefault(key, (t, i + 1))
    records, at, counts = roll_out("progress", todo, policy, params | (job_params or {}), run or RolloutRun())
    summary = _assemble(out, records, policy.name, params, at, best_of)
    summary.update(counts)
    return out, summary


def _values(
    trace: Trace, records: dict[str, dict], truncated: Truncated, best_of: int
) -> list[tuple[str, dict | None, float | None]]:
    """Per prefix 0..L of ``trace``: (its content key, its record or None, its Q under the prover or
    None: no record, or no rollout could be scored)."""
    final = final_step_record(trace)
    keys = [prefix_key(trace.problem.id, []), *prefix_keys(trace)]
    out = []
    for k, key in enumerate(keys):
        rec = final if (final is not None and k == len(keys) - 1) else records.get(key)
        q = None if rec is None else success_rate(rec, truncated)
        if q is not None and rec["n"]:  # best-of-K of the prover; a stated answer is what it is
            q = 1.0 - (1.0 - q) ** best_of
        out.append((key, rec, q))
    return out


def _assemble(
    out: list[Trace], records: dict[str, dict], actor: str, params: dict, at: datetime, best_of: int
) -> dict[str, Any]:
    hard_p = provenance("progress_hard", actor, params, at)
    soft_p = provenance("progress_soft", actor, params, at)
    seen: set[str] = set()
    totals = dict.fromkeys(("rollouts", "steps", "unlabelled_steps", "failed_steps", "negative_steps"), 0)
    for t in out:
        t.drop_labels(f"progress_hard:{actor}").drop_labels(f"progress_soft:{actor}")
        values = _values(t, records, params["truncated"], best_of)
        spent = 0
        for key, rec, _ in values:
            if rec is not None and rec["n"] and key not in seen:
                seen.add(key)
                spent += rec["n"]
        for i, step in enumerate(t.steps):
            totals["steps"] += 1
            (_, prev_rec, q_prev), (_, rec, q) = values[i], values[i + 1]
            if prev_rec is None or rec is None:  # rollouts failed: listed in the summary, retried by a rerun
                totals["failed_steps"] += 1
                continue
            if q is None or q_prev is None:  # no rollout could be scored
                totals["unlabelled_steps"] += 1
                continue
            rating, score = step_label(q, q_prev, params["rule"], params["margin"], params["rpe_threshold"])
            totals["negative_steps"] += rating == -1
            meta = {"q": round(q, 6), "q_prev": round(q_prev, 6), "advantage": round(q - q_prev, 6)}
            step.labels.append(Label(rating=rating, provenance=hard_p, metadata=meta))
            step.labels.append(Label(score=score, provenance=soft_p, metadata=meta))
        record_rollouts(t, "progress", spent)
        totals["rollouts"] += spent
    return {"method": "progress", "traces": len(out), **totals}


def run_progress(config: ProgressConfig, show_progress: bool = True) -> dict[str, Any]:
    """``prmkit label progress``: read, label with the configured prover, write output, config, summary."""
    traces = read_labelable(config.input, shard=config.shard)
    labelled, summary = label_progress(
        traces,
        config.build_policy(),
        rollouts=config.rollouts,
        seed=config.seed,
        rule=config.rule,
        margin=config.margin,
        rpe_threshold=config.rpe_threshold,
        best_of=config.best_of,
        prover=config.prover(),
        run=RolloutRun(
            str(config.job_dir()), config.restart, config.in_flight(), show_progress, config.fail_fast
        ),
        job_params=config.identity(),
        truncated=config.truncated,
    )
    write_result(config, config.output, labelled, summary)
    return summary


LABELLER = Labeller(
    "progress", ("progress_hard", "progress_soft"), ProgressConfig, run_progress, rollouts="progress"
)
"""Per-step progress: the change in a prover's success chance, hard (below -margin) and soft."""

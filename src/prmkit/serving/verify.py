"""``POST /verify``: the deployment gate on one trace (:mod:`~prmkit.serving.gate` holds the rule).

The trace is scored like a ``/score`` trace (the same forms, limits and queue), then the gate decides:

- ``accept``: the aggregate is at or above the threshold;
- ``flag``: it is below; ``first_doubtful_step`` says where the doubt starts;
- ``resampled`` (action ``resample``): the steps before the first doubtful one are sent to the policy
  endpoint to continue, up to ``--gate-max-resamples`` times, each continuation scored; the first that
  passes and reaches an answer is returned. When none does, the answer is ``flag`` with the best one.

What it costs is bounded before any work: the request's trace by the server's limits (``/score``'s),
the continuations by ``--gate-max-resamples`` (each one checked against the same limits before it is
scored; one past them is not a candidate) and ``--gate-policy-timeout-s``, and the resampling as a whole
by an overall deadline of their product (:attr:`~prmkit.serving.gate.Gate.deadline_s`). Continuations wait
on the gate's own threads (``--gate-policy-concurrency``), never on those that tokenize or score, so a
slow or hung policy cannot stall ``/pooling`` or ``/score``. A policy endpoint that fails
(down, refusing, answering nonsense) makes the answer a 502 naming the endpoint and the doubtful step,
never a 500 and never a quiet ``flag``: a client that wanted a resample learns it did not happen. An
agent's trajectory (``messages``) is flagged, not resampled: a completions endpoint continues text steps.
A server started without a gate answers 404 saying how to start one.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from fastapi import APIRouter, HTTPException

from prmkit.core.model import Problem, Step, Trace
from prmkit.policies.http import EndpointError
from prmkit.serving.gate import Gate, Verdict
from prmkit.serving.limits import check_raw, check_sizes, raw_text
from prmkit.serving.routes import ERRORS, Server, ServerState, read_trace, score_all
from prmkit.serving.schemas import ErrorResponse, Resampled, VerifyRequest, VerifyResponse

NO_GATE = (
    "this server has no gate, so /verify is not served: start it with --gate-threshold T "
    "(or --gate-monitor monitor.json, written by `prmkit gate measure`)"
)
VERIFY_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    404: {"model": ErrorResponse, "description": "The server was started without a gate (--gate-threshold)."},
    502: {
        "model": ErrorResponse,
        "description": "The gate's policy endpoint failed, or did not answer in time, while resampling.",
    },
}
"""``/verify``'s error answers: the scoring endpoints' and the two of the gate."""

router = APIRouter()


@router.post("/verify", response_model=VerifyResponse, responses=VERIFY_ERRORS)
async def verify(req: VerifyRequest, server: Server) -> VerifyResponse:
    """The gate's decision on one trace: ``accept``, ``flag`` with its first doubtful step, or (action
    ``resample``) ``resampled`` with a continuation from the steps before that step that passes."""
    gate = server.gate
    if gate is None:
        raise HTTPException(404, NO_GATE)
    check_raw([raw_text(req)], server.config)
    trace = read_trace(req, "trace", server.config, "0")
    if not trace.steps:
        raise HTTPException(422, "trace: no steps to verify; send at least one step")
    (row,) = await score_all(server, [trace])
    rule, verdict = gate.rule, gate.rule.verdict(row)
    said = f"{rule.aggregation} step score {verdict.score:.4g}"
    answer = VerifyResponse(
        model=server.model_name,
        decision="accept" if not verdict.doubtful else "flag",
        reason=f"{said} >= threshold {rule.threshold:g}",
        rule=rule.words,
        aggregation=rule.aggregation,
        threshold=rule.threshold,
        score=verdict.score,
        step_scores=row,
        first_doubtful_step=verdict.first_doubtful_step,
        resamples=0,
        resampled=None,
    )
    if verdict.doubtful:
        answer.reason = (
            f"{said} < threshold {rule.threshold:g}, first doubtful step {verdict.first_doubtful_step}"
        )
        if rule.action == "resample" and req.messages is not None:
            answer.reason += (
                "; an agent's trajectory is flagged, not resampled (the policy continues text steps)"
            )
        elif rule.action == "resample":
            await _resample(server, gate, trace, verdict, req.seed, answer)
    server.metrics.gate_decisions.labels(decision=answer.decision).inc()
    return answer


async def _resample(
    server: ServerState, gate: Gate, trace: Trace, verdict: Verdict, seed: int | None, answer: VerifyResponse
) -> None:
    """Continue ``trace`` from before its first doubtful step until a continuation passes or
    ``max_resamples`` were asked; ``answer`` becomes ``resampled`` with it, or stays ``flag`` with the
    best one. All of it ends by :attr:`Gate.deadline_s`: a policy endpoint that fails or does not answer
    in time is a 502, a scorer too busy to score a continuation before the deadline a 503."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + gate.deadline_s
    kept = trace.steps[: verdict.first_doubtful_step]
    best: Resampled | None = None
    refused = 0
    for k in range(gate.max_resamples):
        nth = None if seed is None else seed + k
        try:
            steps, final = await _ask_policy(gate, trace.problem, kept, nth, deadline)
        except (EndpointError, ValueError) as err:  # unreachable, refusing, or an answer that is not one
            server.metrics.gate_policy_errors.inc()
            raise HTTPException(
                502,
                f"{answer.reason}; resampling failed at continuation {k + 1} of {gate.max_resamples}: "
                f"policy endpoint {gate.options.policy_url}: {err}",
            ) from None
        server.metrics.gate_resamples.inc()
        answer.resamples = k + 1
        candidate = Trace(id=f"0/{k}", problem=trace.problem, steps=[*kept, *steps], final_answer=final)
        try:  # a continuation past the server's limits, or one the scorer refuses, is no candidate
            if not candidate.steps:
                raise HTTPException(422, "no steps")
            check_sizes([candidate], server.config)
            left = max(0.0, deadline - loop.time())
            (row,) = await asyncio.wait_for(score_all(server, [candidate]), left)
        except HTTPException:
            refused += 1
            continue
        except TimeoutError:
            raise HTTPException(
                503,
                f"{answer.reason}; continuation {k + 1} was not scored within /verify's deadline of "
                f"{gate.deadline_s:g} s (--gate-max-resamples x --gate-policy-timeout-s): the scorer is busy",
                headers={"Retry-After": str(max(1, round(server.config.max_queue_wait_s)))},
            ) from None
        seen = gate.rule.verdict(row)
        result = Resampled(
            steps=[s.text for s in candidate.steps],
            kept_steps=len(kept),
            final_answer=final,
            step_scores=row,
            score=seen.score,
            first_doubtful_step=seen.first_doubtful_step,
        )
        if not seen.doubtful and final is not None:
            answer.decision, answer.resampled = "resampled", result
            answer.reason += f"; continuation {k + 1} passes ({seen.score:.4g} >= {gate.rule.threshold:g})"
            return
        if best is None or result.score > best.score:
            best = result
    answer.resampled = best
    past = f", {refused} past the server's limits" if refused else ""
    answer.reason += f"; none of {gate.max_resamples} continuations passed with an answer{past}"


async def _ask_policy(
    gate: Gate, problem: Problem, kept: list[Step], seed: int | None, deadline: float
) -> tuple[list[Step], str | None]:
    """One continuation, on the gate's own threads, within ``policy_timeout_s`` and the request's
    ``deadline`` (loop time). A thread cannot be stopped, so one waiting on a hung endpoint runs on to
    its HTTP timeout, but the request is answered now; a continuation still queued for a thread is
    dropped."""
    loop = asyncio.get_running_loop()
    started = threading.Event()

    def job() -> tuple[list[Step], str | None]:
        started.set()
        return _continuation(gate, problem, kept, seed)

    wait = max(0.0, min(gate.options.policy_timeout_s, deadline - loop.time()))
    try:
        return await asyncio.wait_for(loop.run_in_executor(gate.policy_pool, job), wait)
    except TimeoutError:
        if started.is_set():
            why = f"no answer within {wait:.3g} s (--gate-policy-timeout-s, /verify's deadline)"
        else:
            why = (
                f"no free slot within {wait:.3g} s: {gate.options.policy_concurrency} continuations are "
                "already waiting on it (--gate-policy-concurrency)"
            )
        raise EndpointError(why) from None


def _continuation(
    gate: Gate, problem: Problem, kept: list[Step], seed: int | None
) -> tuple[list[Step], str | None]:
    """One continuation from the policy endpoint (blocking: run in a thread)."""
    (cont,) = gate.policy().continue_from(problem, kept, 1, seed=seed)
    return list(cont.steps), cont.final_answer

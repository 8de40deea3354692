"""The deployment gate: a threshold on a trace's aggregated step score, what it does with a doubtful
trace, and its measured operating point.

A trace is *doubtful* when ``aggregate(step_scores) < threshold``; its *first doubtful step* is the
first step scoring below the threshold (for an aggregation such as ``prod``, where no single step may be
below it, the first step at which the running aggregate falls below). ``POST /verify``
(:mod:`~prmkit.serving.verify`) answers ``accept`` for a trace that is not doubtful, and for a doubtful
one ``flag`` or, with action ``resample``, continues it through a policy endpoint (:class:`Gate`).

``prmkit gate measure`` (:func:`run_gate_measure`, pure core :func:`measure_gate`) runs the same rule over
gold-labelled traces and writes its rates as the card's monitor role
(:class:`prmkit.cards.roles.DeploymentMonitor`): TPR, the share of traces with a gold first error that
the gate flags; TNR, the share of error-free traces it accepts; ``g_mean2 = TPR * TNR``. A monitor file
configures a server's gate in turn (``prmkit serve --gate-monitor``), so what is measured is served.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from prmkit.cards.roles import DeploymentMonitor, read_monitor
from prmkit.core.errors import InputError, Issue
from prmkit.core.model import Trace
from prmkit.core.protocols import Policy
from prmkit.core.steps import StepFormat
from prmkit.scoring.aggregate import aggregate
from prmkit.serving.config import GateAction, GateMeasureConfig, GateOptions


@dataclass(frozen=True)
class Verdict:
    """The gate's reading of one trace's step scores."""

    score: float
    """The aggregate the threshold is compared with."""
    doubtful: bool
    first_doubtful_step: int | None
    """None for a trace that passes."""


@dataclass(frozen=True)
class GateRule:
    """Threshold, aggregation and action: the whole rule, as a monitor file records it."""

    threshold: float
    aggregation: str = "min"
    action: GateAction = "flag"

    def __post_init__(self) -> None:
        aggregate(
            [0.5], self.aggregation
        )  # an unknown name fails here ("Did you mean ...?"), not per request

    @property
    def words(self) -> str:
        """The rule in words, for the monitor file and the card."""
        then = "flag it" if self.action == "flag" else "resample it from its first doubtful step"
        return f"a trace whose {self.aggregation} step score is below {self.threshold:g} is doubtful: {then}"

    def verdict(self, scores: Sequence[float]) -> Verdict:
        """Whether ``scores`` (a trace with at least one step) pass, and where the doubt starts."""
        score = aggregate(scores, self.aggregation)
        if score >= self.threshold:
            return Verdict(score, False, None)
        below = next((i for i, s in enumerate(scores) if s < self.threshold), None)
        if below is None:  # prod and the like: no step below, but the running aggregate falls below
            below = next(
                (
                    k
                    for k in range(len(scores))
                    if aggregate(scores[: k + 1], self.aggregation) < self.threshold
                ),
                len(scores) - 1,
            )
        return Verdict(score, True, below)


def gate_rule(options: GateOptions) -> GateRule | None:
    """The rule ``options`` describe: from ``--gate-monitor``'s file or ``--gate-threshold``; None when
    neither is set (no gate). A flag that contradicts the monitor file is refused with both values."""
    if options.monitor is None:
        if options.threshold is None:
            return None
        return GateRule(options.threshold, options.aggregation or "min", options.action or "flag")
    monitor = read_monitor(options.monitor)
    for name, flag in (("aggregation", options.aggregation), ("action", options.action)):
        if flag is not None and flag != getattr(monitor, name):
            raise _refused(options.monitor, name, f"the --gate-{name} given ({flag})", getattr(monitor, name))
    if monitor.action == "resample" and not options.policy_url:
        raise _refused(options.monitor, "action", "a --gate-policy-url to resample through", "resample")
    return GateRule(monitor.threshold, monitor.aggregation, monitor.action)


def _refused(path: Path, field: str, expected: str, found: str) -> InputError:
    return InputError([Issue(str(path), None, field, expected, found)], skippable=False)


class Gate:
    """A server's gate: its rule, and for ``resample`` the policy endpoint that continues doubtful traces
    (an :class:`~prmkit.policies.endpoint.EndpointPolicy`, built at the first resample: a model name not
    given is then read from the endpoint's ``/v1/models``)."""

    def __init__(self, rule: GateRule, options: GateOptions, step_format: StepFormat):
        self.rule, self.options, self.format = rule, options, step_format
        self._policy: Policy | None = None
        self._lock = threading.Lock()
        self.policy_pool = ThreadPoolExecutor(options.policy_concurrency, thread_name_prefix="prmkit-policy")
        """Threads that wait on the policy endpoint, and nothing else: a hung policy fills these, never
        the threads that tokenize or score (issue 66: it used to fill asyncio's default pool, which
        ``/pooling`` tokenizes on, and stall it for a minute)."""

    @property
    def max_resamples(self) -> int:
        return self.options.max_resamples

    @property
    def deadline_s(self) -> float:
        """How long one request's resampling may take in all: ``max_resamples`` continuations of at most
        ``policy_timeout_s`` each (what docs/serving.md promises); enforced by ``/verify``."""
        return self.options.max_resamples * self.options.policy_timeout_s

    def close(self) -> None:
        """Stop taking continuations; a thread still waiting on a hung endpoint ends at its timeout."""
        self.policy_pool.shutdown(wait=False, cancel_futures=True)

    def policy(self) -> Policy:
        """The endpoint policy (blocking: call it off the event loop). An unreachable endpoint raises
        :class:`~prmkit.policies.http.EndpointError`."""
        from prmkit.policies.endpoint import EndpointPolicy
        from prmkit.policies.http import EndpointError, OpenAIClient

        with self._lock:
            if self._policy is None:
                url, timeout = self.options.policy_url or "", self.options.policy_timeout_s
                model = self.options.policy_model
                if model is None:
                    client = OpenAIClient(url, retries=0, timeout=timeout)
                    try:
                        model = client.get("/v1/models")["data"][0]["id"]
                    except (KeyError, IndexError, TypeError) as err:
                        raise EndpointError(
                            f"{url}/v1/models lists no model ({err!r}); set --gate-policy-model"
                        ) from None
                    finally:
                        client.close()
                self._policy = EndpointPolicy(
                    url,
                    model,
                    step_format=self.format,
                    retries=1,
                    timeout=timeout,
                    chat=self.options.policy_chat,
                )
            return self._policy


def build_gate(options: GateOptions, step_format: StepFormat) -> Gate | None:
    """The gate of a server started with ``options`` (None: no gate, ``/verify`` answers 404)."""
    rule = gate_rule(options)
    return None if rule is None else Gate(rule, options, step_format)


def measure_gate(
    traces: Sequence[Trace],
    scores: Sequence[Sequence[float]],
    rule: GateRule,
    *,
    source: str = "gold",
    measured_on: str | None = None,
) -> DeploymentMonitor:
    """The gate's rates on ``traces`` scored ``scores``: a trace with a first error under ``source`` is a
    positive (the gate should flag it), one with none a negative (it should accept it). Traces
    ``source`` did not label, and traces with no step, are left out of every count."""
    if len(scores) != len(traces):
        raise ValueError(f"{len(scores)} score lists for {len(traces)} traces")
    flagged_pos = accepted_neg = positives = negatives = 0
    for trace, row in zip(traces, scores, strict=True):
        if not row or all(step.label(source) is None for step in trace.steps):
            continue
        doubtful = rule.verdict(row).doubtful
        if trace.first_error(source) >= 0:
            positives, flagged_pos = positives + 1, flagged_pos + doubtful
        else:
            negatives, accepted_neg = negatives + 1, accepted_neg + (not doubtful)
    if positives + negatives == 0:
        raise ValueError(f"no trace of {measured_on or 'the input'} has {source!r} labels to measure against")
    tpr = flagged_pos / positives if positives else None
    tnr = accepted_neg / negatives if negatives else None
    return DeploymentMonitor(
        rule=rule.words,
        aggregation=rule.aggregation,
        threshold=rule.threshold,
        action=rule.action,
        measured_on=measured_on,
        traces=positives + negatives,
        positives=positives,
        tpr=tpr,
        tnr=tnr,
        g_mean2=tpr * tnr if tpr is not None and tnr is not None else None,
    )


def run_gate_measure(config: GateMeasureConfig) -> DeploymentMonitor:
    """``prmkit gate measure``: score the config's trace file with its ``model``, :func:`measure_gate` at
    its threshold, and write the monitor to ``out`` (fields documented on :class:`GateMeasureConfig`)."""
    from prmkit.evaluation.scored import score_with
    from prmkit.formats.inputs import read_traces

    traces = read_traces(config.traces)
    scored = score_with(config.model, traces, config.load)
    rule = GateRule(config.threshold, config.aggregation, config.action)
    monitor = measure_gate(traces, scored.scores, rule, source=config.source, measured_on=str(config.traces))
    config.out.parent.mkdir(parents=True, exist_ok=True)
    config.out.write_text(monitor.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return monitor

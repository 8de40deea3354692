"""The reward server's ``/metrics``: Prometheus exposition written by ``prometheus_client``.

Requests are labelled by route template (``/score``; ``<other>`` for paths no route matches) and
status, never by the raw path, so the page has a fixed set of series whatever clients send, and the
client library escapes every label value. Each app has its own registry (tests run several servers in
one process); the batcher's counters are read at scrape time by a collector.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from prmkit.serving.batching import DynamicBatcher

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


class _BatcherCollector(Collector):
    """The batcher's counters and queue depth as metric families, read when /metrics is scraped."""

    def __init__(self, batcher: DynamicBatcher):
        self.batcher = batcher

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily | HistogramMetricFamily]:
        b, s = self.batcher, self.batcher.stats
        sizes = dict(s.batch_sizes)
        buckets = [(f"{le}", sum(n for v, n in sizes.items() if v <= le)) for le in BATCH_BUCKETS]
        yield HistogramMetricFamily(
            "prmkit_batch_traces",
            "Traces per forward pass.",
            buckets=[*buckets, ("+Inf", s.batches)],
            sum_value=s.traces,
        )
        yield GaugeMetricFamily("prmkit_queue_traces", "Traces waiting for a forward pass.", b.pending)
        yield GaugeMetricFamily(
            "prmkit_queue_chars", "Estimated cost (characters) of the traces waiting.", b.pending_cost
        )
        counters = {
            "prmkit_scored_traces": ("Traces scored.", s.traces),
            "prmkit_rejected_requests": ("Requests refused with 503 at admission (queue full).", s.rejected),
            "prmkit_expired_requests": ("Requests answered 503 after waiting too long.", s.expired),
            "prmkit_scorer_errors": ("Forward passes that raised.", s.errors),
            "prmkit_scorer_busy_seconds": ("Time spent inside the scorer.", s.busy_seconds),
        }
        for name, (help_, value) in counters.items():
            yield CounterMetricFamily(name, help_, value=value)


class Metrics:
    """Request counts by route template and status, a latency histogram, the over-long responses paid by
    the unfinished rule (a policy drifting into runaway generations shows here first), the gate's
    decisions, continuations and policy failures, and the batcher's counters."""

    def __init__(self, batcher: DynamicBatcher):
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "prmkit_requests",
            "HTTP requests by route template and status.",
            ["path", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "prmkit_request_seconds", "Request latency.", buckets=LATENCY_BUCKETS, registry=self.registry
        )
        self.overlong = Counter(
            "prmkit_overlong_responses",
            "/get_reward responses with more steps than --max-steps-per-trace, paid by the unfinished rule.",
            registry=self.registry,
        )
        self.gate_decisions = Counter(
            "prmkit_gate_decisions",
            "/verify answers by decision: accept, flag, resampled.",
            ["decision"],
            registry=self.registry,
        )
        self.gate_resamples = Counter(
            "prmkit_gate_resamples",
            "Continuations /verify asked of the gate's policy endpoint.",
            registry=self.registry,
        )
        self.gate_policy_errors = Counter(
            "prmkit_gate_policy_errors",
            "/verify requests answered 502 because the gate's policy endpoint failed.",
            registry=self.registry,
        )
        self.registry.register(_BatcherCollector(batcher))

    def observe(self, route: str, status: int, seconds: float) -> None:
        """Count one request; ``route`` must be a route template, never a path a client chose."""
        self.requests.labels(path=route, status=str(status)).inc()
        self.latency.observe(seconds)

    def render(self) -> bytes:
        """The exposition page (``prometheus_client``'s text format, ``CONTENT_TYPE_LATEST``)."""
        return generate_latest(self.registry)

"""Prometheus text exposition for the reward server, written by hand (no client library needed)."""

from __future__ import annotations

import collections
import threading

from prmkit.serving.batching import DynamicBatcher

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _histogram(
    name: str, help_: str, buckets: tuple, counts: collections.Counter, total: float, n: int
) -> list[str]:
    lines = [f"# HELP {name} {help_}", f"# TYPE {name} histogram"]
    for b in buckets:
        lines.append(f'{name}_bucket{{le="{b}"}} {sum(c for v, c in counts.items() if v <= b)}')
    lines += [f'{name}_bucket{{le="+Inf"}} {n}', f"{name}_sum {total:.6f}", f"{name}_count {n}"]
    return lines


class Metrics:
    """Request counters per path and status, a latency histogram, and the batcher's counters."""

    def __init__(self, batcher: DynamicBatcher):
        self.batcher = batcher
        self._lock = threading.Lock()
        self.requests: collections.Counter[tuple[str, int]] = collections.Counter()
        self.latency: collections.Counter[float] = collections.Counter()
        self.latency_sum = 0.0
        self.latency_n = 0

    def observe(self, path: str, status: int, seconds: float) -> None:
        with self._lock:
            self.requests[(path, status)] += 1
            bucket = next((b for b in LATENCY_BUCKETS if seconds <= b), float("inf"))
            self.latency[bucket] += 1
            self.latency_sum += seconds
            self.latency_n += 1

    def render(self) -> str:
        s = self.batcher.stats
        with self._lock:
            lines = [
                "# HELP prmkit_requests_total HTTP requests by path and status.",
                "# TYPE prmkit_requests_total counter",
            ]
            for (path, status), n in sorted(self.requests.items()):
                lines.append(f'prmkit_requests_total{{path="{path}",status="{status}"}} {n}')
            lines += _histogram(
                "prmkit_request_seconds",
                "Request latency.",
                LATENCY_BUCKETS,
                self.latency,
                self.latency_sum,
                self.latency_n,
            )
        sizes = collections.Counter({k: v for k, v in s.batch_sizes.items()})
        lines += _histogram(
            "prmkit_batch_traces",
            "Traces per forward pass.",
            BATCH_BUCKETS,
            sizes,
            float(s.traces),
            s.batches,
        )
        gauges = {
            "prmkit_queue_traces": ("gauge", "Traces waiting for a forward pass.", self.batcher.pending),
            "prmkit_scored_traces_total": ("counter", "Traces scored.", s.traces),
            "prmkit_rejected_requests_total": (
                "counter",
                "Requests refused with 503 (queue full).",
                s.rejected,
            ),
            "prmkit_scorer_errors_total": ("counter", "Forward passes that raised.", s.errors),
            "prmkit_scorer_busy_seconds_total": (
                "counter",
                "Time spent inside the scorer.",
                round(s.busy_seconds, 6),
            ),
        }
        for name, (kind, help_, value) in gauges.items():
            lines += [f"# HELP {name} {help_}", f"# TYPE {name} {kind}", f"{name} {value}"]
        return "\n".join(lines) + "\n"

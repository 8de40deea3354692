"""Dynamic batching: requests that arrive within a few milliseconds share one forward pass.

Each request puts its traces on a bounded queue and awaits a future. One worker takes the oldest
request, waits up to ``max_wait_ms`` for more (or until ``max_batch_traces`` are waiting), merges them
into a single ``StepScorer.score`` call on a dedicated thread (so the event loop keeps accepting
requests while the model runs) and hands every request its own slice of the result.

The queue is bounded three ways, each refusing with :class:`QueueFull` (``503`` with ``Retry-After``):
in traces, in estimated cost (:func:`trace_cost`, characters: what tokenizing and the forward pass scale
with, so a few huge traces count for what they cost rather than one slot each), and in waiting time. A
request predicted to wait longer than ``max_queue_wait_s`` (from the measured scoring speed) is refused
at once, and one that has waited that long anyway is answered 503 instead of being scored late. A burst
is refused, never buffered until the process runs out of memory or its clients time out.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from prmkit.core.model import Trace
from prmkit.core.protocols import StepScorer
from prmkit.core.render import step_inputs

TRACE_COST = 200
"""Characters a trace costs beyond its text in :func:`trace_cost` (template, per-trace work)."""
STEP_COST = 20
"""Characters a step costs beyond its text (its tag and separator)."""


def trace_cost(trace: Trace) -> int:
    """Estimated cost of scoring ``trace``, in characters, computed without tokenizing."""
    steps = step_inputs(trace.steps)  # what the model reads: an agent's calls and results included
    return TRACE_COST + len(trace.problem.text) + sum(map(len, steps)) + STEP_COST * len(steps)


class QueueFull(RuntimeError):
    """The queue cannot take this request now; the caller should retry after ``retry_after`` seconds."""

    def __init__(self, reason: str, retry_after: float):
        self.retry_after = max(1, math.ceil(retry_after))
        """Whole seconds, as the ``Retry-After`` header needs them."""
        super().__init__(f"server busy: {reason}; retry after {self.retry_after} s")


@dataclass
class BatchStats:
    """Counters the /metrics endpoint exports."""

    batches: int = 0
    traces: int = 0
    requests: int = 0
    rejected: int = 0
    """Requests refused with 503 at admission (queue full in traces or cost, or predicted wait too long)."""
    expired: int = 0
    """Requests answered 503 after waiting ``max_queue_wait_s`` in the queue."""
    errors: int = 0
    busy_seconds: float = 0.0
    batch_sizes: collections.Counter = field(default_factory=collections.Counter)


@dataclass
class _Item:
    traces: Sequence[Trace]
    future: asyncio.Future
    arrived: float
    cost: int


class DynamicBatcher:
    """Merge concurrent scoring requests into one scorer call (``batching=False`` scores one at a time)."""

    def __init__(
        self,
        scorer: StepScorer,
        *,
        batching: bool = True,
        max_batch_traces: int = 64,
        max_wait_ms: float = 5.0,
        max_queue_traces: int = 1024,
        max_queue_chars: int = 4_000_000,
        max_queue_wait_s: float = 10.0,
    ):
        self.scorer = scorer
        self.batching = batching
        self.max_batch_traces = max_batch_traces
        self.max_wait = max_wait_ms / 1000.0
        self.max_queue_traces = max_queue_traces
        self.max_queue_chars = max_queue_chars
        self.max_queue_wait = max_queue_wait_s
        self.stats = BatchStats()
        self._queue: collections.deque[_Item] = collections.deque()
        self._pending = 0
        self._pending_cost = 0
        self._speed: float | None = None
        """Cost scored per second of scorer time (a moving average); None until a batch has run."""
        self._wakeup: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="prmkit-score")

    @property
    def pending(self) -> int:
        """Traces waiting (queued, not yet in a running batch)."""
        return self._pending

    @property
    def pending_cost(self) -> int:
        """Estimated cost (:func:`trace_cost`, characters) of the traces waiting."""
        return self._pending_cost

    def _drain_seconds(self, extra: int = 0) -> float:
        """Predicted time until the queue (plus ``extra`` cost) is scored; 0 before any measurement."""
        return (self._pending_cost + extra) / self._speed if self._speed else 0.0

    async def start(self) -> None:
        self._wakeup = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name="prmkit-batcher")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for item in self._queue:
            if not item.future.done():
                item.future.set_exception(RuntimeError("server shutting down"))
        self._queue.clear()
        self._pool.shutdown(wait=True)

    async def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        """Scores of ``traces`` (one list per trace), computed together with whatever else is waiting."""
        if not traces:
            return []
        cost = sum(trace_cost(t) for t in traces)
        reason = self._refusal(len(traces), cost)
        if reason is not None:
            self.stats.rejected += 1
            raise QueueFull(reason, retry_after=min(self._drain_seconds(), self.max_queue_wait))
        if self._wakeup is None:
            raise RuntimeError("DynamicBatcher.start() was not awaited")
        future = asyncio.get_running_loop().create_future()
        self._queue.append(_Item(traces, future, time.perf_counter(), cost))
        self._pending += len(traces)
        self._pending_cost += cost
        self.stats.requests += 1
        self._wakeup.set()
        return await future

    def _refusal(self, n: int, cost: int) -> str | None:
        """Why a request of ``n`` traces and ``cost`` cannot join the queue now (None: it can)."""
        if self._pending + n > self.max_queue_traces:
            return f"{self._pending} traces are waiting and the queue holds at most {self.max_queue_traces}"
        if self._pending and self._pending_cost + cost > self.max_queue_chars:
            return (
                f"{self._pending_cost} characters of traces are waiting and the queue holds at most "
                f"{self.max_queue_chars} (--max-queue-chars); this request adds {cost}"
            )
        wait = self._drain_seconds()
        if self._pending and wait > self.max_queue_wait:
            return (
                f"the traces waiting take about {wait:.1f} s to score, longer than the "
                f"{self.max_queue_wait:g} s a request may wait (--max-queue-wait-s)"
            )
        return None

    def _take(self) -> list[_Item]:
        """The next batch: waiting requests in arrival order up to ``max_batch_traces``; requests whose
        client hung up are dropped and those that waited past ``max_queue_wait`` are answered 503."""
        now, items, size = time.perf_counter(), [], 0
        while self._queue:
            head = self._queue[0]
            late = now - head.arrived > self.max_queue_wait
            full = not self.batching or size + len(head.traces) > self.max_batch_traces
            if items and full and not late and not head.future.done():
                break
            self._queue.popleft()
            self._pending -= len(head.traces)
            self._pending_cost -= head.cost
            if head.future.done():  # cancelled: nobody is waiting for these scores
                continue
            if late:
                self.stats.expired += 1
                waited = f"waited {now - head.arrived:.1f} s in the queue"
                limit = f"the limit is {self.max_queue_wait:g} s (--max-queue-wait-s)"
                head.future.set_exception(QueueFull(f"{waited}; {limit}", self._drain_seconds()))
                continue
            items.append(head)
            size += len(head.traces)
        return items

    async def _gather_window(self) -> None:
        """Wait (at most ``max_wait`` after the oldest arrival) for more requests to join the batch."""
        assert self._wakeup is not None
        deadline = self._queue[0].arrived + self.max_wait
        while self._pending < self.max_batch_traces:
            left = deadline - time.perf_counter()
            if left <= 0:
                return
            self._wakeup.clear()
            try:
                await asyncio.wait_for(self._wakeup.wait(), timeout=left)
            except TimeoutError:
                return

    async def _run(self) -> None:
        assert self._wakeup is not None
        loop = asyncio.get_running_loop()
        while True:
            while not self._queue:
                self._wakeup.clear()
                await self._wakeup.wait()
            if self.batching and self.max_wait > 0:
                await self._gather_window()
            items = self._take()
            if not items:
                continue
            started = time.perf_counter()
            try:
                await self._score_items(loop, items)
            finally:
                seconds = time.perf_counter() - started
                self.stats.busy_seconds += seconds
                self._measure(sum(item.cost for item in items), seconds)

    def _measure(self, cost: int, seconds: float) -> None:
        """Update the scoring speed (cost per second) that admission predicts waiting times from."""
        speed = cost / max(seconds, 1e-4)
        self._speed = speed if self._speed is None else 0.7 * self._speed + 0.3 * speed

    async def _score_items(self, loop: asyncio.AbstractEventLoop, items: list[_Item]) -> None:
        """One forward pass for all items; if it fails, each item alone, so one bad trace fails only its request."""
        merged = [t for item in items for t in item.traces]
        try:
            scores = await loop.run_in_executor(self._pool, self.scorer.score, merged)
            if len(scores) != len(merged):
                raise RuntimeError(f"scorer returned {len(scores)} score lists for {len(merged)} traces")
        except Exception as err:
            if len(items) > 1:
                for item in items:
                    await self._score_items(loop, [item])
                return
            self.stats.errors += 1
            if not items[0].future.done():
                items[0].future.set_exception(err)
            return
        self.stats.batches += 1
        self.stats.traces += len(merged)
        self.stats.batch_sizes[len(merged)] += 1
        at = 0
        for item in items:
            n = len(item.traces)
            if not item.future.done():  # a client that hung up leaves a cancelled future
                item.future.set_result([list(map(float, row)) for row in scores[at : at + n]])
            at += n

"""Dynamic batching: requests that arrive within a few milliseconds share one forward pass.

Each request puts its traces on a bounded queue and awaits a future. One worker takes the oldest
request, waits up to ``max_wait_ms`` for more (or until ``max_batch_traces`` are waiting), merges them
into a single ``StepScorer.score`` call on a dedicated thread (so the event loop keeps accepting
requests while the model runs) and hands every request its own slice of the result.

The queue is bounded in traces: when it is full, :meth:`DynamicBatcher.score` raises :class:`QueueFull`
at once, which the server turns into ``503`` with ``Retry-After``: a burst is refused, never buffered
until the process runs out of memory.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from prmkit.core.model import Trace
from prmkit.core.protocols import StepScorer


class QueueFull(RuntimeError):
    """The batcher holds ``max_queue_traces`` already; the caller should retry after ``retry_after`` s."""

    def __init__(self, pending: int, limit: int, retry_after: float):
        self.retry_after = retry_after
        super().__init__(
            f"server busy: {pending} traces are waiting and the queue holds at most {limit}; "
            f"retry after {retry_after:g} s"
        )


@dataclass
class BatchStats:
    """Counters the /metrics endpoint exports."""

    batches: int = 0
    traces: int = 0
    requests: int = 0
    rejected: int = 0
    errors: int = 0
    busy_seconds: float = 0.0
    batch_sizes: collections.Counter = field(default_factory=collections.Counter)


@dataclass
class _Item:
    traces: Sequence[Trace]
    future: asyncio.Future
    arrived: float


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
    ):
        self.scorer = scorer
        self.batching = batching
        self.max_batch_traces = max_batch_traces
        self.max_wait = max_wait_ms / 1000.0
        self.max_queue_traces = max_queue_traces
        self.stats = BatchStats()
        self._queue: collections.deque[_Item] = collections.deque()
        self._pending = 0
        self._wakeup: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="prmkit-score")

    @property
    def pending(self) -> int:
        """Traces waiting (queued, not yet in a running batch)."""
        return self._pending

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
        if self._pending + len(traces) > self.max_queue_traces:
            self.stats.rejected += 1
            raise QueueFull(self._pending, self.max_queue_traces, retry_after=1.0)
        assert self._wakeup is not None, "DynamicBatcher.start() was not awaited"
        future = asyncio.get_running_loop().create_future()
        self._queue.append(_Item(traces, future, time.perf_counter()))
        self._pending += len(traces)
        self.stats.requests += 1
        self._wakeup.set()
        return await future

    def _take(self) -> list[_Item]:
        items = [self._queue.popleft()]
        size = len(items[0].traces)
        while self.batching and self._queue and size + len(self._queue[0].traces) <= self.max_batch_traces:
            item = self._queue.popleft()
            items.append(item)
            size += len(item.traces)
        self._pending -= size
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
            started = time.perf_counter()
            try:
                await self._score_items(loop, items)
            finally:
                self.stats.busy_seconds += time.perf_counter() - started

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

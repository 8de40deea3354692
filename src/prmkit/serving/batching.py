"""Dynamic batching: requests that arrive within a few milliseconds share one forward pass.

Each request puts its traces on a bounded queue and awaits a future. One worker takes the oldest
request, waits up to ``max_wait_ms`` for more (or until ``max_batch_traces`` are waiting), merges them
into a single ``StepScorer.score`` call on a dedicated thread (so the event loop keeps accepting
requests while the model runs) and hands every request its own slice of the result.

A pass holds at most ``max_batch_traces`` traces and ``max_batch_chars`` of estimated cost. A request
larger than that is scored in pieces, and after each piece its remainder goes to the back of the queue,
behind the requests that arrived during that pass: they are scored in the next pass, not after the
whole large request (one
request of 512 long traces used to hold the scorer for 16 s while every other client waited).

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


@dataclass(eq=False)
class _Item:
    """One request: its traces, scored in one or more slices, and the future its handler awaits."""

    traces: Sequence[Trace]
    future: asyncio.Future
    arrived: float
    costs: list[int]
    taken: int = 0
    """Traces handed to passes so far; the rest wait in the queue."""
    scores: list[list[float]] = field(default_factory=list)

    @property
    def started(self) -> bool:
        """Whether a pass has taken any of this request's traces (the waiting bound no longer applies)."""
        return self.taken > 0

    @property
    def waiting_cost(self) -> int:
        return sum(self.costs[self.taken :])


@dataclass
class _Slice:
    """Traces ``start:stop`` of one request, scored in one pass."""

    item: _Item
    start: int
    stop: int


class DynamicBatcher:
    """Merge concurrent scoring requests into one scorer call (``batching=False`` scores one at a time)."""

    def __init__(
        self,
        scorer: StepScorer,
        *,
        batching: bool = True,
        max_batch_traces: int = 64,
        max_batch_chars: int = 400_000,
        max_wait_ms: float = 5.0,
        max_queue_traces: int = 1024,
        max_queue_chars: int = 4_000_000,
        max_queue_wait_s: float = 10.0,
    ):
        self.scorer = scorer
        self.batching = batching
        self.max_batch_traces = max_batch_traces
        self.max_batch_chars = max_batch_chars
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
        self._running: tuple[float, int] | None = None
        """(start time, cost) of the pass now on the scorer."""
        self._outstanding = 0
        """Requests admitted and not yet answered: with none but the one waiting, there is no company to
        wait for, and a lone client is not made to pay ``max_wait_ms`` on every request."""
        self._resumed: list[_Item] = []
        """Requests the running pass took part of: back in the queue, behind any newcomer, after it."""
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

    def _wait_seconds(self) -> float:
        """Predicted wait of a request arriving now before its first pass starts; 0 before any measurement.

        The pass now running finishes first; then, as the queue turns round, every request ahead gives
        at most one pass's worth of its traces before the newcomer's turn."""
        if not self._speed:
            return 0.0
        running = 0.0
        if self._running is not None:
            started, cost = self._running
            running = max(0.0, cost / self._speed - (time.perf_counter() - started))
        ahead = sum(self._turn_cost(item) for item in self._queue)
        return running + ahead / self._speed

    def _turn_cost(self, item: _Item) -> int:
        """Cost of the most that one pass takes from ``item``: its next ``max_batch_traces`` traces, cut
        at ``max_batch_chars``."""
        piece = item.costs[item.taken : item.taken + self.max_batch_traces]
        return min(sum(piece), max(self.max_batch_chars, piece[0] if piece else 0))

    async def start(self) -> None:
        self._wakeup = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name="prmkit-batcher")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for item in [*self._queue, *self._resumed]:
            if not item.future.done():
                item.future.set_exception(RuntimeError("server shutting down"))
        self._queue.clear()
        self._pool.shutdown(wait=True)

    async def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        """Scores of ``traces`` (one list per trace), computed together with whatever else is waiting."""
        if not traces:
            return []
        costs = [trace_cost(t) for t in traces]
        cost = sum(costs)
        reason = self._refusal(len(traces), cost)
        if reason is not None:
            self.stats.rejected += 1
            raise QueueFull(reason, retry_after=min(self._wait_seconds(), self.max_queue_wait))
        if self._wakeup is None:
            raise RuntimeError("DynamicBatcher.start() was not awaited")
        future = asyncio.get_running_loop().create_future()
        self._queue.append(_Item(traces, future, time.perf_counter(), costs))
        self._pending += len(traces)
        self._pending_cost += cost
        self.stats.requests += 1
        self._wakeup.set()
        self._outstanding += 1
        try:
            return await future
        finally:
            self._outstanding -= 1

    def _refusal(self, n: int, cost: int) -> str | None:
        """Why a request of ``n`` traces and ``cost`` cannot join the queue now (None: it can)."""
        if self._pending + n > self.max_queue_traces:
            return f"{self._pending} traces are waiting and the queue holds at most {self.max_queue_traces}"
        if self._pending and self._pending_cost + cost > self.max_queue_chars:
            return (
                f"{self._pending_cost} characters of traces are waiting and the queue holds at most "
                f"{self.max_queue_chars} (--max-queue-chars); this request adds {cost}"
            )
        wait = self._wait_seconds()
        if wait > self.max_queue_wait:
            return (
                f"the traces ahead take about {wait:.1f} s to score, longer than the "
                f"{self.max_queue_wait:g} s a request may wait (--max-queue-wait-s)"
            )
        return None

    def _take(self) -> list[_Slice]:
        """The next pass: waiting requests in queue order up to ``max_batch_traces`` traces and
        ``max_batch_chars`` of cost (always at least one trace). A request that does not fit whole gives
        what fits and goes to the back of the queue with the rest once this pass is over. Requests whose client hung up are
        dropped; those that waited past ``max_queue_wait`` before any pass took them are answered 503."""
        now, slices, size, cost = time.perf_counter(), [], 0, 0
        while self._queue:
            head = self._queue[0]
            if head.future.done():  # cancelled, or failed in an earlier slice: nobody wants the rest
                self._drop(self._queue.popleft())
                continue
            if not head.started and now - head.arrived > self.max_queue_wait:
                self._drop(self._queue.popleft())
                self.stats.expired += 1
                waited = f"waited {now - head.arrived:.1f} s in the queue"
                limit = f"the limit is {self.max_queue_wait:g} s (--max-queue-wait-s)"
                head.future.set_exception(QueueFull(f"{waited}; {limit}", self._wait_seconds()))
                continue
            if slices and not self.batching:
                break
            stop = head.taken
            while stop < len(head.traces) and (
                (not slices and stop == head.taken)
                or (size + 1 <= self.max_batch_traces and cost + head.costs[stop] <= self.max_batch_chars)
            ):
                size, cost, stop = size + 1, cost + head.costs[stop], stop + 1
            if stop == head.taken:
                break
            slices.append(_Slice(head, head.taken, stop))
            self._pending -= stop - head.taken
            self._pending_cost -= sum(head.costs[head.taken : stop])
            head.taken = stop
            self._queue.popleft()
            if stop < len(head.traces):  # its turn again after whoever arrives during this pass
                self._resumed.append(head)
                break
        return slices

    def _drop(self, item: _Item) -> None:
        self._pending -= len(item.traces) - item.taken
        self._pending_cost -= item.waiting_cost

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
            if self.batching and self.max_wait > 0 and self._outstanding > 1:
                await self._gather_window()
            slices = self._take()
            if not slices:
                continue
            cost = sum(sum(p.item.costs[p.start : p.stop]) for p in slices)
            started = time.perf_counter()
            self._running = (started, cost)
            try:
                await self._score_slices(loop, slices)
            finally:
                self._running = None
                self._queue.extend(self._resumed)
                self._resumed.clear()
                seconds = time.perf_counter() - started
                self.stats.busy_seconds += seconds
                self._measure(cost, seconds)

    def _measure(self, cost: int, seconds: float) -> None:
        """Update the scoring speed (cost per second) that admission predicts waiting times from."""
        speed = cost / max(seconds, 1e-4)
        self._speed = speed if self._speed is None else 0.7 * self._speed + 0.3 * speed

    async def _score_slices(self, loop: asyncio.AbstractEventLoop, slices: list[_Slice]) -> None:
        """One forward pass for all slices; if it fails, each slice alone, so one bad trace fails only
        its own request (and the rest of that request is not scored)."""
        merged = [t for p in slices for t in p.item.traces[p.start : p.stop]]
        try:
            scores = await loop.run_in_executor(self._pool, self.scorer.score, merged)
            if len(scores) != len(merged):
                raise RuntimeError(f"scorer returned {len(scores)} score lists for {len(merged)} traces")
        except Exception as err:
            if len(slices) > 1:
                for p in slices:
                    if not p.item.future.done():
                        await self._score_slices(loop, [p])
                return
            self.stats.errors += 1
            if not slices[0].item.future.done():
                slices[0].item.future.set_exception(err)
            return
        self.stats.batches += 1
        self.stats.traces += len(merged)
        self.stats.batch_sizes[len(merged)] += 1
        at = 0
        for p in slices:
            n, item = p.stop - p.start, p.item
            item.scores.extend(list(map(float, row)) for row in scores[at : at + n])
            at += n
            # a client that hung up leaves a cancelled future
            if len(item.scores) == len(item.traces) and not item.future.done():
                item.future.set_result(item.scores)

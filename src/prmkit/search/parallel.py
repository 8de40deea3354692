"""Many problems at once: a thread pool over problems, one scorer shared by its threads, a progress bar.

Every search method runs ``concurrency`` problems at once (:func:`imap`), so a policy that waits on a
server (an endpoint) or a scorer that does (a reward server) keeps several problems in flight instead of
one. Results come back in input order and every seed a problem uses is derived from its index alone,
so the outputs are the same at any concurrency. Policies are thread-safe (an endpoint policy's own
``--policy-concurrency`` still caps its requests in flight; a local hf policy samples one call at a time).

Scorers are not promised to be: a checkpoint scorer's forward passes and length counts are not made for
several threads. Best-of-N and vote score whole chunks of problems' candidates in one call
(:func:`scored_in_chunks`); beam search and reject-and-resample, whose problems ask for scores round by
round, share the scorer through :class:`SharedScorer`, which makes one call at a time and puts into it
the traces of every thread waiting then, so the scorer sees batches across problems either way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from typing import TypeVar

from prmkit.core.model import Problem, Trace
from prmkit.core.protocols import Policy, StepScorer
from prmkit.search.common import Compute, sample_candidates, score_traces

T = TypeVar("T")
R = TypeVar("R")

CONCURRENCY = 16
"""Problems searched at once by default: enough to keep a GPU server or an endpoint busy."""
SCORE_TRACES = 256
"""Traces of several problems asked in one scorer call by best-of-N and vote (a problem's candidates
stay in one call): as many as :class:`prmkit.scoring.remote.RemoteScorer` sends in one request."""


def imap(
    fn: Callable[[T], R], items: Sequence[T], concurrency: int, stop: Callable[[], None] | None = None
) -> Iterator[R]:
    """``fn`` over ``items`` on ``concurrency`` threads, yielded in input order as each is ready.

    At concurrency 1 (or one item) ``fn`` runs in the caller's thread. On the first failure (or when the
    caller stops reading) ``stop`` (a policy's, where it has one) is called so calls in flight end
    without retrying, the items not started are cancelled and the error is raised."""
    if concurrency <= 1 or len(items) <= 1:
        yield from map(fn, items)
        return
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="prmkit-search") as pool:
        futures = [pool.submit(fn, item) for item in items]
        try:
            for future in futures:
                yield future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            if stop is not None:
                stop()
            raise


def map_problems(
    fn: Callable[[int], R],
    count: int,
    concurrency: int,
    desc: str,
    show_progress: bool = False,
    stop: Callable[[], None] | None = None,
) -> list[R]:
    """``fn(k)`` for problems ``k = 0 .. count - 1`` by :func:`imap`, in order, under a progress bar."""
    results = []
    with (
        closing(imap(fn, range(count), concurrency, stop)) as done,
        problem_bar(desc, count, show_progress) as advance,
    ):
        for result in done:
            results.append(result)
            advance()
    return results


def sample_all(
    policy: Policy, problems: Sequence[Problem], n: int, seed: int, concurrency: int
) -> closing[Iterator[tuple[list[Trace], Compute]]]:
    """``n`` candidates of each problem with what they cost (problem ``k``: seed ``seed + k``), sampled
    ``concurrency`` problems at once, in order; a context that stops the sampling when left early."""

    def one(k: int) -> tuple[list[Trace], Compute]:
        compute = Compute()
        return sample_candidates(policy, problems[k], n, seed + k, compute), compute

    return closing(imap(one, range(len(problems)), concurrency, getattr(policy, "stop", None)))


def scored_in_chunks(
    sampled: Iterable[tuple[list[Trace], Compute]], scorer: StepScorer, chunk: int = SCORE_TRACES
) -> Iterator[tuple[list[Trace], Compute, list[list[float]]]]:
    """Each problem's ``(traces, compute)`` with its traces' scores, in order, asked in calls of up to
    ``chunk`` traces across problems (more only when one problem has more); each problem's compute
    counts its own traces scored."""
    pending: list[tuple[list[Trace], Compute]] = []
    size = 0

    def flush() -> Iterator[tuple[list[Trace], Compute, list[list[float]]]]:
        rows = score_traces(scorer, [t for traces, _ in pending for t in traces], Compute())
        start = 0
        for traces, compute in pending:
            compute.add_scored(traces)
            yield traces, compute, rows[start : start + len(traces)]
            start += len(traces)

    for traces, compute in sampled:
        if pending and size + len(traces) > chunk:
            yield from flush()
            pending, size = [], 0
        pending.append((traces, compute))
        size += len(traces)
    if pending:
        yield from flush()


class _Request:
    def __init__(self, traces: list[Trace]):
        self.traces = traces
        self.rows: list[list[float]] | None = None
        self.error: BaseException | None = None


class SharedScorer:
    """``scorer`` for many threads: one ``score`` call at a time, holding the traces of every thread
    waiting when it starts (in the order they asked), each thread handed back its own rows."""

    def __init__(self, scorer: StepScorer):
        self.scorer = scorer
        self.name = scorer.name
        self._queue: list[_Request] = []
        self._queue_lock = threading.Lock()
        self._turn = threading.Lock()

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        request = _Request(list(traces))
        with self._queue_lock:
            self._queue.append(request)
        while request.rows is None and request.error is None:
            with self._turn:  # whoever holds the turn asks for everything queued, its own included
                if request.rows is None and request.error is None:
                    with self._queue_lock:
                        batch, self._queue = self._queue, []
                    self._ask(batch)
        if request.error is not None:
            raise request.error
        return request.rows  # type: ignore[return-value]

    def _ask(self, batch: list[_Request]) -> None:
        traces = [t for r in batch for t in r.traces]
        try:
            rows = self.scorer.score(traces) if traces else []
            if len(rows) != len(traces):
                raise RuntimeError(
                    f"scorer {self.name!r} returned {len(rows)} score lists for {len(traces)} traces"
                )
        except BaseException as err:
            for r in batch:
                r.error = err
            return
        start = 0
        for r in batch:
            r.rows, start = list(rows[start : start + len(r.traces)]), start + len(r.traces)


@contextmanager
def problem_bar(desc: str, total: int, show: bool) -> Iterator[Callable[[], None]]:
    """A progress bar over ``total`` problems (``prmkit.core.progress``) when ``show``; yields its
    ``advance``."""
    if not show:
        yield lambda: None
        return
    from prmkit.core.progress import progress

    with progress() as bar:
        task = bar.add_task(desc, total=total)
        yield lambda: bar.advance(task)

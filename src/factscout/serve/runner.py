"""Bounded, batching execution of the core for the HTTP service.

The core is one shared set of models and one index, and parts of it are not thread-safe
(PyStemmer's stemmer inside BM25 search, the embedding cache of :class:`~factscout.check.Checker`,
the rewriting environment's query cache). So every job runs on **one** worker thread, off the
event loop, and the concurrency bound is a bounded wait queue in front of it:

* at most ``max_pending`` jobs may be queued or running; one more is refused at once with
  :class:`Saturated` (the app answers 503 with ``Retry-After``), so a flood cannot pile up
  unbounded work or memory;
* jobs of the same *kind* that are waiting together run as one batch (``check`` -> one
  ``Checker.check_many`` call, ``search`` -> one ``retriever.search`` call per (k, date)),
  which is how the core is fastest: spaCy, the sentence encoder and BM25 all take batches;
  the numerical libraries use both cores inside one batch.

A batch that raises is re-run item by item so one bad request never fails its neighbours.

**Queue order.** Jobs of a *background* kind (the claims of ``/v1/checks`` batch jobs, kind
``"job"``) wait in a queue of their own, behind every interactive request (``/v1/check``,
``/v1/search``, the page):

1. the next core call takes the oldest interactive job and the interactive jobs that can share
   its batch, in arrival order;
2. a background batch runs when no interactive job waits, or when ``starve_after`` interactive
   batches in a row have run while background work waited (so a batch job always progresses:
   none starves under a steady stream of interactive requests);
3. a background batch holds at most ``max_background_batch`` claims (default 1), so an
   interactive request arriving during one waits for at most that many claims, not for
   ``max_batch`` (``benchmarks/priority.py``: /v1/check p99 beside a 200-claim batch 1.33x the
   idle p99 with 1, 1.91x with 2, 2.36x with 4; the batch still finished within a minute);
4. within each queue, order is kept (a job whose ``uid`` is already in the batch waits for the
   next one).

Only interactive jobs count toward ``max_pending`` (the 503 bound): background work is bounded by
its submitter (:class:`~factscout.serve.jobs.JobWorker` keeps at most a batch in flight), so a
large batch job never makes the page answer "busy".
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from factscout.errors import InputError

log = logging.getLogger(__name__)

BatchFn = Callable[[Sequence[Any]], Sequence[Any]]


class Saturated(Exception):
    """The wait queue is full; try again after ``retry_after`` seconds."""

    def __init__(self, pending: int, retry_after: int) -> None:
        self.pending, self.retry_after = pending, retry_after
        super().__init__(f"the server is busy ({pending} requests queued or running); retry in {retry_after} s")


@dataclass
class _Job:
    kind: str
    item: Any
    future: asyncio.Future[Any]
    group: Any = None
    uid: Any = None


@dataclass
class RunnerStats:
    """Counters for ``GET /v1/health``."""

    done: int = 0
    background_done: int = 0
    rejected: int = 0
    batches: dict[str, int] = field(default_factory=dict)
    largest_batch: int = 0


class CoreRunner:
    """Runs core jobs one batch at a time on a single worker thread behind a bounded queue.

    ``handlers`` maps a job kind to ``fn(items) -> results`` (same length, same order). Only
    jobs of the same kind and ``group`` (e.g. the same k and date for a search) share a batch,
    and a job whose ``uid`` is already in the batch (a claim id) waits for the next one.
    ``background``: the kinds that wait behind interactive ones (the module docstring's queue order).
    """

    def __init__(
        self,
        handlers: dict[str, BatchFn],
        *,
        max_pending: int = 64,
        max_batch: int = 16,
        retry_after: int = 2,
        background: Sequence[str] = (),
        max_background_batch: int = 1,
        starve_after: int = 8,
    ) -> None:
        if max_pending < 1 or max_batch < 1 or max_background_batch < 1 or starve_after < 1:
            raise InputError(
                "max_pending, max_batch, max_background_batch and starve_after must be >= 1, got "
                f"{max_pending}, {max_batch}, {max_background_batch}, {starve_after}"
            )
        unknown = set(background) - set(handlers)
        if unknown:
            raise InputError(f"background kinds without a handler: {', '.join(sorted(unknown))}")
        self.handlers = {**handlers, "_call": lambda items: [fn() for fn in items]}
        self.max_pending, self.max_batch, self.retry_after = max_pending, max_batch, retry_after
        self.background = frozenset(background)
        self.max_background_batch, self.starve_after = max_background_batch, starve_after
        self.pending = 0  # interactive jobs queued or running (the 503 bound)
        self.background_pending = 0
        self.stats = RunnerStats()
        self._queue: deque[_Job] = deque()
        self._waiting: deque[_Job] = deque()  # background jobs
        self._streak = 0  # interactive batches run in a row while background work waited
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="factscout-core")
        self._drainer: asyncio.Task[None] | None = None

    async def submit(self, kind: str, item: Any, *, group: Any = None, uid: Any = None) -> Any:
        """Queue one job and wait for its result; :class:`Saturated` when the queue is full."""
        if kind not in self.handlers:
            raise InputError(f"no job kind {kind!r}; known: {', '.join(sorted(self.handlers))}")
        background = kind in self.background
        if not background and self.pending >= self.max_pending:
            self.stats.rejected += 1
            raise Saturated(self.pending, self.retry_after)
        loop = asyncio.get_running_loop()
        job = _Job(kind, item, loop.create_future(), group, uid)
        if background:
            self.background_pending += 1
            self._waiting.append(job)
        else:
            self.pending += 1
            self._queue.append(job)
        if self._drainer is None or self._drainer.done():
            self._drainer = loop.create_task(self._drain())
        try:
            return await job.future
        finally:
            if background:
                self.background_pending -= 1
            else:
                self.pending -= 1

    async def run(self, fn: Callable[[], Any]) -> Any:
        """Run one unbatched callable on the worker thread, through the same bounded queue."""
        return await self.submit("_call", fn)

    def _take_batch(self) -> list[_Job]:
        """The next batch, in the queue order of the module docstring."""
        if self._waiting and (not self._queue or self._streak >= self.starve_after):
            self._streak = 0
            return _take(self._waiting, self.max_background_batch)
        if self._waiting:
            self._streak += 1
        return _take(self._queue, self.max_batch)

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._queue or self._waiting:
            batch = [j for j in self._take_batch() if not j.future.done()]  # skip requests given up on
            if not batch:
                continue
            kind = batch[0].kind
            outcomes = await loop.run_in_executor(self._executor, self._execute, kind, [j.item for j in batch])
            for job, outcome in zip(batch, outcomes, strict=True):
                if job.future.done():
                    continue
                if isinstance(outcome, BaseException):
                    job.future.set_exception(outcome)
                else:
                    job.future.set_result(outcome)
            self.stats.done += len(batch)
            if kind in self.background:
                self.stats.background_done += len(batch)
            self.stats.batches[kind] = self.stats.batches.get(kind, 0) + 1
            self.stats.largest_batch = max(self.stats.largest_batch, len(batch))

    def _execute(self, kind: str, items: list[Any]) -> list[Any]:
        """On the worker thread: the batch's results, or each item's own exception."""
        if kind == "_call":
            return [_outcome(items[0])]
        handler = self.handlers[kind]
        try:
            results = list(handler(items))
            if len(results) != len(items):
                raise RuntimeError(f"{kind} handler returned {len(results)} results for {len(items)} items")
            return results
        except Exception as exc:
            if len(items) == 1:
                return [exc]
            log.info("%s batch of %d failed (%s); retrying one by one", kind, len(items), exc)
            return [_outcome(functools.partial(_first, handler, item)) for item in items]

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def _take(queue: deque[_Job], size: int) -> list[_Job]:
    """Take the oldest job of ``queue`` and up to ``size - 1`` later ones that can share its batch
    (same kind and group, a uid not yet in it); the others keep their order."""
    first = queue.popleft()
    batch = [first]
    if first.kind == "_call":
        return batch
    uids = {first.uid}
    rest: deque[_Job] = deque()
    while queue and len(batch) < size:
        job = queue.popleft()
        fits = job.kind == first.kind and job.group == first.group
        if fits and (job.uid is None or job.uid not in uids) and not job.future.done():
            batch.append(job)
            uids.add(job.uid)
        else:
            rest.append(job)
    queue.extendleft(reversed(rest))
    return batch


def _outcome(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as exc:
        return exc


def _first(handler: BatchFn, item: Any) -> Any:
    return handler([item])[0]

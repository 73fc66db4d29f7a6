"""An ordered map over a pool of Ray actors: the driver of factscout's batch jobs on Ray.

Each actor builds its worker once (``setup()`` returns the function applied to every item:
loading an index, spaCy, the models), then handles one item at a time. Items go to whichever
actor has room (two queued per actor, so none waits for the driver between items), results
are buffered and yielded in input order, so a run on a cluster writes the same output as a
run in one process. (Ray's ``ActorPool.map`` also keeps order, but hands an actor its next
item only once that actor's result is next in order: with uneven items, as BFS claims are,
fast actors then sit idle behind a slow one.) An actor whose process dies is restarted by Ray
(``max_restarts``: ``setup`` runs again) and its in-flight item retried (``max_task_retries``):
a job survives a killed worker with the same output, as long as the work per item is a pure
function of the item (BFS trajectories are seeded per claim).
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from factscout.errors import InputError
from factscout.rewrite.generate import BFS_POOLS, EnvironmentSource, ray_worker
from factscout.scale.cluster import cluster_cpus, init_ray

if TYPE_CHECKING:
    from factscout.records import Claim
    from factscout.rewrite.bfs import BfsConfig
    from factscout.rewrite.trajectories import ClaimResult

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")

RESTARTS = 3
QUEUED = 2  # items queued per actor


class Worker:
    """The body of a job actor: ``setup`` once, then ``run`` per item."""

    def __init__(self, setup: Callable[[], Callable[[Any], Any]]) -> None:
        self.fn = setup()

    def run(self, item: Any) -> Any:
        return self.fn(item)

    def pid(self) -> int:
        return os.getpid()


def map_on_ray(
    setup: Callable[[], Callable[[T], R]],
    items: Iterable[T],
    *,
    address: str,
    workers: int | None = None,
    restarts: int = RESTARTS,
    on_start: Callable[[list[Any]], None] | None = None,
) -> Iterator[R]:
    """``setup()(item)`` for every item on ``workers`` Ray actors (default and at most: the
    cluster's CPUs, one each), results in input order. ``on_start`` receives the actor handles
    (fault tests kill one of them)."""
    ray = init_ray(address)
    cpus = cluster_cpus(ray)
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise InputError(f"workers must be a positive integer, got {workers!r}")
    n = min(workers or cpus, cpus)  # an actor that cannot get a CPU would hold its items forever
    if workers and workers > cpus:
        log.info("%d workers asked for, the Ray cluster has %d CPUs: using %d", workers, cpus, n)
    actor = ray.remote(Worker).options(num_cpus=1, max_restarts=restarts, max_task_retries=restarts)
    setup_ref = ray.put(setup)
    actors = [actor.remote(setup_ref) for _ in range(n)]
    if on_start is not None:
        on_start(actors)
    try:
        yield from _ordered(ray, actors, items)
    finally:
        for a in actors:
            ray.kill(a)


def _ordered(ray: Any, actors: list[Any], items: Iterable[Any], per_actor: int = QUEUED) -> Iterator[Any]:
    todo = enumerate(items)
    inflight: dict[Any, tuple[int, Any]] = {}
    done: dict[int, Any] = {}
    following = 0

    def submit(actor: Any) -> None:
        for index, item in todo:
            inflight[actor.run.remote(item)] = (index, actor)
            return

    for actor in actors:
        for _ in range(per_actor):
            submit(actor)
    while inflight:
        ready, _ = ray.wait(list(inflight), num_returns=1)
        for ref in ready:
            index, actor = inflight.pop(ref)
            done[index] = ray.get(ref)  # raises if the actor could not be brought back
            submit(actor)
        while following in done:
            yield done.pop(following)
            following += 1


@BFS_POOLS.register("ray")
def bfs_on_ray(
    todo: Sequence[Claim], source: EnvironmentSource, config: BfsConfig, workers: int | None, address: str | None
) -> Iterator[ClaimResult]:
    """BFS trajectories (:func:`factscout.rewrite.generate_trajectories` with ``ray``) on Ray
    actors, each holding its own search environment; results in claim order."""
    setup = functools.partial(ray_worker, source, config)
    yield from map_on_ray(setup, todo, address="auto" if address is None else address, workers=workers)


def _checker(index: str, settings: Any) -> Callable[[list[Any]], list[Any]]:
    """Setup of a ``check`` actor: its own checker over the index (models load once per actor)."""
    from factscout.check import Checker

    checker = Checker.from_index(index, settings)
    return checker.check_many


def check_on_ray(
    index: str | os.PathLike[str],
    settings: Any,
    claims: Iterable[Any],
    *,
    address: str,
    workers: int | None = None,
    batch_size: int = 32,
) -> Iterator[Any]:
    """``Checker.from_index(index, settings).iter_check(claims, batch_size)`` on Ray actors:
    the same batches, each checked by one actor, reports in claim order. The index must be at
    a path every node can read."""
    batches: list[list[Any]] = []
    for claim in claims:
        if not batches or len(batches[-1]) == batch_size:
            batches.append([])
        batches[-1].append(claim)
    setup = functools.partial(_checker, str(index), settings)
    for reports in map_on_ray(setup, batches, address=address, workers=workers):
        yield from reports

"""Sharded BM25 on Ray: shard indexes built as Ray tasks, one Ray actor per shard at query time.

Building runs the map-reduce of :mod:`factscout.retrieve.sharded` as tasks: ``tokenize_shard``
per shard (its tokens stay in Ray's object store; only the statistics come back), the merge of
the statistics here, then ``build_shard`` per shard with the tokens passed by reference. Ray
retries a task whose worker died (``max_retries``) and rebuilds a lost token object from its
lineage, so a build survives a killed worker with the same result.

Searching sends each query batch to every shard actor and merges what comes back. An actor
whose process dies is restarted by Ray (``max_restarts``), which re-runs its constructor (it
loads its shard folder again), and the call is retried on it (``max_task_retries``). A shard
that still cannot answer (restarts used up, its folder unreadable, no answer within
``timeout_s``) is reported as missing: the merged ranking is then ``partial``.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factscout.records import Passage, Query, Ranking
from factscout.retrieve.base import PassageStore
from factscout.retrieve.bm25 import Bm25Config, Bm25Retriever
from factscout.retrieve.sharded import (
    SHARD_BACKENDS,
    CollectionStatistics,
    build_engine,
    empty_rankings,
    load_shard,
    tokenize_texts,
)
from factscout.scale.cluster import init_ray

log = logging.getLogger(__name__)

TASK_RETRIES = 3


def build_shards_ray(
    parts: Sequence[Sequence[Passage]], config: Bm25Config, address: str
) -> list[Bm25Retriever | None]:
    """Build the shards as Ray tasks, in parallel over the cluster; same shards as in-process.

    Tasks get the passages' texts and return only the bm25s engines; the passages stay here."""
    ray = init_ray(address)
    tokenize = ray.remote(num_returns=2, max_retries=TASK_RETRIES)(tokenize_texts)
    build = ray.remote(max_retries=TASK_RETRIES)(build_engine)
    mapped = [tokenize.remote([p.contents for p in part], config) for part in parts]
    stats = CollectionStatistics.merge(ray.get([s for s, _ in mapped]))
    stats_ref = ray.put(stats)
    refs = {i: build.remote(tokens, stats_ref, config) for i, (_, tokens) in enumerate(mapped) if parts[i]}
    engines = dict(zip(refs, ray.get(list(refs.values())), strict=True))
    return [Bm25Retriever(PassageStore(part), engines[i], config) if part else None for i, part in enumerate(parts)]


class ShardServer:
    """The body of a shard actor: loads its shard folder, answers query batches."""

    def __init__(self, folder: str, overrides: dict[str, Any]) -> None:
        self.shard = load_shard(Path(folder), overrides)

    def search(self, queries: Sequence[Query], k: int, published_before: dt.date | None) -> list[Ranking]:
        if self.shard is None:
            return empty_rankings(queries, published_before)
        return self.shard.search(queries, k, published_before=published_before)

    def pid(self) -> int:
        return os.getpid()


class RayShards:
    """One Ray actor per shard folder, spread over the cluster's nodes.

    ``restarts``: how often Ray restarts a dead shard actor (and retries its call);
    ``timeout_s``: how long a query batch waits for a shard; ``num_cpus``: CPUs reserved per
    actor (0 by default: shard actors answer queries between batch jobs and must not block them).
    """

    def __init__(
        self,
        folders: Sequence[Path],
        overrides: dict[str, Any],
        *,
        address: str,
        restarts: int = 3,
        timeout_s: float = 120.0,
        num_cpus: float = 0,
    ) -> None:
        ray = self._ray = init_ray(address)
        actor = ray.remote(ShardServer).options(
            max_restarts=restarts, max_task_retries=restarts, num_cpus=num_cpus, scheduling_strategy="SPREAD"
        )
        self.names: Sequence[str] = [Path(f).name for f in folders]
        self.actors = [actor.remote(str(f), dict(overrides)) for f in folders]
        self.timeout_s = timeout_s

    def search(self, queries: Sequence[Query], k: int, published_before: dt.date | None) -> list[list[Ranking] | None]:
        ray = self._ray
        from ray.exceptions import ActorUnavailableError, GetTimeoutError, RayActorError

        refs = [a.search.remote(list(queries), k, published_before) for a in self.actors]
        out: list[list[Ranking] | None] = []
        for name, ref in zip(self.names, refs, strict=True):
            try:
                out.append(ray.get(ref, timeout=self.timeout_s))
            except (RayActorError, ActorUnavailableError, GetTimeoutError) as exc:
                log.warning("%s did not answer (%s); its hits are missing from this batch", name, type(exc).__name__)
                out.append(None)
        return out

    def pids(self) -> list[int | None]:
        """The process id of each shard actor (None for a dead one): for fault tests and ops."""
        ray = self._ray
        from ray.exceptions import RayActorError

        out: list[int | None] = []
        for a in self.actors:
            try:
                out.append(ray.get(a.pid.remote(), timeout=self.timeout_s))
            except RayActorError:
                out.append(None)
        return out

    def close(self) -> None:
        for a in self.actors:
            self._ray.kill(a)


class RayShardBackend:
    """Shards built as Ray tasks and searched by Ray actors (``ray``: ``auto`` or an address)."""

    def build(
        self, parts: Sequence[Sequence[Passage]], config: Bm25Config, address: str | None
    ) -> list[Bm25Retriever | None]:
        return build_shards_ray(parts, config, _address(address))

    def pool(
        self, store: PassageStore, folders: Sequence[Path], overrides: dict[str, Any], address: str | None
    ) -> RayShards:
        return RayShards(folders, overrides, address=_address(address))


SHARD_BACKENDS.register("ray")(RayShardBackend())


def _address(address: str | None) -> str:
    return "auto" if address is None else address

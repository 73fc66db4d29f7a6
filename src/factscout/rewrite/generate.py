"""The driver of BFS trajectory generation (:mod:`.bfs`) over many claims: resumable, parallel.

Results are appended to the trajectory file per claim (:mod:`.trajectories`), so a stopped run
resumes where it stopped. Parallel runs write the same bytes as a run with one worker: results
are written in claim order, and a claim's result depends only on the claim (its randomness is
seeded with ``(seed, claim_id)``). Where the claims run is a backend of :data:`BFS_POOLS`:
``local`` (this process, or ``workers`` forked processes) or ``ray`` (actors on a Ray cluster,
registered by :mod:`factscout.scale` when imported).
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import multiprocessing as mp
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from factscout.errors import FactscoutError, InputError
from factscout.records import Claim
from factscout.registry import Registry, where_to_run
from factscout.rewrite.actions import load_nlp, wordnet
from factscout.rewrite.bfs import BfsConfig, search_claim
from factscout.rewrite.environment import SearchEnvironment
from factscout.rewrite.trajectories import ClaimResult, TrajectoryWriter, finished_claims

log = logging.getLogger(__name__)

EnvironmentSource = SearchEnvironment | Callable[[], SearchEnvironment]


class BfsPool(Protocol):
    """Runs :func:`search_claim` over ``todo`` and yields the results in claim order;
    ``address`` is the ``ray`` argument of :func:`generate_trajectories` (None: this process)."""

    def __call__(
        self,
        todo: Sequence[Claim],
        source: EnvironmentSource,
        config: BfsConfig,
        workers: int | None,
        address: str | None,
    ) -> Iterator[ClaimResult]: ...


BFS_POOLS: Registry[BfsPool] = Registry("BFS worker pool")

_WORKER: dict[str, Any] = {}


def reopen_wordnet_files() -> None:
    """Give this (forked) process its own WordNet data files. NLTK keeps them open and seeks
    before each read; a forked child shares the parent's open files, and so their offsets, with
    its siblings, so concurrent lookups read each other's positions ("No WordNet synset found
    ... at offset")."""
    try:
        from nltk.corpus import wordnet as wn
    except ImportError:
        return
    files = getattr(wn, "_data_file_map", None)  # NLTK's reader: pos -> open data file
    if isinstance(files, dict):
        files.clear()


def _init_worker(source: EnvironmentSource, config: BfsConfig) -> None:
    reopen_wordnet_files()
    _WORKER["env"] = source if isinstance(source, SearchEnvironment) else source()
    _WORKER["config"] = config


def ray_worker(source: EnvironmentSource, config: BfsConfig) -> Callable[[Claim], ClaimResult]:
    """Setup of a Ray job actor: its own environment (unpickled, or built by the factory)."""
    _init_worker(source, config)
    return _run_one


def _run_one(claim: Claim) -> ClaimResult:
    env: SearchEnvironment = _WORKER["env"]
    try:
        return search_claim(claim, env, _WORKER["config"])
    except (FactscoutError, ValueError) as exc:
        log.warning("claim %s failed: %s", claim.claim_id, exc)
        return ClaimResult(claim.claim_id, "error", 0.0, env.max_reward(claim), error=str(exc))


@dataclass(frozen=True, slots=True)
class GenerationSummary:
    """What one call of :func:`generate_trajectories` did."""

    claims: int
    resumed: int
    statuses: dict[str, int] = field(default_factory=dict)
    sequences: int = 0
    candidates: int = 0
    seconds: float = 0.0

    @property
    def candidates_per_second(self) -> float:
        return self.candidates / self.seconds if self.seconds > 0 else 0.0


def _progress(show: bool, total: int) -> AbstractContextManager[Any]:
    if not show:
        return nullcontext(None)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(
        TextColumn("BFS trajectories"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeRemainingColumn(),
    )


@BFS_POOLS.register("local")
def run_here(
    todo: Sequence[Claim], source: EnvironmentSource, config: BfsConfig, workers: int | None, address: str | None
) -> Iterator[ClaimResult]:
    """The claims in this process, or on ``workers`` processes (forked where the platform can)."""
    if workers is None or workers <= 1 or len(todo) <= 1:
        _init_worker(source, config)
        try:
            yield from map(_run_one, todo)
        finally:
            _WORKER.clear()
        return
    # workers inherit the parent's loaded spaCy and WordNet when forked
    load_nlp()
    wordnet()
    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    with cf.ProcessPoolExecutor(
        max_workers=workers, mp_context=mp.get_context(method), initializer=_init_worker, initargs=(source, config)
    ) as pool:
        yield from pool.map(_run_one, todo, chunksize=1)  # in input order: same file for any worker count


def generate_trajectories(
    claims: Iterable[Claim],
    environment: EnvironmentSource,
    out: str | os.PathLike[str],
    config: BfsConfig | None = None,
    *,
    workers: int | None = None,
    show_progress: bool = False,
    on_claim: Callable[[ClaimResult], None] | None = None,
    ray: str | None = None,
) -> GenerationSummary:
    """Run :func:`search_claim` over ``claims`` and append the results to ``out`` (resumable).

    ``environment`` is a :class:`SearchEnvironment` or a zero-argument factory building one;
    with ``workers > 1`` each worker process builds (factory) or inherits (forked) it once.
    With ``ray`` (``"auto"`` or a cluster address) the claims run on ``workers`` Ray actors
    (default and at most one per CPU of the cluster), each holding its own environment; the
    output is the same file. ``workers`` defaults to 1 in-process.
    """
    config = config or BfsConfig()
    if workers is None and ray is None:
        workers = 1
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        raise InputError(f"workers must be a positive integer, got {workers!r}")
    claims = list(claims)
    ids = [c.claim_id for c in claims]
    if len(set(ids)) != len(ids):
        dup = next(c for i, c in enumerate(ids) if c in ids[:i])
        raise InputError(f"claim {dup!r} occurs twice")
    out_path = Path(out)
    done = finished_claims(out_path)
    todo = [c for c in claims if c.claim_id not in done]
    statuses: Counter[str] = Counter()
    sequences = candidates = 0
    start = time.perf_counter()
    writer = TrajectoryWriter(out_path)
    try:
        with _progress(show_progress, len(todo)) as bar:
            task = bar.add_task("bfs", total=len(todo), rate="") if bar is not None else None
            for result in where_to_run(BFS_POOLS, ray)(todo, environment, config, workers, ray):
                writer.write(result)
                statuses[result.status] += 1
                sequences += len(result.trajectories)
                candidates += result.candidates
                if on_claim is not None:
                    on_claim(result)
                if bar is not None:
                    rate = candidates / max(time.perf_counter() - start, 1e-9)
                    bar.update(task, advance=1, rate=f"{rate:,.0f} candidates/s")
    finally:
        writer.close()
    return GenerationSummary(
        len(claims), len(claims) - len(todo), dict(statuses), sequences, candidates, time.perf_counter() - start
    )

"""Breadth-first generation of edit trajectories for offline RL (Kazemi et al., "Query Rewriting
for Effective Misinformation Discovery", AACL 2023, Section 3.2).

For each claim, starting from the claim text, every valid edit (:mod:`.actions`) is applied and
scored against the black-box search environment (:mod:`.environment`); only edits that
improve the reward are expanded further, level by level, up to ``max_depth`` edits (default 4,
as in the paper). As in the paper, expansions that gain less than 3% (relative to the current
reward) are pruned, and so is a random 5% of the remaining ones, which diversifies the
sequences and keeps the search cheap; the randomness comes from a generator seeded with
``(seed, claim_id)``, so a claim's trajectories do not depend on which worker handled it or
in which order. A query reached twice (by different edit orders) is expanded once, and at most
``max_frontier`` states (best reward first) are kept per level, which bounds the cost on
claims where almost every edit helps.

A trajectory ends where no edit improves the query any more or at the depth limit; the
``top_n`` best (by final reward, then fewer edits, then action ids) are written per claim.
Claims whose original query already reaches the best reward reachable are skipped, as are
claims without relevant passages.

Output: a JSONL file with one row per edit step::

    {"claim_id": "12", "sequence": 0, "step": 0, "query": "...", "action": 99,
     "action_text": "remove 'rose' at 3", "next_query": "...", "reward": 0.21, "next_reward": 0.30}

and a manifest ``<name>.claims.jsonl`` with one row per finished claim (status, original and
best-reachable reward, number of sequences, candidates scored). Both are appended per claim,
rows first and the manifest line last, each flushed to disk, so a run stopped at any point
resumes where it stopped: claims in the manifest are skipped, and rows of a claim that was cut
off half-way are removed first. Parallel runs (``workers > 1``, processes; or ``ray``: actors on
a Ray cluster, :mod:`factscout.scale.jobs`) write the same bytes as a run with one worker: results
are written in claim order, and a claim's result depends only on the claim.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import logging
import multiprocessing as mp
import os
import random
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

from factscout.errors import FactscoutError, InputError
from factscout.records import Claim
from factscout.rewrite.actions import Edit, load_nlp, valid_edits, wordnet
from factscout.rewrite.environment import SearchEnvironment

log = logging.getLogger(__name__)

Status = Literal["done", "no_improvement", "at_max", "no_relevant", "error"]
EnvironmentSource = SearchEnvironment | Callable[[], SearchEnvironment]
_EPS = 1e-12


@dataclass(frozen=True, slots=True)
class BfsConfig:
    """Search settings; the defaults follow the paper where it gives a value."""

    max_depth: int = 4
    min_gain: float = 0.03  # relative to the current reward
    random_prune: float = 0.05
    top_n: int = 5
    max_frontier: int = 32
    seed: int = 0
    negatives: int = 0  # random-edit sequences per claim, kept whatever their rewards (for the DT)

    def __post_init__(self) -> None:
        for name in ("max_depth", "top_n", "max_frontier"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InputError(f"{name} must be a positive integer, got {value!r}")
        if not isinstance(self.negatives, int) or isinstance(self.negatives, bool) or self.negatives < 0:
            raise InputError(f"negatives must be a non-negative integer, got {self.negatives!r}")
        if not self.min_gain >= 0.0:
            raise InputError(f"min_gain must be >= 0, got {self.min_gain!r}")
        if not 0.0 <= self.random_prune < 1.0:
            raise InputError(f"random_prune must be in [0, 1), got {self.random_prune!r}")


@dataclass(frozen=True, slots=True)
class Step:
    """One edit of a trajectory: the query before and after and their rewards."""

    claim_id: str
    sequence: int
    step: int
    query: str
    action: int
    action_text: str
    next_query: str
    reward: float
    next_reward: float
    negative: bool = False  # part of a random-edit sequence, not a BFS improvement

    def to_row(self) -> dict[str, Any]:
        """The JSONL row; ``negative`` appears only on random-edit steps (rows of BFS steps keep
        the original format)."""
        row = {f.name: getattr(self, f.name) for f in fields(self)}
        if not self.negative:
            del row["negative"]
        return row


@dataclass(frozen=True, slots=True)
class Trajectory:
    """An improving edit sequence for one claim."""

    claim_id: str
    steps: tuple[Step, ...]

    @property
    def reward(self) -> float:
        return self.steps[0].reward

    @property
    def final_reward(self) -> float:
        return self.steps[-1].next_reward

    @property
    def actions(self) -> tuple[int, ...]:
        return tuple(s.action for s in self.steps)

    @property
    def negative(self) -> bool:
        """A random-edit sequence (its rewards may fall), not an improving BFS sequence."""
        return any(s.negative for s in self.steps)


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """What the search found for one claim."""

    claim_id: str
    status: Status
    reward: float
    max_reward: float
    trajectories: tuple[Trajectory, ...] = ()
    candidates: int = 0
    error: str | None = None

    def manifest_row(self) -> dict[str, Any]:
        return {
            "claim_id": self.claim_id,
            "status": self.status,
            "reward": self.reward,
            "max_reward": self.max_reward,
            "sequences": len(self.trajectories),
            "candidates": self.candidates,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class _Node:
    text: str
    reward: float
    path: tuple[tuple[Edit, float, float], ...]  # (edit, reward before, reward after)

    def sort_key(self) -> tuple[float, int, tuple[int, ...]]:
        return (-self.reward, len(self.path), tuple(e.action_id for e, _, _ in self.path))


def improves(before: float, after: float, min_gain: float) -> bool:
    """True when ``after`` beats ``before`` by at least ``min_gain`` relative to ``before``
    (any gain from a reward of 0)."""
    if after <= before + _EPS:
        return False
    return before <= _EPS or (after - before) / before >= min_gain - _EPS


def _reached(text: str, visited: dict[str, float]) -> list[tuple[Edit, float]]:
    return [(e, visited[e.next_query]) for e in valid_edits(text) if e.next_query in visited]


def search_claim(claim: Claim, environment: SearchEnvironment, config: BfsConfig | None = None) -> ClaimResult:
    """Depth-limited, improvement-only BFS over edit sequences for one claim (pure given a
    deterministic retriever: the output depends only on the claim, the retriever and ``config``).

    With ``config.negatives`` > 0, that many random-edit sequences of up to ``max_depth`` edits
    follow the BFS sequences (``Step.negative``; sequence numbers after the BFS ones), for claims
    with relevant passages whatever the BFS found: the decision transformer then also sees what
    low returns look like (the "negative training sequences" of Kazemi et al.).
    """
    config = config or BfsConfig()
    result = _bfs(claim, environment, config)
    if not config.negatives or result.status == "no_relevant":
        return result
    rng = random.Random(f"{config.seed}:negatives:{claim.claim_id}")
    extra: list[Trajectory] = []
    candidates = result.candidates
    for j in range(config.negatives):
        text, reward, steps = claim.text, result.reward, []
        for i in range(config.max_depth):
            edits = valid_edits(text)
            if not edits:
                break
            edit = edits[rng.randrange(len(edits))]
            after = environment.reward(claim, edit.next_query)
            candidates += 1
            seq = len(result.trajectories) + j
            steps.append(
                Step(
                    claim.claim_id, seq, i, text, edit.action_id, edit.description, edit.next_query, reward, after, True
                )
            )
            text, reward = edit.next_query, after
        if steps:
            extra.append(Trajectory(claim.claim_id, tuple(steps)))
    return replace(result, trajectories=(*result.trajectories, *extra), candidates=candidates)


def _bfs(claim: Claim, environment: SearchEnvironment, config: BfsConfig) -> ClaimResult:
    best = environment.max_reward(claim)
    if best <= 0.0:
        return ClaimResult(claim.claim_id, "no_relevant", 0.0, 0.0)
    root_reward = environment.reward(claim, claim.text)
    if root_reward >= best - _EPS:
        return ClaimResult(claim.claim_id, "at_max", root_reward, best, candidates=1)
    rng = random.Random(f"{config.seed}:{claim.claim_id}")
    frontier = [_Node(claim.text, root_reward, ())]
    visited = {claim.text: root_reward}  # query -> reward: each query is expanded once
    terminals: list[_Node] = []
    candidates = 1
    for _ in range(config.max_depth):
        children: list[_Node] = []
        for node in frontier:
            if node.reward >= best - _EPS:  # nothing left to improve
                terminals.append(node)
                continue
            edits = [e for e in valid_edits(node.text) if e.next_query not in visited]
            rewards = environment.rewards(claim, [e.next_query for e in edits]) if edits else []
            candidates += len(edits)
            # an improving edit to a query already reached by another path still makes this node
            # a prefix of a longer sequence, not the end of one
            kept = any(improves(node.reward, r, config.min_gain) for e, r in _reached(node.text, visited))
            for edit, reward in zip(edits, rewards, strict=True):
                if edit.next_query in visited or not improves(node.reward, reward, config.min_gain):
                    continue
                if rng.random() < config.random_prune:
                    continue
                visited[edit.next_query] = reward
                children.append(_Node(edit.next_query, reward, (*node.path, (edit, node.reward, reward))))
                kept = True
            if not kept and node.path:
                terminals.append(node)
        children.sort(key=_Node.sort_key)
        frontier = children[: config.max_frontier]
        if not frontier:
            break
    terminals.extend(frontier)
    if not terminals:
        return ClaimResult(claim.claim_id, "no_improvement", root_reward, best, candidates=candidates)
    terminals.sort(key=_Node.sort_key)
    trajectories = tuple(
        Trajectory(
            claim.claim_id,
            tuple(
                Step(claim.claim_id, rank, i, e.query, e.action_id, e.description, e.next_query, before, after)
                for i, (e, before, after) in enumerate(node.path)
            ),
        )
        for rank, node in enumerate(terminals[: config.top_n])
    )
    return ClaimResult(claim.claim_id, "done", root_reward, best, trajectories, candidates)


# ---------------------------------------------------------------- files


def manifest_path(out: str | os.PathLike[str]) -> Path:
    """The per-claim manifest next to the trajectory file: ``traj.jsonl`` -> ``traj.claims.jsonl``."""
    path = Path(out)
    return path.with_name(f"{path.stem}.claims.jsonl")


def _complete_rows(path: Path) -> tuple[list[dict[str, Any]], bool]:
    """The JSON rows of complete lines and whether anything (a cut-off last line) was dropped."""
    if not path.exists():
        return [], False
    rows, dropped = [], False
    with path.open("rb") as f:
        for raw in f:
            if not raw.endswith(b"\n"):
                dropped = True
                break
            try:
                rows.append(json.loads(raw))
            except json.JSONDecodeError:
                dropped = True
                break
    return rows, dropped


def _rewrite(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def finished_claims(out: str | os.PathLike[str]) -> set[str]:
    """Claim ids already finished in a previous run, repairing a run cut off mid-claim:
    trajectory rows of claims missing from the manifest and cut-off lines are removed."""
    out, manifest = Path(out), manifest_path(out)
    done_rows, manifest_cut = _complete_rows(manifest)
    if manifest_cut:
        _rewrite(manifest, done_rows)
    done = {str(r["claim_id"]) for r in done_rows}
    rows, cut = _complete_rows(out)
    kept = [r for r in rows if str(r.get("claim_id")) in done]
    if cut or len(kept) != len(rows):
        log.info("removing %d rows of unfinished claims from %s", len(rows) - len(kept), out)
        _rewrite(out, kept)
    return done


def read_trajectories(path: str | os.PathLike[str]) -> list[Trajectory]:
    """The trajectories of a BFS output file, in file order."""
    rows, _ = _complete_rows(Path(path))
    groups: dict[tuple[str, int], list[Step]] = {}
    for row in rows:
        groups.setdefault((str(row["claim_id"]), int(row["sequence"])), []).append(Step(**row))
    return [Trajectory(cid, tuple(sorted(steps, key=lambda s: s.step))) for (cid, _), steps in groups.items()]


class _Writer:
    def __init__(self, out: Path) -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        self.rows = out.open("a", encoding="utf-8")
        self.manifest = manifest_path(out).open("a", encoding="utf-8")

    def write(self, result: ClaimResult) -> None:
        text = "".join(
            json.dumps(step.to_row(), ensure_ascii=False) + "\n" for t in result.trajectories for step in t.steps
        )
        for f, chunk in ((self.rows, text), (self.manifest, json.dumps(result.manifest_row()) + "\n")):
            if chunk:
                f.write(chunk)
                f.flush()
                os.fsync(f.fileno())

    def close(self) -> None:
        self.rows.close()
        self.manifest.close()


# ---------------------------------------------------------------- parallel driver

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


def _results(
    todo: Sequence[Claim], source: EnvironmentSource, config: BfsConfig, workers: int | None, ray: str | None = None
) -> Iterator[ClaimResult]:
    if ray is not None:
        import functools

        from factscout.scale.jobs import map_on_ray

        yield from map_on_ray(functools.partial(ray_worker, source, config), todo, address=ray, workers=workers)
        return
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
    writer = _Writer(out_path)
    try:
        with _progress(show_progress, len(todo)) as bar:
            task = bar.add_task("bfs", total=len(todo), rate="") if bar is not None else None
            for result in _results(todo, environment, config, workers, ray):
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

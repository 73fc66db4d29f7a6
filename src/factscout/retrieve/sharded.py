"""Sharded BM25: a corpus split into N shards, queries fanned out, the top-k merged, with
scores and rankings equal to one index over the whole corpus.

Sharding. A passage goes to shard ``blake2b-64(passage_id) mod N``: stable across processes,
machines and Python versions (unlike ``hash``), independent of corpus order, so a passage
always lands on the same shard.

Global collection statistics. BM25 weighs a term by the collection's document count N, the
term's document frequency df and the average document length; scored per shard, each shard
would use its own and the merged scores would not be comparable (nor equal to the single
index). Building is therefore a map-reduce: each shard tokenizes its passages and reports its
document count, total length and per-term df (map); the coordinator sums them into the
collection's statistics and one vocabulary (reduce); each shard then builds its bm25s score
matrix with the collection's N, df and average length over that shared vocabulary (map). The
per-(term, passage) weights are computed by bm25s's own scoring functions with the same inputs
as in a single index, and a query sums them in its token order in both, so every score is
bit-for-bit the single index's (tests/retrieve/test_sharded.py checks this on SciFact).

Merging. Each shard returns its top k under the tie rule (:mod:`.bm25` settles ties at the
cut by passage id); the union is sorted by ``(-score, passage_id)`` and cut at k, which is
the single index's top k. The date filter applies inside each shard; the shards' filter counts
add up to the single index's.

Failure. Shards are searched through a pool: :class:`LocalShards` in this process, or Ray
actors (registered as the ``ray`` shard backend by :mod:`factscout.scale`) that Ray restarts when they die, retrying the query. A
shard that still cannot answer is named in the ranking's ``missing_shards`` (``partial``):
never silently fewer results.

Written here by hand because no library offers it: bm25s has no sharding, and search servers
that do (Elasticsearch's DFS query-then-fetch) are servers, not an embedded library.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from factscout.errors import BadIndex, InputError
from factscout.formats.beir import read_corpus, write_corpus
from factscout.records import DateFilterStats, Passage, Query, Ranking
from factscout.registry import Registry, where_to_run
from factscout.retrieve.base import PassageStore, check_k
from factscout.retrieve.bm25 import Bm25Config, Bm25Retriever, make_stemmer

SHARD_HASH = "blake2b-64"
DEFAULT_SHARDS = 2


def shard_of(passage_id: str, shards: int) -> int:
    """The shard of a passage: a stable 64-bit hash of its id modulo the shard count."""
    digest = hashlib.blake2b(passage_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % shards


def split_passages(passages: Iterable[Passage], shards: int) -> list[list[Passage]]:
    """The passages of each shard, in corpus order within a shard."""
    check_shards(shards)
    out: list[list[Passage]] = [[] for _ in range(shards)]
    for p in passages:
        out[shard_of(p.passage_id, shards)].append(p)
    return out


def check_shards(shards: object) -> int:
    if not isinstance(shards, int) or isinstance(shards, bool) or shards < 1:
        raise InputError(f"shards must be a positive integer, got {shards!r}")
    return shards


def shard_name(i: int) -> str:
    return f"shard-{i:03d}"


@dataclass(frozen=True, slots=True)
class ShardedConfig:
    shards: int = DEFAULT_SHARDS

    def __post_init__(self) -> None:
        check_shards(self.shards)


# ---------------------------------------------------------------- global statistics


@dataclass(frozen=True, slots=True)
class ShardStatistics:
    """What one shard reports in the map step: its size, total length and term dfs."""

    n_docs: int
    total_length: int
    doc_freqs: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CollectionStatistics:
    """The whole collection's BM25 statistics over one sorted vocabulary (the reduce step)."""

    n_docs: int
    total_length: int
    vocab: tuple[str, ...]
    doc_freqs: tuple[int, ...]

    @classmethod
    def merge(cls, parts: Sequence[ShardStatistics]) -> CollectionStatistics:
        df: Counter[str] = Counter()
        for part in parts:
            df.update(part.doc_freqs)
        vocab = tuple(sorted(df))
        return cls(sum(p.n_docs for p in parts), sum(p.total_length for p in parts), vocab, tuple(df[t] for t in vocab))

    @property
    def avg_length(self) -> np.float64:
        # what bm25s computes for a single index: np.mean of the integer lengths (exact sum, one division)
        return np.float64(self.total_length) / np.float64(max(self.n_docs, 1))


def tokenize_shard(passages: Sequence[Passage], config: Bm25Config) -> tuple[ShardStatistics, list[list[str]]]:
    """Map step: tokens of each passage (as a single index tokenizes them) and the shard's statistics."""
    return tokenize_texts([p.contents for p in passages], config)


def tokenize_texts(texts: Sequence[str], config: Bm25Config) -> tuple[ShardStatistics, list[list[str]]]:
    """:func:`tokenize_shard` on the passages' contents (title and text)."""
    import bm25s

    if not texts:
        return ShardStatistics(0, 0, {}), []
    tokens: list[list[str]] = bm25s.tokenize(  # type: ignore[assignment]
        list(texts),
        stopwords=config.stopwords,
        stemmer=make_stemmer(config.stemmer),
        return_ids=False,
        show_progress=False,
    )
    df: Counter[str] = Counter()
    for doc in tokens:
        df.update(set(doc))
    return ShardStatistics(len(tokens), sum(len(d) for d in tokens), dict(df)), tokens


def build_shard(
    passages: Sequence[Passage], tokens: Sequence[Sequence[str]], stats: CollectionStatistics, config: Bm25Config
) -> Bm25Retriever | None:
    """Second map step: the shard's bm25s index, scored with the collection's statistics.

    Uses bm25s's own idf, term-frequency and CSC functions with the collection's N, df and
    average length, so every weight equals the one a single index over the corpus stores.
    """
    if not passages:
        return None
    return Bm25Retriever(PassageStore(passages), build_engine(tokens, stats, config), config)


def build_engine(tokens: Sequence[Sequence[str]], stats: CollectionStatistics, config: Bm25Config) -> Any:
    """The bm25s engine of one shard (see :func:`build_shard`)."""
    import bm25s
    from bm25s.scoring import (
        _build_idf_array,
        _build_nonoccurrence_array,
        _build_scores_and_indices_for_matrix,
        _select_idf_scorer,
        _select_tfc_scorer,
    )

    engine = bm25s.BM25(k1=config.k1, b=config.b, method=config.method)
    vocab = {t: i for i, t in enumerate(stats.vocab)}
    ids = [[vocab[t] for t in doc] for doc in tokens]
    global_df = dict(enumerate(stats.doc_freqs))
    avg = stats.avg_length
    idf = _build_idf_array(global_df, stats.n_docs, _select_idf_scorer(engine.idf_method), engine.dtype)
    nonoccurrence = None
    if engine.method in engine.methods_requiring_nonoccurrence:
        nonoccurrence = _build_nonoccurrence_array(
            global_df,
            stats.n_docs,
            _select_idf_scorer(engine.idf_method),
            _select_tfc_scorer(engine.method),
            avg,
            avg,
            engine.k1,
            engine.b,
            engine.delta,
            engine.dtype,
        )
    pairs = sum(len(set(doc)) for doc in ids)  # array size: (passage, term) pairs of this shard
    weights, rows, cols = _build_scores_and_indices_for_matrix(
        corpus_token_ids=ids,
        idf_array=idf,
        avg_doc_len=avg,
        doc_frequencies={0: pairs},
        k1=engine.k1,
        b=engine.b,
        delta=engine.delta,
        nonoccurrence_array=nonoccurrence,
        method=engine.method,
        dtype=engine.dtype,
        int_dtype=engine.int_dtype,
        show_progress=False,
    )
    data, indices, indptr = engine._np_csc(data=weights, rows=rows, cols=cols, shape=(len(ids), len(vocab)))
    engine.scores = {"data": data.astype(engine.dtype), "indices": indices, "indptr": indptr, "num_docs": len(ids)}
    engine.vocab_dict = {**vocab, "": len(vocab)}
    engine.unique_token_ids_set = set(engine.vocab_dict.values())
    engine.nonoccurrence_array = nonoccurrence
    return engine


def build_shards_local(shards: Sequence[Sequence[Passage]], config: Bm25Config) -> list[Bm25Retriever | None]:
    """Build every shard in this process (the same map-reduce as on Ray, run in a loop)."""
    mapped = [tokenize_shard(part, config) for part in shards]
    stats = CollectionStatistics.merge([s for s, _ in mapped])
    return [build_shard(part, tokens, stats, config) for part, (_, tokens) in zip(shards, mapped, strict=True)]


# ---------------------------------------------------------------- fan-out and merge


class ShardPool(Protocol):
    """Where the shards live. ``search`` returns one entry per shard: its rankings, or None
    when the shard could not answer."""

    names: Sequence[str]

    def search(
        self, queries: Sequence[Query], k: int, published_before: dt.date | None
    ) -> list[list[Ranking] | None]: ...


class ShardBackend(Protocol):
    """Where shards are built and searched: ``local`` (this process, built in) or ``ray``
    (registered by :mod:`factscout.scale` when imported). ``address`` is the ``ray`` argument
    of :meth:`ShardedRetriever.build`/``load`` (None in this process)."""

    def build(
        self, parts: Sequence[Sequence[Passage]], config: Bm25Config, address: str | None
    ) -> list[Bm25Retriever | None]: ...

    def pool(
        self, store: PassageStore, folders: Sequence[Path], overrides: dict[str, Any], address: str | None
    ) -> ShardPool: ...


SHARD_BACKENDS: Registry[ShardBackend] = Registry("shard backend")


class LocalShards:
    """Shards in this process (no Ray): the same merge, sequential fan-out."""

    def __init__(self, shards: Sequence[Bm25Retriever | None]) -> None:
        self.shards = list(shards)
        self.names: Sequence[str] = [shard_name(i) for i in range(len(self.shards))]

    def search(self, queries: Sequence[Query], k: int, published_before: dt.date | None) -> list[list[Ranking] | None]:
        return [
            empty_rankings(queries, published_before)
            if shard is None
            else shard.search(queries, k, published_before=published_before)
            for shard in self.shards
        ]


class LocalShardBackend:
    """Shards built and searched in this process; a saved shard's passages come from ``store``."""

    def build(
        self, parts: Sequence[Sequence[Passage]], config: Bm25Config, address: str | None
    ) -> list[Bm25Retriever | None]:
        return build_shards_local(parts, config)

    def pool(
        self, store: PassageStore, folders: Sequence[Path], overrides: dict[str, Any], address: str | None
    ) -> LocalShards:
        parts = split_passages(store.passages, len(folders))
        return LocalShards(
            [load_shard(folder, overrides, PassageStore(part)) for folder, part in zip(folders, parts, strict=True)]
        )


SHARD_BACKENDS.register("local")(LocalShardBackend())


def empty_rankings(queries: Sequence[Query], published_before: dt.date | None) -> list[Ranking]:
    """What an empty shard answers (its date-filter counts are all zero)."""
    stats = None if published_before is None else DateFilterStats(published_before, "", 0, 0, 0, 0)
    return [Ranking(q.query_id, (), stats) for q in queries]


def _sum_stats(parts: Sequence[DateFilterStats | None], published_before: dt.date | None) -> DateFilterStats | None:
    present = [p for p in parts if p is not None]
    if published_before is None or not present:
        return None
    policy = next((p.undated_policy for p in present if p.undated_policy), "")
    return DateFilterStats(
        published_before,
        policy,
        sum(p.allowed for p in present),
        sum(p.excluded_late for p in present),
        sum(p.undated_kept for p in present),
        sum(p.undated_dropped for p in present),
    )


def merge_rankings(
    queries: Sequence[Query],
    per_shard: Sequence[list[Ranking] | None],
    names: Sequence[str],
    k: int,
    published_before: dt.date | None,
) -> list[Ranking]:
    """One ranking per query: the shards' hits by ``(-score, passage_id)``, cut at ``k``; the
    shards that did not answer are listed in ``missing_shards``."""
    missing = tuple(name for name, got in zip(names, per_shard, strict=True) if got is None)
    answered = [got for got in per_shard if got is not None]
    out = []
    for i, q in enumerate(queries):
        pairs: list[tuple[float, str]] = []
        for rankings in answered:
            r = rankings[i]
            pairs += zip(r.scores_in_order(), r.passage_ids, strict=True)
        pairs.sort(key=lambda t: (-t[0], t[1]))
        top = pairs[:k]
        stats = _sum_stats([rankings[i].date_filter for rankings in answered], published_before)
        if published_before is not None and stats is None:
            stats = DateFilterStats(published_before, "", 0, 0, 0, 0)
        out.append(
            Ranking.from_sorted(
                q.query_id,
                [pid for _, pid in top],
                [s for s, _ in top],
                (q.query_id,),
                stats,
                missing_shards=missing,
            )
        )
    return out


class ShardedRetriever:
    """BM25 over N shards with global statistics; ``search`` follows the retriever contract.

    ``store`` holds every passage (the checker reads passage text from it); the shards are in
    ``pool``: in this process, or Ray actors (the ``ray`` entry of :data:`SHARD_BACKENDS`).
    """

    name = "sharded"

    def __init__(
        self,
        store: PassageStore,
        pool: ShardPool,
        config: ShardedConfig,
        bm25: Bm25Config,
        shards: Sequence[Bm25Retriever | None] | None = None,
    ) -> None:
        self.store, self.pool, self.config, self.bm25 = store, pool, config, bm25
        self.shards = shards  # the built shards when they are in this process (to save them)

    @classmethod
    def build(
        cls,
        store: PassageStore,
        config: ShardedConfig | None = None,
        bm25: Bm25Config | None = None,
        *,
        ray: str | None = None,
    ) -> ShardedRetriever:
        """Split ``store`` into shards and build them: in this process, or as Ray tasks
        (``ray``: ``"auto"`` or a cluster address; see :mod:`factscout.scale`)."""
        config, bm25 = config or ShardedConfig(), bm25 or Bm25Config()
        parts = split_passages(store.passages, config.shards)
        shards = where_to_run(SHARD_BACKENDS, ray).build(parts, bm25, ray)
        return cls(store, LocalShards(shards), config, bm25, shards)

    def search(self, queries: Sequence[Query], k: int, *, published_before: dt.date | None = None) -> list[Ranking]:
        check_k(k)
        if not queries:
            return []
        per_shard = self.pool.search(queries, k, published_before)
        return merge_rankings(queries, per_shard, self.pool.names, k, published_before)

    # -------------------------------------------------------------- files

    def save(self, directory: Path) -> None:
        """``sharded.json`` plus one folder per shard (its passages and its bm25s index), so a
        shard actor on another node needs only its own folder."""
        if self.shards is None:
            raise InputError("only a sharded index built in this process can be saved")
        directory.mkdir(parents=True, exist_ok=True)
        for i, shard in enumerate(self.shards):
            folder = directory / shard_name(i)
            folder.mkdir()
            write_corpus(folder / "passages.jsonl", shard.store.passages if shard is not None else [])
            if shard is not None:
                shard.save(folder / "bm25")
        meta = {"shards": self.config.shards, "hash": SHARD_HASH, "bm25": asdict(self.bm25)}
        (directory / "sharded.json").write_text(json.dumps(meta, indent=1))

    @classmethod
    def load(
        cls, store: PassageStore, directory: Path, *, ray: str | None = None, **overrides: Any
    ) -> ShardedRetriever:
        """Load the shards into this process, or (``ray``) start one Ray actor per shard that
        loads its own folder (the index must then be on a path every node can read)."""
        try:
            meta = json.loads((directory / "sharded.json").read_text())
            config = ShardedConfig(int(meta["shards"]))
            bm25 = Bm25Config(**{**meta["bm25"], **overrides})
        except (OSError, ValueError, KeyError) as exc:
            raise BadIndex(f"sharded index in {directory} is unreadable ({exc}); rebuild it") from None
        if meta.get("hash") != SHARD_HASH:
            raise BadIndex(f"sharded index in {directory} uses shard hash {meta.get('hash')!r}, expected {SHARD_HASH}")
        folders = [directory / shard_name(i) for i in range(config.shards)]
        pool = where_to_run(SHARD_BACKENDS, ray).pool(store, folders, overrides, ray)
        return cls(store, pool, config, bm25, pool.shards if isinstance(pool, LocalShards) else None)


def load_shard(folder: Path, overrides: dict[str, Any], store: PassageStore | None = None) -> Bm25Retriever | None:
    """One shard from its folder (``store``: its passages when the caller has them already)."""
    if store is None:
        try:
            store = PassageStore(read_corpus(folder / "passages.jsonl"))
        except (OSError, InputError) as exc:
            raise BadIndex(f"passages of {folder} are unreadable ({exc}); rebuild the index") from None
    if not len(store):
        return None
    return Bm25Retriever.load(store, folder / "bm25", **overrides)

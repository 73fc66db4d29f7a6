"""Dense kNN inside PostgreSQL with pgvector (Kane 2021-), equal to the embedded dense backend.

Passages are embedded by the same encoder and embedding cache as ``retrieve/dense.py``
(``minilm`` offline by default) and stored as ``vector(d)``; embeddings are L2-normalised, so
the inner product (pgvector's ``<#>`` is its negative) is cosine similarity. Below
``exact_below`` passages there is no vector index and every search is exact, ordered by
``(distance, pos)``: the contract's tie rule, inside the server. Above it, an HNSW index
(Malkov & Yashunin 2018; ``m`` and ``ef_construction`` as the embedded faiss graph;
``hnsw.ef_search`` is set per search to ``max(ef_search, k)``, as faiss does).

A batch is one pipelined round trip, one statement per query. ``published_before`` is a
``WHERE`` on the passages, so it restricts the candidates, not the results. An HNSW
scan in pgvector 0.6 stops after ``ef_search`` candidates and filters them afterwards, so a
selective filter can leave fewer than k hits; those queries are run again exactly (index scans
off, in one more round trip), as the embedded backend falls back to exact scoring, so k hits
come back whenever k passages are allowed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from factscout.records import Query, Ranking
from factscout.retrieve.base import PassageStore, check_k
from factscout.retrieve.dense import DenseConfig, encode_store, load_encoder
from factscout.retrieve.postgres.server import (
    PgConfig,
    PgGeneration,
    build_generation,
    ids_by_pos,
    rankings_from_rows,
    read_settings,
    save_settings,
    saved_config,
)
from factscout.text.encoder import Encoder

EF_CONSTRUCTION = 200  # as the embedded faiss HNSW graph
MAX_EF_SEARCH = 1000  # pgvector's limit

_SEARCH = """
SELECT p.pos, -(p.embedding <#> %(v)s)
FROM {passages} AS p
{where}
ORDER BY p.embedding <#> %(v)s{tie}
LIMIT %(k)s
"""
WHERE_DATE = "WHERE p.published < %(before)s OR (p.published IS NULL AND %(keep_undated)s)"


class PgDenseRetriever:
    """kNN over a server index generation's vectors; ``search`` follows the retriever contract."""

    name = "pg-dense"

    def __init__(self, store: PassageStore, generation: PgGeneration, config: DenseConfig, encoder: Encoder) -> None:
        self.store, self.generation, self.config, self.encoder = store, generation, config, encoder
        self._ids = ids_by_pos(store)

    @property
    def hnsw(self) -> bool:
        return len(self.store) >= self.config.exact_below

    @classmethod
    def build(
        cls,
        store: PassageStore,
        config: DenseConfig | None = None,
        pg: PgConfig | None = None,
        *,
        encoder: Encoder | None = None,
        show_progress: bool = False,
    ) -> PgDenseRetriever:
        vectors, config, encoder = encode_store(store, config, encoder=encoder, show_progress=show_progress)
        hnsw = (config.hnsw_m, EF_CONSTRUCTION) if len(store) >= config.exact_below else None
        generation = build_generation(
            pg or PgConfig(), store, cls.name, {"dense": asdict(config)}, vectors=vectors, hnsw=hnsw
        )
        return cls(store, generation, config, encoder)

    def search(self, queries: Sequence[Query], k: int, *, published_before: dt.date | None = None) -> list[Ranking]:
        check_k(k)
        if not queries or not len(self.store):
            return [Ranking(q.query_id) for q in queries]
        return self.search_vectors(queries, self.encoder.encode([q.text for q in queries]), k, published_before)

    def search_vectors(
        self, queries: Sequence[Query], q_vecs: np.ndarray, k: int, published_before: dt.date | None = None
    ) -> list[Ranking]:
        """Search with query embeddings already computed (benchmarks)."""
        stats = None
        if published_before is not None:
            _, stats = self.store.date_mask(published_before, self.config.undated)
        depth = min(k, len(self.store) if stats is None else stats.allowed)
        if depth == 0:
            return [Ranking(q.query_id, (), stats) for q in queries]
        rows = self._knn(q_vecs, depth, published_before, exact=not self.hnsw)
        if self.hnsw:  # the index returns rows by distance only; ties go by pos, as everywhere
            for hits in rows:
                hits.sort(key=lambda h: (-h[1], h[0]))
            short = [i for i, hits in enumerate(rows) if len(hits) < depth]
            if short:  # a filter emptied the HNSW candidate list: score these exactly
                for i, hits in zip(short, self._knn(q_vecs[short], depth, published_before, exact=True), strict=True):
                    rows[i] = hits
        return rankings_from_rows(queries, rows, self._ids, stats)

    def _knn(self, q_vecs: np.ndarray, k: int, published_before: dt.date | None, *, exact: bool) -> list[list[tuple]]:
        from psycopg import sql

        statement = sql.SQL(_SEARCH).format(
            passages=self.generation.table("passages"),
            where=sql.SQL(WHERE_DATE if published_before is not None else ""),
            tie=sql.SQL(", p.pos" if exact else ""),
        )
        shared = {"k": k, "before": published_before, "keep_undated": self.config.undated == "keep"}
        # as faiss, search at least k candidates (pgvector's ceiling is 1000; the fallback does the rest)
        ef_search = min(max(self.config.ef_search, k), MAX_EF_SEARCH)
        local = {"enable_indexscan": "off"} if exact else {"hnsw.ef_search": str(ef_search)}
        return self.generation.fetch_many(statement, [{"v": v, **shared} for v in q_vecs], local=local)

    def save(self, directory: Path) -> None:
        save_settings(directory, self.name, self.generation, {"dense": asdict(self.config)})

    @classmethod
    def load(cls, store: PassageStore, directory: Path, **overrides: object) -> PgDenseRetriever:
        saved, dsn = read_settings(directory, cls.name, overrides)
        config = saved_config(directory, saved, "dense", DenseConfig, overrides)
        generation = PgGeneration.open(dsn, saved["name"], saved["generation"], store, vectors=True)
        return cls(store, generation, config, load_encoder(config, directory))

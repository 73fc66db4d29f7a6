"""Hybrid retrieval over one PostgreSQL generation: the embedded fusion over server BM25 and kNN.

One generation holds both the postings and the vectors; :class:`PgBm25Retriever` and
:class:`PgDenseRetriever` share it (and its connection), and ``retrieve/hybrid.py``'s
:class:`HybridRetriever` fuses their rankings in the client, unchanged.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from factscout.retrieve.base import PassageStore
from factscout.retrieve.bm25 import Bm25Config, Bm25Retriever
from factscout.retrieve.dense import DenseConfig, encode_store, load_encoder
from factscout.retrieve.hybrid import HybridConfig, HybridRetriever
from factscout.retrieve.postgres.bm25 import PgBm25Retriever, bm25_postings, check_method
from factscout.retrieve.postgres.dense import EF_CONSTRUCTION, PgDenseRetriever
from factscout.retrieve.postgres.server import (
    PgConfig,
    PgGeneration,
    build_generation,
    read_settings,
    save_settings,
    saved_config,
)


class PgHybridRetriever(HybridRetriever):
    """BM25 and kNN, both in PostgreSQL, fused per query as the embedded hybrid does."""

    name = "pg-hybrid"

    def __init__(self, sparse: PgBm25Retriever, dense: PgDenseRetriever, config: HybridConfig) -> None:
        super().__init__(sparse, dense, config)
        self.generation = sparse.generation
        self.part_settings = {"bm25": asdict(sparse.config), "dense": asdict(dense.config)}

    @classmethod
    def build(  # type: ignore[override]
        cls,
        store: PassageStore,
        config: HybridConfig | None = None,
        *,
        bm25: Bm25Config | None = None,
        dense: DenseConfig | None = None,
        pg: PgConfig | None = None,
        show_progress: bool = False,
    ) -> PgHybridRetriever:
        bm25 = check_method(bm25 or Bm25Config())
        vectors, dense, encoder = encode_store(store, dense, show_progress=show_progress)
        config = config or HybridConfig()
        generation = build_generation(
            pg or PgConfig(),
            store,
            cls.name,
            {"bm25": asdict(bm25), "dense": asdict(dense), "hybrid": asdict(config)},
            postings=bm25_postings(Bm25Retriever.build(store, bm25)),
            vectors=vectors,
            hnsw=(dense.hnsw_m, EF_CONSTRUCTION) if len(store) >= dense.exact_below else None,
        )
        return cls(
            PgBm25Retriever(store, generation, bm25), PgDenseRetriever(store, generation, dense, encoder), config
        )

    def save(self, directory: Path) -> None:
        save_settings(directory, self.name, self.generation, {**self.part_settings, "hybrid": asdict(self.config)})

    @classmethod
    def load(cls, store: PassageStore, directory: Path, **overrides: object) -> PgHybridRetriever:
        """An ``undated`` override applies to both parts, ``dsn`` to the server, the rest to the fusion."""
        saved, dsn = read_settings(directory, cls.name, overrides)
        shared = {"undated": overrides.pop("undated")} if "undated" in overrides else {}
        bm25 = saved_config(directory, saved, "bm25", Bm25Config, shared)
        dense = saved_config(directory, saved, "dense", DenseConfig, shared)
        config = saved_config(directory, saved, "hybrid", HybridConfig, overrides)
        generation = PgGeneration.open(dsn, saved["name"], saved["generation"], store, vectors=True)
        return cls(
            PgBm25Retriever(store, generation, bm25),
            PgDenseRetriever(store, generation, dense, load_encoder(dense, directory)),
            config,
        )

"""Hybrid sparse + dense retrieval, as in Quin+ (Samarinas et al. 2021).

Each query is run against BM25 and the dense index to ``depth`` hits each, and the two
rankings are fused: ``linear`` is CombSUM over min-max normalised scores with weights
``(alpha, 1 - alpha)``; ``rrf`` is Reciprocal Rank Fusion. ``alpha`` and the fusion were
tuned on SciFact train claims only (benchmarks/retrieval_quality.py prints the sweep).
The fusion only needs two retrievers over one passage store: the PostgreSQL backend
(``retrieve/postgres/hybrid.py``) reuses it over its server-side BM25 and kNN.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from factscout.errors import BadIndex, InputError
from factscout.fuse import comb_sum, rrf
from factscout.records import Query, Ranking
from factscout.retrieve.base import PassageStore, Retriever, check_k
from factscout.retrieve.bm25 import Bm25Config, Bm25Retriever
from factscout.retrieve.dense import DenseConfig, DenseRetriever

HYBRID_FUSIONS = ("linear", "rrf")


@dataclass(frozen=True, slots=True)
class HybridConfig:
    fusion: str = "linear"
    alpha: float = 0.6
    rrf_k: int = 60
    depth: int = 100

    def __post_init__(self) -> None:
        if self.fusion not in HYBRID_FUSIONS:
            raise InputError(f"unknown hybrid fusion {self.fusion!r}; known: {', '.join(HYBRID_FUSIONS)}")
        if not 0 <= self.alpha <= 1 or self.depth < 1:
            raise InputError(f"hybrid needs 0 <= alpha <= 1 and depth >= 1, got {self.alpha}, {self.depth}")


class HybridRetriever:
    """BM25 and dense search fused per query; ``search`` follows the retriever contract."""

    name = "hybrid"

    def __init__(self, sparse: Retriever, dense: Retriever, config: HybridConfig) -> None:
        if sparse.store is not dense.store:
            raise InputError("hybrid retrieval needs both retrievers over the same passage store")
        self.sparse, self.dense, self.config = sparse, dense, config
        self.store: PassageStore = sparse.store

    def search(self, queries: Sequence[Query], k: int, *, published_before: dt.date | None = None) -> list[Ranking]:
        check_k(k)
        depth = max(k, self.config.depth)
        sparse = self.sparse.search(queries, depth, published_before=published_before)
        dense = self.dense.search(queries, depth, published_before=published_before)
        return [self.fuse(s, d).top(k) for s, d in zip(sparse, dense, strict=True)]

    def fuse(self, sparse: Ranking, dense: Ranking) -> Ranking:
        c = self.config
        if c.fusion == "rrf":
            fused = rrf([sparse, dense], k=c.rrf_k, query_id=sparse.query_id)
        else:
            fused = comb_sum([sparse, dense], weights=(c.alpha, 1 - c.alpha), query_id=sparse.query_id)
        return Ranking(fused.query_id, fused.hits, sparse.date_filter)

    def save(self, directory: Path) -> None:
        self.sparse.save(directory / "bm25")  # type: ignore[attr-defined]
        self.dense.save(directory / "dense")  # type: ignore[attr-defined]
        (directory / "hybrid.json").write_text(json.dumps(asdict(self.config)))

    @classmethod
    def build(
        cls,
        store: PassageStore,
        config: HybridConfig | None = None,
        *,
        bm25: Bm25Config | None = None,
        dense: DenseConfig | None = None,
        show_progress: bool = False,
        ray: str | None = None,
    ) -> HybridRetriever:
        """``ray``: encode the corpus on Ray Data (``auto`` or a cluster address), as dense does."""
        return cls(
            Bm25Retriever.build(store, bm25),
            DenseRetriever.build(store, dense, show_progress=show_progress, ray=ray),
            config or HybridConfig(),
        )

    @classmethod
    def load(cls, store: PassageStore, directory: Path, **overrides: object) -> HybridRetriever:
        """Load both parts; an ``undated`` override applies to both, ``query_encoder`` to the dense
        part, the rest to the fusion."""
        shared: dict[str, str] = {"undated": str(overrides.pop("undated"))} if "undated" in overrides else {}
        dense = {"query_encoder": str(overrides.pop("query_encoder"))} if "query_encoder" in overrides else {}
        try:
            config = HybridConfig(**{**json.loads((directory / "hybrid.json").read_text()), **overrides})
        except (OSError, ValueError) as exc:
            raise BadIndex(f"hybrid settings in {directory} are unreadable ({exc})") from None
        return cls(
            Bm25Retriever.load(store, directory / "bm25", **shared),
            DenseRetriever.load(store, directory / "dense", **shared, **dense),
            config,
        )

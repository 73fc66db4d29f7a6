"""Sparse BM25 retrieval on bm25s (Lù 2024), the embedded default.

bm25s was chosen over tantivy and rank_bm25 (benchmarks/retrieval_speed.py measures all
three): it exposes k1/b and the BM25 variant, keeps the index as scipy sparse arrays that
load with mmap, scores a query batch without a server, and takes a per-document weight mask,
which is how ``published_before`` is applied inside the top-k selection rather than after it.
Tokens are lower-cased, English stop words removed and Snowball-stemmed (PyStemmer).

The top ``k`` follow the tie rule at the cut too: bm25s picks among passages tied at the k-th
score in no defined order, so one more hit is fetched and, where the k-th and (k+1)-th scores
tie, the query's full score vector decides by passage id. Rankings then depend on the scores
alone, which is what lets a sharded index (retrieve/sharded.py) return exactly these rankings.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from factscout.errors import BadIndex, InputError
from factscout.records import Query, Ranking
from factscout.retrieve.base import PassageStore, check_k, check_undated, rankings_from_arrays

BM25_METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")


@dataclass(frozen=True, slots=True)
class Bm25Config:
    k1: float = 0.9
    b: float = 0.4
    method: str = "lucene"
    stemmer: str | None = "english"
    stopwords: str | None = "en"
    undated: str = "keep"

    def __post_init__(self) -> None:
        if self.k1 < 0 or not 0 <= self.b <= 1:
            raise InputError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.k1}, b={self.b}")
        if self.method not in BM25_METHODS:
            raise InputError(f"unknown BM25 method {self.method!r}; known: {', '.join(BM25_METHODS)}")
        check_undated(self.undated)


def make_stemmer(name: str | None):  # type: ignore[no-untyped-def]
    """The PyStemmer stemmer ``name`` (``None``: no stemming); an unknown name lists the known ones."""
    if name is None:
        return None
    import Stemmer

    try:
        return Stemmer.Stemmer(name)
    except KeyError:
        raise InputError(f"unknown stemmer {name!r}; known: {', '.join(Stemmer.algorithms())}") from None


def tokenize(texts: Sequence[str], config: Bm25Config, stemmer=None) -> list[list[str]]:  # type: ignore[no-untyped-def]
    """The tokens BM25 indexes and searches with, under ``config`` (``stemmer``: a prebuilt one)."""
    import bm25s

    stem = stemmer if stemmer is not None else make_stemmer(config.stemmer)
    out = bm25s.tokenize(list(texts), stopwords=config.stopwords, stemmer=stem, return_ids=False, show_progress=False)
    return out  # type: ignore[no-any-return]


class Bm25Retriever:
    """BM25 over a :class:`PassageStore`; ``search`` follows the retriever contract."""

    name = "bm25"

    def __init__(self, store: PassageStore, engine, config: Bm25Config) -> None:  # type: ignore[no-untyped-def]
        self.store, self.engine, self.config = store, engine, config
        self._stem = make_stemmer(config.stemmer)

    @classmethod
    def build(cls, store: PassageStore, config: Bm25Config | None = None) -> Bm25Retriever:
        import bm25s

        config = config or Bm25Config()
        stemmer = make_stemmer(config.stemmer)
        tokens = bm25s.tokenize(
            [p.contents for p in store.passages],
            stopwords=config.stopwords,
            stemmer=stemmer,
            show_progress=False,
        )
        engine = bm25s.BM25(k1=config.k1, b=config.b, method=config.method)
        engine.index(tokens, show_progress=False)
        return cls(store, engine, config)

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        return tokenize(texts, self.config, self._stem)

    def search(self, queries: Sequence[Query], k: int, *, published_before: dt.date | None = None) -> list[Ranking]:
        check_k(k)
        if not queries or not len(self.store):
            return [Ranking(q.query_id) for q in queries]
        mask, stats = None, None
        if published_before is not None:
            allowed, stats = self.store.date_mask(published_before, self.config.undated)
            mask = allowed.astype(np.float32)
        depth = min(k, len(self.store) if stats is None else stats.allowed)
        if depth == 0:
            return [Ranking(q.query_id, (), stats) for q in queries]
        tokens = self.tokenize([q.text for q in queries])
        fetch = min(depth + 1, len(self.store))  # one more: does a tie cross the cut?
        docs, scores = self.engine.retrieve(tokens, k=fetch, show_progress=False, weight_mask=mask)
        if fetch > depth:
            docs, scores = self._settle_ties_at_cut(tokens, docs, scores, depth, mask)
        return rankings_from_arrays(queries, docs, scores, scores > 0, self.store, stats)

    def _settle_ties_at_cut(
        self, tokens: list[list[str]], docs: np.ndarray, scores: np.ndarray, depth: int, mask: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Keep the first ``depth`` hits by ``(-score, passage_id)`` where the score at the cut is tied."""
        cut, after = scores[:, depth - 1], scores[:, depth]
        docs, scores = docs[:, :depth].copy(), scores[:, :depth].copy()
        id_order = self.store.id_order
        for row in np.flatnonzero((cut > 0) & (after == cut)):
            full = self.engine.get_scores(tokens[row], weight_mask=mask)
            above = np.flatnonzero(full > cut[row])
            tied = np.flatnonzero(full == cut[row])
            tied = tied[np.argsort(id_order[tied], kind="stable")][: depth - len(above)]
            keep = np.concatenate([above, tied])
            order = np.lexsort((id_order[keep], -full[keep]))
            docs[row], scores[row] = keep[order], full[keep][order]
        return docs, scores

    def __getstate__(self) -> dict[str, object]:
        """Picklable (for Ray workers and shard actors): the stemmer is rebuilt on unpickling."""
        return {"store": self.store, "engine": self.engine, "config": self.config}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.store, self.engine, self.config = state["store"], state["engine"], state["config"]  # type: ignore[assignment]
        self._stem = make_stemmer(self.config.stemmer)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.engine.save(str(directory / "bm25s"), show_progress=False)
        (directory / "bm25.json").write_text(json.dumps(asdict(self.config)))

    @classmethod
    def load(cls, store: PassageStore, directory: Path, **overrides: object) -> Bm25Retriever:
        import bm25s

        try:
            config = Bm25Config(**{**json.loads((directory / "bm25.json").read_text()), **overrides})
            engine = bm25s.BM25.load(str(directory / "bm25s"), mmap=False, show_progress=False)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BadIndex(
                f"BM25 index in {directory} is unreadable ({exc}); rebuild it with 'factscout index'"
            ) from None
        if engine.scores["num_docs"] != len(store):
            raise BadIndex(
                f"BM25 index in {directory} has {engine.scores['num_docs']} documents but the store has {len(store)}"
            )
        return cls(store, engine, config)

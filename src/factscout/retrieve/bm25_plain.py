"""``bm25-plain``: BM25 as a default Elasticsearch index scores it, the endpoint of Kazemi et al.

Query rewriting for fact-checking (Kazemi et al., "Query Rewriting for Effective Misinformation
Discovery", 2023) attacks an opaque search box: Elasticsearch with its defaults. This retriever
reproduces that endpoint on the embedded engine: the ``standard`` analyzer
(:mod:`factscout.retrieve.standard_analyzer`: UAX #29 words, lower-cased, no stop-word removal,
no stemming) and Lucene's BM25 with Elasticsearch's parameters, k1 = 1.2 and b = 0.75::

    score(q, d) = sum over query terms t of  idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = log(1 + (N - n_t + 0.5) / (n_t + 0.5))

(Lucene 8+ dropped the constant (k1 + 1) factor; a query term written twice counts twice, as in
Lucene's Boolean query). The scoring is bm25s's ``method="lucene"``, the engine of the tuned
``bm25``; only the analysis differs, so search, the published-before mask and the tie rule at the
cut are :class:`Bm25Retriever`'s. Two differences from a live Elasticsearch, both documented
rather than imitated: Lucene stores each document length in one lossy byte (``SmallFloat``), so
its scores for long documents differ slightly from the exact lengths used here; and Lucene counts
N and avgdl over documents with a non-empty field, bm25s over all documents.
"""

from __future__ import annotations

from collections.abc import Sequence

from factscout.errors import InputError
from factscout.retrieve.base import PassageStore
from factscout.retrieve.bm25 import Bm25Config, Bm25Retriever
from factscout.retrieve.standard_analyzer import standard_analyze

ES_K1, ES_B = 1.2, 0.75  # Elasticsearch's BM25 similarity defaults


def plain_config(*, k1: float = ES_K1, b: float = ES_B, undated: str = "keep") -> Bm25Config:
    """The BM25 settings of a ``bm25-plain`` index: Lucene BM25, no stemmer, no stop words.

    Only ``k1``, ``b`` (Elasticsearch's ``similarity`` settings) and ``undated`` may change; any
    other setting is a ``TypeError`` (``build_retriever`` reports it as bad settings)."""
    return Bm25Config(k1=k1, b=b, method="lucene", stemmer=None, stopwords=None, undated=undated)


class Bm25PlainRetriever(Bm25Retriever):
    """Elasticsearch-default BM25: the standard analyzer, k1 = 1.2, b = 0.75, Lucene's idf."""

    name = "bm25-plain"

    def __init__(self, store: PassageStore, engine, config: Bm25Config) -> None:  # type: ignore[no-untyped-def]
        if config.method != "lucene" or config.stemmer is not None or config.stopwords is not None:
            raise InputError(
                f"{self.name} is Lucene BM25 over the standard analyzer (no stemmer, no stop words), got "
                f"method={config.method!r}, stemmer={config.stemmer!r}, stopwords={config.stopwords!r}"
            )
        super().__init__(store, engine, config)

    @classmethod
    def build(cls, store: PassageStore, config: Bm25Config | None = None) -> Bm25PlainRetriever:
        import bm25s

        config = config or plain_config()
        engine = bm25s.BM25(k1=config.k1, b=config.b, method=config.method)
        engine.index(standard_analyze([p.contents for p in store.passages]), show_progress=False)
        return cls(store, engine, config)

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        return standard_analyze(texts)

"""Retrieval: one contract, ``search(queries, k, *, published_before=None) -> list[Ranking]``.

Backends: ``bm25`` (bm25s, the embedded default), ``bm25-plain`` and ``bm25-and`` (Elasticsearch's
default analysis and BM25; the second conjunctive), ``dense`` (MiniLM + faiss), ``hybrid``,
``sharded`` (BM25 over N shards with global statistics, in-process or on Ray actors);
``pg-bm25``, ``pg-dense``, ``pg-hybrid``: the same inside a PostgreSQL server (``postgres/``).
"""

from factscout.retrieve.base import PassageStore, Retriever, search_with_query_dates
from factscout.retrieve.index import RETRIEVERS, build_index, build_retriever, load_index, save_index

__all__ = [
    "RETRIEVERS",
    "PassageStore",
    "Retriever",
    "build_index",
    "build_retriever",
    "load_index",
    "save_index",
    "search_with_query_dates",
]

"""BM25 scored inside PostgreSQL, equal to the embedded BM25.

PostgreSQL's own full-text ranking (``ts_rank``) is not BM25 and knows no corpus statistics,
so this backend does not use it. The build runs the embedded BM25 (``retrieve/bm25.py``:
same tokenizer, k1, b and variant) to get each term's weight in each passage, and stores the
weights as postings. A search tokenizes the queries the same way, and the server adds up the
weights of their terms per passage: BM25 is a sum, over the query terms, of a precomputed
term-passage weight, so the server computes the embedded score (in float4, as bm25s does in
float32; only the order of the additions can differ, by an ulp). A query term that occurs
twice counts twice, as in bm25s. Each query is one statement that reads the postings of its
terms from one index (an index-only scan); a batch is pipelined in one round trip.

``published_before`` is a ``WHERE`` on the postings (each carries its passage's day), applied
before the top-k ``ORDER BY ... LIMIT k``, so k hits come back when k allowed passages match.
Passages with a score of 0 or less are not hits, as in the embedded backend. The ``bm25l``
and ``bm25+`` variants give every passage a score for every query term, which would make
every query a scan of the whole corpus; this backend refuses them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from factscout.errors import InputError
from factscout.records import Query, Ranking
from factscout.retrieve.base import PassageStore, check_k
from factscout.retrieve.bm25 import Bm25Config, Bm25Retriever, tokenize
from factscout.retrieve.postgres.server import (
    PgConfig,
    PgGeneration,
    Postings,
    build_generation,
    ids_by_pos,
    rankings_from_rows,
    read_settings,
    save_settings,
    saved_config,
)

SERVER_METHODS = ("lucene", "robertson", "atire")


def check_method(config: Bm25Config) -> Bm25Config:
    if config.method not in SERVER_METHODS:
        raise InputError(
            f"BM25 variant {config.method!r} scores every passage for every query term; the PostgreSQL backend"
            f" supports {', '.join(SERVER_METHODS)}"
        )
    return config


def bm25_postings(embedded: Bm25Retriever) -> Postings:
    """The embedded BM25's term weights per passage (bm25s keeps them as a CSC matrix)."""
    engine = embedded.engine
    indptr = engine.scores["indptr"]
    terms = [""] * (len(indptr) - 1)
    for token, t in engine.vocab_dict.items():
        if t < len(terms):  # bm25s adds an empty token with no postings after the last column
            terms[t] = token
    return Postings(terms, indptr, engine.scores["indices"], engine.scores["data"])


_SEARCH = """
SELECT o.pos, sum(o.weight)::float8
FROM unnest(%(terms)s::text[]) AS t(term)
JOIN {vocab} AS v ON v.term = t.term
JOIN {postings} AS o ON o.term_id = v.term_id
{where}
GROUP BY o.pos
HAVING sum(o.weight) > 0
ORDER BY sum(o.weight) DESC, o.pos
LIMIT %(k)s
"""
# postings.day is the passage's day ordinal, or the smallest int4 when it has none
WHERE_DATE = "WHERE o.day >= %(first_day)s AND o.day < %(before)s"
UNDATED = int(np.iinfo(np.int32).min)


class PgBm25Retriever:
    """BM25 over a server index generation; ``search`` follows the retriever contract."""

    name = "pg-bm25"

    def __init__(self, store: PassageStore, generation: PgGeneration, config: Bm25Config) -> None:
        self.store, self.generation, self.config = store, generation, check_method(config)
        self._ids = ids_by_pos(store)

    @classmethod
    def build(
        cls, store: PassageStore, config: Bm25Config | None = None, pg: PgConfig | None = None
    ) -> PgBm25Retriever:
        return cls.upload(Bm25Retriever.build(store, check_method(config or Bm25Config())), pg)

    @classmethod
    def upload(cls, embedded: Bm25Retriever, pg: PgConfig | None = None) -> PgBm25Retriever:
        """Put an embedded BM25 index (built, or loaded from an index directory) on the server."""
        config = check_method(embedded.config)
        generation = build_generation(
            pg or PgConfig(), embedded.store, cls.name, {"bm25": asdict(config)}, postings=bm25_postings(embedded)
        )
        return cls(embedded.store, generation, config)

    def search(self, queries: Sequence[Query], k: int, *, published_before: dt.date | None = None) -> list[Ranking]:
        check_k(k)
        if not queries or not len(self.store):
            return [Ranking(q.query_id) for q in queries]
        stats = None
        if published_before is not None:
            _, stats = self.store.date_mask(published_before, self.config.undated)
        depth = min(k, len(self.store) if stats is None else stats.allowed)
        if depth == 0:
            return [Ranking(q.query_id, (), stats) for q in queries]
        shared = {"k": depth}
        if published_before is not None:
            keep = self.config.undated == "keep"
            shared.update(before=published_before.toordinal(), first_day=UNDATED if keep else UNDATED + 1)
        params = [{"terms": terms, **shared} for terms in tokenize([q.text for q in queries], self.config)]
        rows = self.generation.fetch_many(self.statement(published_before is not None), params)
        return rankings_from_rows(queries, rows, self._ids, stats)

    def statement(self, dated: bool):  # type: ignore[no-untyped-def]
        from psycopg import sql

        g = self.generation
        where = sql.SQL(WHERE_DATE if dated else "")
        return sql.SQL(_SEARCH).format(vocab=g.table("vocab"), postings=g.table("postings"), where=where)

    def save(self, directory: Path) -> None:
        save_settings(directory, self.name, self.generation, {"bm25": asdict(self.config)})

    @classmethod
    def load(cls, store: PassageStore, directory: Path, **overrides: object) -> PgBm25Retriever:
        saved, dsn = read_settings(directory, cls.name, overrides)
        config = saved_config(directory, saved, "bm25", Bm25Config, overrides)
        return cls(store, PgGeneration.open(dsn, saved["name"], saved["generation"], store, vectors=False), config)

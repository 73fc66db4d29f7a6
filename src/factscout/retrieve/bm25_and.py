"""``bm25-and``: a conjunctive search box, every query term must appear, ranked by BM25.

Many search boxes fact-checkers face (social-media search, site search, Elasticsearch's ``match``
query with ``"operator": "and"``) return only the documents that contain every term of the query.
A whole claim then usually finds nothing, and rewriting it is the difference between no evidence
and some (Kazemi et al. 2023 motivate query rewriting by such endpoints).

Analysis and scoring are ``bm25-plain``'s (:mod:`factscout.retrieve.bm25_plain`): the standard
analyzer and Lucene BM25 with k1 = 1.2, b = 0.75, on the same bm25s index. A passage matches when
it contains every distinct query term (a repeated term is one condition); a query with a term
the corpus lacks, or with no terms at all, matches nothing and gets an empty ranking (Elasticsearch's
``zero_terms_query: none``). Matches are ranked by their BM25 score, which is exactly the score
``bm25-plain`` gives them: the same precomputed per-term scores summed in the same order (a
repeated term counts twice, as bm25s and Lucene's Boolean query count it).

The conjunction is a posting-list intersection over bm25s's eager score matrix (one sparse column
per term: the passages that contain it, ascending, and their BM25 term scores): start from the
rarest term's postings and keep the candidates found, by binary search, in each next-rarest
term's postings. A query costs O(|rarest postings| x terms x log |postings|), never a pass over
the corpus. bm25s itself only scores disjunctively (its top-k keeps any passage with one term), so
the intersection is done here; the scores are bm25s's.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import numpy as np

from factscout.errors import BadIndex
from factscout.records import DateFilterStats, Query, Ranking
from factscout.retrieve.base import PassageStore, check_k
from factscout.retrieve.bm25 import Bm25Config
from factscout.retrieve.bm25_plain import Bm25PlainRetriever


class Bm25AndRetriever(Bm25PlainRetriever):
    """Conjunctive (AND) retrieval over the ``bm25-plain`` index, ranked by its BM25 scores."""

    name = "bm25-and"

    def __init__(self, store: PassageStore, engine, config: Bm25Config) -> None:  # type: ignore[no-untyped-def]
        super().__init__(store, engine, config)
        self._postings_ready()

    def _postings_ready(self) -> None:
        """Binary search needs each term's passages in ascending order, as bm25s writes them (it
        fills its matrix passage by passage); an index that breaks this is refused."""
        indptr, indices = self.engine.scores["indptr"], self.engine.scores["indices"]
        column_start = np.zeros(len(indices), dtype=bool)
        column_start[indptr[:-1][indptr[:-1] < len(indices)]] = True
        if not np.all((np.diff(indices.astype(np.int64)) > 0) | column_start[1:]):
            raise BadIndex(f"the {self.name} index lists a term's passages out of order; rebuild it")

    def search(self, queries: Sequence[Query], k: int, *, published_before: dt.date | None = None) -> list[Ranking]:
        check_k(k)
        if not queries:
            return []
        allowed, stats = None, None
        if published_before is not None:
            allowed, stats = self.store.date_mask(published_before, self.config.undated)
        tokens = self.tokenize([q.text for q in queries])
        return [self._search_one(q, toks, k, allowed, stats) for q, toks in zip(queries, tokens, strict=True)]

    def match(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The positions (ascending) of the passages containing every term of ``text``, and their
        BM25 scores; both empty when some term is missing from the corpus or ``text`` has none."""
        return self._match(self.tokenize([text])[0])

    def _match(self, tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
        none = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        vocab, scores = self.engine.vocab_dict, self.engine.scores
        indptr, indices, data = scores["indptr"], scores["indices"], scores["data"]
        n_columns = len(indptr) - 1
        term_ids = [vocab.get(t, -1) for t in tokens]
        if not term_ids or any(not 0 <= t < n_columns for t in term_ids):
            return none  # no terms, or a term no passage contains
        distinct = sorted(set(term_ids), key=lambda t: (indptr[t + 1] - indptr[t], t))  # rarest first
        rarest = distinct[0]
        candidates = indices[indptr[rarest] : indptr[rarest + 1]].astype(np.int64)
        where = {rarest: np.arange(indptr[rarest], indptr[rarest + 1])}  # each term: index into data
        for t in distinct[1:]:
            postings = indices[indptr[t] : indptr[t + 1]]
            at = np.searchsorted(postings, candidates)
            found = at < len(postings)
            found[found] = postings[at[found]] == candidates[found]
            candidates = candidates[found]
            where = {s: w[found] for s, w in where.items()}
            where[t] = at[found] + indptr[t]
            if not len(candidates):
                return none
        # bm25s's sum: float32, one query term after another, a repeated term as often as written
        total = np.zeros(len(candidates), dtype=np.float32)
        for t in term_ids:
            total += data[where[t]]
        return candidates, total

    def _search_one(
        self, query: Query, tokens: list[str], k: int, allowed: np.ndarray | None, stats: DateFilterStats | None
    ) -> Ranking:
        positions, scores = self._match(tokens)
        if allowed is not None:
            keep = allowed[positions]
            positions, scores = positions[keep], scores[keep]
        order = np.lexsort((self.store.id_order[positions], -scores))[:k]
        return Ranking.from_sorted(
            query.query_id,
            self.store.id_array[positions[order]].tolist(),
            scores[order].astype(float).tolist(),
            (query.query_id,),
            stats,
        )

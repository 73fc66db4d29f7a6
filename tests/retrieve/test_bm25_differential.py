"""Differential test: our BM25 against rank_bm25, an independent implementation."""

import pytest

from factscout.datasets import load_dataset
from factscout.retrieve.base import PassageStore
from factscout.retrieve.bm25 import Bm25Config, Bm25Retriever


def test_scores_match_rank_bm25_okapi():
    rank_bm25 = pytest.importorskip("rank_bm25")
    ds = load_dataset("scifact_mini")
    ours = Bm25Retriever.build(PassageStore(ds.corpus), Bm25Config(k1=1.2, b=0.75, method="robertson"))
    corpus_tokens = ours.tokenize([p.contents for p in ds.corpus])
    # Robertson's idf log((N - n + .5) / (n + .5)), as rank_bm25's BM25Okapi computes it
    ref = rank_bm25.BM25Okapi(corpus_tokens, k1=1.2, b=0.75)
    ids = [p.passage_id for p in ds.corpus]
    queries = ds.queries()[:15]
    for query, ranking in zip(queries, ours.search(queries, 10), strict=True):
        ref_scores = ref.get_scores(ours.tokenize([query.text])[0])
        expected = sorted(
            ((float(s), pid) for pid, s in zip(ids, ref_scores, strict=True) if s > 0), key=lambda t: (-t[0], t[1])
        )
        assert [h.passage_id for h in ranking.hits] == [pid for _, pid in expected[:10]]
        # bm25s (like Lucene) drops the constant (k1 + 1) factor of the term-frequency part
        assert [h.score * (1.2 + 1) for h in ranking.hits] == pytest.approx([s for s, _ in expected[:10]], rel=1e-4)

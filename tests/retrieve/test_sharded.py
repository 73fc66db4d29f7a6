"""Sharded BM25 (in-process shards): stable sharding, global statistics, merge, partial results,
and a differential test against one index over the whole SciFact corpus."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest

from factscout.errors import InputError
from factscout.records import Passage, Query, Ranking
from factscout.retrieve import build_retriever, load_index, save_index
from factscout.retrieve.bm25 import Bm25Config
from factscout.retrieve.sharded import (
    CollectionStatistics,
    LocalShards,
    ShardedConfig,
    ShardedRetriever,
    shard_of,
    split_passages,
    tokenize_shard,
)


def q(text: str, qid: str = "q1") -> Query:
    return Query(qid, qid, text, "test")


def test_shard_of_is_a_stable_hash_of_the_passage_id():
    digest = hashlib.blake2b(b"p01", digest_size=8).digest()
    assert shard_of("p01", 7) == int.from_bytes(digest, "big") % 7
    assert [shard_of(pid, 4) for pid in ("a", "b", "c", "d", "e")] == [shard_of(pid, 4) for pid in "abcde"]
    with pytest.raises(InputError, match="shards must be a positive integer"):
        ShardedConfig(0)


def test_split_keeps_every_passage_once_in_corpus_order(tiny_corpus):
    parts = split_passages(tiny_corpus, 3)
    assert sorted(p.passage_id for part in parts for p in part) == sorted(p.passage_id for p in tiny_corpus)
    for i, part in enumerate(parts):
        assert [p.passage_id for p in part] == [p.passage_id for p in tiny_corpus if shard_of(p.passage_id, 3) == i]


def test_collection_statistics_add_up_the_shards(tiny_corpus):
    config = Bm25Config()
    whole, tokens = tokenize_shard(tiny_corpus, config)
    parts = [tokenize_shard(part, config)[0] for part in split_passages(tiny_corpus, 3)]
    merged = CollectionStatistics.merge(parts)
    assert merged.n_docs == 12 and merged.total_length == whole.total_length == sum(len(t) for t in tokens)
    assert dict(zip(merged.vocab, merged.doc_freqs, strict=True)) == whole.doc_freqs
    assert merged.doc_freqs[merged.vocab.index("report")] == 12  # every tiny passage mentions "report"


def test_ties_at_the_cut_are_settled_by_passage_id():
    # ten identical passages: any 3 of them are a valid top 3 for bm25s; the tie rule wants a, b, c
    same = [Passage(pid, pid, "", "identical text about tides") for pid in "jihgfedcba"]
    for name in ("bm25", "sharded"):
        (ranking,) = build_retriever(same, name).search([q("tides")], 3)
        assert list(ranking.passage_ids) == ["a", "b", "c"], name


def test_more_shards_than_passages_leaves_empty_shards_that_still_answer(tiny_corpus, tmp_path):
    sharded = build_retriever(tiny_corpus, "sharded", {"sharded": {"shards": 16}})
    assert any(s is None for s in sharded.shards)
    single = build_retriever(tiny_corpus, "bm25")
    queries = [q("vaccine report", "a"), q("budget deficit", "b")]
    day = dt.date(2021, 1, 15)
    assert sharded.search(queries, 5, published_before=day) == single.search(queries, 5, published_before=day)
    save_index(sharded, tmp_path / "idx")
    assert load_index(tmp_path / "idx").search(queries, 5) == single.search(queries, 5)


class _OneShardDown:
    """A pool whose second shard never answers."""

    def __init__(self, shards: LocalShards) -> None:
        self.inner, self.names = shards, shards.names

    def search(self, queries, k, published_before):
        out = self.inner.search(queries, k, published_before)
        out[1] = None
        return out


def test_a_shard_that_does_not_answer_makes_the_ranking_partial(tiny_corpus):
    built = build_retriever(tiny_corpus, "sharded", {"sharded": {"shards": 3}})
    down = ShardedRetriever(built.store, _OneShardDown(built.pool), built.config, built.bm25)
    (full,) = built.search([q("report")], 12)
    (ranking,) = down.search([q("report")], 12)
    assert not full.partial and full.missing_shards == ()
    assert ranking.partial and ranking.missing_shards == ("shard-001",)
    lost = {p.passage_id for p in tiny_corpus if shard_of(p.passage_id, 3) == 1}
    assert lost and list(ranking.passage_ids) == [pid for pid in full.passage_ids if pid not in lost]
    assert "partial" in repr(ranking)
    assert ranking != Ranking.from_sorted("q1", ranking.passage_ids, ranking.scores_in_order(), ("q1",))


@pytest.mark.slow
def test_sharded_scores_and_rankings_equal_the_single_index_on_scifact():
    """Every SciFact train claim, k=100: the same passages, ranks and float32 scores, bit for bit
    (global N, df and average length); and under a date filter over synthetic dates (4 in 5
    passages dated 2000-2019 by a hash of the id), the same rankings and filter counts."""
    from factscout.datasets import load_dataset

    ds = load_dataset("scifact", "train")
    dated = [
        Passage(p.passage_id, p.doc_id, p.title, p.text, dt.date(2000 + shard_of(p.passage_id, 20), 6, 1))
        if shard_of(p.passage_id, 5)
        else p
        for p in ds.corpus
    ]
    queries = ds.queries()
    single = build_retriever(dated, "bm25")
    sharded = build_retriever(dated, "sharded", {"sharded": {"shards": 4}})
    assert sharded.search(queries, 100) == single.search(queries, 100)
    day = dt.date(2010, 1, 1)
    a = single.search(queries[:300], 100, published_before=day)
    assert sharded.search(queries[:300], 100, published_before=day) == a
    assert a[0].date_filter.excluded_late > 1000 and a[0].date_filter.undated_kept > 500

"""One contract, every backend: the same tests run against bm25, bm25-plain, bm25-and, dense (exact and HNSW), hybrid,
sharded BM25 (in-process shards), and the same three inside a live PostgreSQL server on loopback
(the ``pg_server`` fixture)."""

import datetime as dt

import pytest

from factscout.errors import InputError
from factscout.records import Query
from factscout.retrieve import build_retriever, load_index, save_index

BACKENDS = {
    "bm25": ("bm25", {}),
    "bm25-plain": ("bm25-plain", {}),
    "bm25-and": ("bm25-and", {}),
    "dense-exact": ("dense", {}),
    "dense-hnsw": ("dense", {"dense": {"exact_below": 0}}),
    "hybrid-linear": ("hybrid", {}),
    "hybrid-rrf": ("hybrid", {"hybrid": {"fusion": "rrf"}}),
    "sharded-3": ("sharded", {"sharded": {"shards": 3}}),
    "pg-bm25": ("pg-bm25", {"postgres": {"name": "contract_bm25"}}),
    "pg-dense-hnsw": ("pg-dense", {"dense": {"exact_below": 0}, "postgres": {"name": "contract_dense"}}),
    "pg-hybrid": ("pg-hybrid", {"postgres": {"name": "contract_hybrid"}}),
}
CONJUNCTIVE = {"bm25-and"}  # retrievers that return only the passages containing every query term
DROP_UNDATED = {
    "bm25": {"undated": "drop"},
    "bm25-plain": {"undated": "drop"},
    "bm25-and": {"undated": "drop"},
    "dense": {"undated": "drop"},
}


@pytest.fixture(scope="module", params=sorted(BACKENDS))
def retriever(request, tiny_corpus):
    name, settings = BACKENDS[request.param]
    if name.startswith("pg-"):
        request.getfixturevalue("pg_server")
    return build_retriever(tiny_corpus, name, settings)


def q(text: str, qid: str = "q1", date: dt.date | None = None) -> Query:
    return Query(qid, qid, text, "test", date)


class TestRetrieverContract:
    def test_one_ranking_per_query_in_order(self, retriever):
        queries = [q("vaccine trial efficacy", "a"), q("unemployment jobs report", "b"), q("sea levels climate", "c")]
        rankings = retriever.search(queries, 3)
        assert [r.query_id for r in rankings] == ["a", "b", "c"]
        assert [r.hits[0].passage_id for r in rankings] == ["p01", "p07", "p08"]

    def test_hits_obey_the_tie_rule_and_k(self, retriever):
        (ranking,) = retriever.search([q("report")], 5)
        assert 1 <= len(ranking) <= 5
        assert [h.rank for h in ranking.hits] == list(range(1, len(ranking) + 1))
        keys = [(-h.score, h.passage_id) for h in ranking.hits]
        assert keys == sorted(keys)
        assert all(h.found_by == ("q1",) for h in ranking.hits)

    def test_empty_batch(self, retriever):
        assert retriever.search([], 10) == []

    @pytest.mark.parametrize("k", [0, -1, 2.5, True])
    def test_bad_k_is_rejected(self, retriever, k):
        with pytest.raises(InputError, match="k must be a positive integer"):
            retriever.search([q("vaccine")], k)

    def test_k_larger_than_corpus(self, retriever, tiny_corpus):
        (ranking,) = retriever.search([q("vaccine report")], 1000)
        assert 5 <= len(ranking) <= len(tiny_corpus)

    def test_published_before_keeps_k_results(self, retriever):
        day = dt.date(2021, 1, 15)  # allowed dated vaccine passage: p01; plus undated p05, p10
        # a conjunctive retriever matches only p01-p05 on both words: there every passage matches "report"
        text = "report" if retriever.name in CONJUNCTIVE else "vaccine report"
        (ranking,) = retriever.search([q(text)], 6, published_before=day)
        assert len(ranking) == 6, "k hits must come back when k matching passages are allowed"
        for h in ranking.hits:
            published = retriever.store[h.passage_id].published
            assert published is None or published < day
        assert ranking.date_filter is not None
        assert ranking.date_filter.allowed == 8  # p01 p06 p07 p08 p09 p12 + undated p05 p10
        assert ranking.date_filter.excluded_late == 4  # p02 p03 p04 p11 (p02, p11 on the boundary day)
        assert ranking.date_filter.undated_kept == 2

    def test_boundary_day_is_excluded(self, retriever):
        (ranking,) = retriever.search([q("vaccine safety side effects")], 10, published_before=dt.date(2021, 1, 15))
        assert "p02" not in {h.passage_id for h in ranking.hits}
        (ranking,) = retriever.search([q("vaccine safety side effects")], 10, published_before=dt.date(2021, 1, 16))
        assert ranking.hits[0].passage_id == "p02"

    def test_without_filter_later_passages_are_found(self, retriever):
        (ranking,) = retriever.search([q("vaccine microchip myths fact-check")], 3)
        assert ranking.hits[0].passage_id == "p04"
        assert ranking.date_filter is None

    def test_filter_that_allows_nothing(self, retriever, tiny_corpus):
        strict = build_retriever(tiny_corpus, retriever.name, DROP_UNDATED)
        (ranking,) = strict.search([q("report")], 5, published_before=dt.date(1990, 1, 1))
        assert len(ranking) == 0
        assert ranking.date_filter.allowed == 0 and ranking.date_filter.undated_dropped == 2

    def test_undated_drop_policy(self, tiny_corpus, retriever):
        strict = build_retriever(tiny_corpus, retriever.name, DROP_UNDATED)
        (ranking,) = strict.search([q("vaccine uptake older adults report")], 12, published_before=dt.date(2022, 1, 1))
        assert all(strict.store[h.passage_id].published is not None for h in ranking.hits)
        assert "p05" not in {h.passage_id for h in ranking.hits}
        assert ranking.date_filter.undated_dropped == 2

    def test_save_load_round_trip(self, retriever, tmp_path):
        save_index(retriever, tmp_path / "idx")
        loaded = load_index(tmp_path / "idx")
        assert loaded.name == retriever.name
        queries = [q("vaccine doses spring", "x"), q("housing prices", "y")]
        day = dt.date(2021, 6, 1)
        for before in (None, day):
            a = retriever.search(queries, 4, published_before=before)
            b = loaded.search(queries, 4, published_before=before)
            assert [[h.passage_id for h in r.hits] for r in a] == [[h.passage_id for h in r.hits] for r in b]
            for ra, rb in zip(a, b, strict=True):
                assert [h.score for h in ra.hits] == pytest.approx([h.score for h in rb.hits], rel=1e-5)

    def test_undated_override_at_load(self, retriever, tmp_path):
        save_index(retriever, tmp_path / "idx")
        loaded = load_index(tmp_path / "idx", undated="drop")
        (ranking,) = loaded.search([q("report")], 12, published_before=dt.date(2030, 1, 1))
        assert ranking.date_filter.undated_dropped == 2


@pytest.mark.parametrize("name", ["bm25", "bm25-plain", "bm25-and", "dense", "sharded", "pg-bm25", "pg-dense"])
def test_engine_ties_are_broken_by_passage_id(name, request):
    from factscout.records import Passage

    if name.startswith("pg-"):
        request.getfixturevalue("pg_server")
    same = [Passage(pid, pid, "", "identical text about tides") for pid in ("c", "a", "d", "b")]
    (ranking,) = build_retriever(same, name).search([q("tides")], 4)
    assert [h.passage_id for h in ranking.hits] == ["a", "b", "c", "d"]

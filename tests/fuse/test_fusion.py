"""Fusion on hand-computed inputs, plus invariants."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factscout.fuse import comb_sum, min_max, rrf
from factscout.records import Ranking


def R(qid, scores):
    return Ranking.from_scores(qid, scores)


def test_rrf_hand_computed():
    a = R("q1", {"d1": 3.0, "d2": 2.0})
    b = R("q2", {"d2": 9.0, "d3": 1.0})
    fused = rrf([a, b], k=60).scores()
    assert fused["d1"] == pytest.approx(1 / 61)
    assert fused["d2"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["d3"] == pytest.approx(1 / 62)


def test_comb_sum_minmax_hand_computed():
    a = R("q1", {"d1": 10.0, "d2": 5.0, "d3": 0.0})
    b = R("q2", {"d2": 0.9, "d3": 0.5, "d4": 0.1})
    fused = comb_sum([a, b], normalize="minmax").scores()
    assert fused == pytest.approx({"d1": 1.0, "d2": 0.5 + 1.0, "d3": 0.0 + 0.5, "d4": 0.0})


def test_weighted_linear_combination():
    a = R("q", {"d1": 2.0, "d2": 0.0})
    b = R("q", {"d1": 0.0, "d2": 1.0})
    assert comb_sum([a, b], weights=(0.7, 0.3)).scores() == pytest.approx({"d1": 0.7, "d2": 0.3})


def test_found_by_keeps_provenance():
    fused = rrf([R("q1", {"d1": 1.0}), R("q2", {"d1": 1.0, "d2": 0.5})], query_id="claim")
    by = {h.passage_id: h.found_by for h in fused.hits}
    assert by == {"d1": ("q1", "q2"), "d2": ("q2",)}
    assert fused.query_id == "claim"


@pytest.mark.parametrize("scores", [{"d1": 4.2}, {"d1": 3.0, "d2": 3.0, "d3": 3.0}])
def test_min_max_single_hit_or_equal_scores(scores):
    assert all(h.score == 1.0 for h in min_max(R("q", scores)).hits)


def test_min_max_empty():
    assert min_max(Ranking("q")).hits == ()


def test_weights_must_match_rankings():
    with pytest.raises(ValueError, match="2 weights given for 1 rankings"):
        comb_sum([R("q", {"d": 1.0})], weights=(0.5, 0.5))


rankings = st.lists(
    st.dictionaries(st.sampled_from([f"d{i}" for i in range(8)]), st.floats(-5, 5, allow_nan=False), min_size=1),
    min_size=1,
    max_size=5,
)


@given(rankings, st.randoms())
def test_fusion_ignores_input_order(score_lists, rnd):
    runs = [R(f"q{i}", s) for i, s in enumerate(score_lists)]
    shuffled = runs[:]
    rnd.shuffle(shuffled)
    for fuse in (rrf, comb_sum):
        a, b = fuse(runs, query_id="c"), fuse(shuffled, query_id="c")
        assert [h.passage_id for h in a.hits] == [h.passage_id for h in b.hits]
        assert [h.score for h in a.hits] == pytest.approx([h.score for h in b.hits])

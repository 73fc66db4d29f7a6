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


# ---- QuanTemp++ aggregations -------------------------------------------------------------
from factscout.errors import UnknownName  # noqa: E402
from factscout.fuse import FUSIONS, LearnedFusion, comb_max, concat, fuse_by_claim, make_fusion, top1  # noqa: E402

SUB = [R("c1", {"d1": 4.0, "d2": 2.0, "d3": 0.0}), R("c1#1", {"d2": 0.9, "d4": 0.5, "d5": 0.1})]


def test_comb_max_raw_and_normalised():
    assert comb_max(SUB, normalize=None).scores() == {"d1": 4.0, "d2": 2.0, "d3": 0.0, "d4": 0.5, "d5": 0.1}
    assert comb_max(SUB).scores() == pytest.approx({"d1": 1.0, "d2": 1.0, "d3": 0.0, "d4": 0.5, "d5": 0.0})


def test_comb_sum_raw():
    assert comb_sum(SUB, normalize=None).scores() == pytest.approx(
        {"d1": 4.0, "d2": 2.9, "d3": 0.0, "d4": 0.5, "d5": 0.1}
    )


def test_concat_keeps_plan_order_and_first_place():
    assert [h.passage_id for h in concat(SUB).hits] == ["d1", "d2", "d3", "d4", "d5"]
    assert [h.passage_id for h in concat(SUB[::-1]).hits] == ["d1", "d2", "d3", "d4", "d5"]


def test_concat_natural_plan_order():
    runs = [R("c#10", {"late": 1.0}), R("c#2", {"early": 1.0})]
    assert [h.passage_id for h in concat(runs).hits] == ["early", "late"]


def test_top1_takes_each_sub_querys_best():
    fused = top1(SUB, query_id="c1")
    assert [h.passage_id for h in fused.hits] == ["d1", "d2"]  # both normalise to 1.0; raw 4.0 > 0.9
    assert {h.passage_id: h.found_by for h in fused.hits} == {"d1": ("c1",), "d2": ("c1#1",)}
    assert len(top1(SUB, depth=2)) == 3


def test_every_named_fusion_keeps_provenance_and_claim_id():
    assert FUSIONS.names() == ["combmax", "combmax-norm", "combsum", "combsum-norm", "concat", "learned", "rrf", "top1"]
    for name in FUSIONS.names():
        fused = make_fusion(name)(SUB, "c1")
        assert fused.query_id == "c1"
        assert all(h.found_by and set(h.found_by) <= {"c1", "c1#1"} for h in fused.hits)


def test_unknown_fusion_lists_names():
    with pytest.raises(UnknownName, match="no fusion 'combmx'; known: combmax, combmax-norm"):
        make_fusion("combmx")


@given(rankings, st.randoms())
def test_named_fusions_ignore_input_order(score_lists, rnd):
    runs = [R("c" if i == 0 else f"c#{i}", s) for i, s in enumerate(score_lists)]
    shuffled = runs[:]
    rnd.shuffle(shuffled)
    for name in FUSIONS.names():
        fuse = make_fusion(name)
        a, b = fuse(runs, "c"), fuse(shuffled, "c")
        assert [h.passage_id for h in a.hits] == [h.passage_id for h in b.hits], name


def test_learned_fusion_weights_and_fit():
    heavy_claim = LearnedFusion("sum", claim_weight=3.0, decay=0.5)
    assert heavy_claim.weight(SUB[0], "c1") == 3.0 and heavy_claim.weight(SUB[1], "c1") == 1.0
    assert heavy_claim.weight(R("c1#3", {}), "c1") == 0.25
    # the claim query finds the relevant passage, the sub-query only noise: fit learns to trust the claim
    grouped = {
        f"c{i}": [
            R(f"c{i}", {f"rel{i}": 1.0, f"x{i}": 0.5, f"y{i}": 0.0}),
            R(f"c{i}#1", {f"noise{i}": 9.0, f"rel{i}": 0.0}),
        ]
        for i in range(5)
    }
    qrels = {f"c{i}": {f"rel{i}": 1} for i in range(5)}
    model, score = LearnedFusion.fit(grouped, qrels, measure="MRR@10")
    assert score == 1.0 and model.claim_weight > 1.0


def test_learned_fusion_save_load(tmp_path):
    LearnedFusion("max", 2.0, 0.8).save(tmp_path / "w.json")
    assert LearnedFusion.load(tmp_path / "w.json") == LearnedFusion("max", 2.0, 0.8)
    with pytest.raises(ValueError, match="unknown combination"):
        LearnedFusion("avg")


def test_fuse_by_claim_groups_sub_queries():
    runs = [*SUB, R("c2", {"z": 1.0})]
    fused = fuse_by_claim(runs, {"c1": "c1", "c1#1": "c1", "c2": "c2"}, make_fusion("combmax-norm"), k=2)
    assert [(r.query_id, len(r)) for r in fused] == [("c1", 2), ("c2", 1)]


def test_bad_fusion_settings_are_input_errors():
    from factscout.errors import InputError

    with pytest.raises(InputError, match="RRF k must be >= 0"):
        rrf([Ranking("q", ())], k=-1)
    with pytest.raises(InputError, match="TOP-1 depth must be >= 1"):
        top1([Ranking("q", ())], depth=0)

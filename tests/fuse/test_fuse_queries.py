"""fuse_queries: sub-query rankings fused per claim, the fusion given by name or as a function."""

import pytest

from factscout.errors import UnknownName
from factscout.fuse import LearnedFusion, fuse_by_claim, fuse_queries, make_fusion, named_fusion
from factscout.records import Query, Ranking

RUNS = [
    Ranking.from_scores("c1", {"d1": 4.0, "d2": 2.0, "d3": 0.0}),
    Ranking.from_scores("c2", {"z": 1.0}),
    Ranking.from_scores("c1#1", {"d2": 0.9, "d4": 0.5, "d5": 0.1}),
]
QUERIES = [Query("c1", "c1", "one"), Query("c2", "c2", "two"), Query("c1#1", "c1", "one more")]


def test_rankings_are_fused_per_claim_in_first_appearance_order():
    fused = fuse_queries(RUNS, QUERIES, "combsum", k=3)
    assert [r.query_id for r in fused] == ["c1", "c2"]
    # CombSUM without normalisation: d1 4.0, d2 2.0 + 0.9, d4 0.5
    assert [(h.passage_id, round(h.score, 6)) for h in fused[0].hits] == [("d1", 4.0), ("d2", 2.9), ("d4", 0.5)]
    assert fused[0].hits[1].found_by == ("c1", "c1#1")


@pytest.mark.parametrize("name", ["top1", "concat", "combsum", "combmax-norm", "rrf", "learned"])
def test_a_name_gives_what_the_named_fusion_gives(name):
    by_name = fuse_queries(RUNS, QUERIES, name, k=2)
    by_hand = fuse_by_claim(RUNS, {"c1": "c1", "c2": "c2", "c1#1": "c1"}, make_fusion(name), 2)
    assert [[(h.passage_id, h.score) for h in r.hits] for r in by_name] == [
        [(h.passage_id, h.score) for h in r.hits] for r in by_hand
    ]


def test_learned_weights_file_is_used(tmp_path):
    LearnedFusion("max", claim_weight=0.0, decay=1.0).save(tmp_path / "w.json")
    (c1, _) = fuse_queries(RUNS, QUERIES, "learned", k=1, weights=tmp_path / "w.json")
    assert c1.hits[0].passage_id == "d2"  # the claim query weighs nothing: the sub-query's best wins
    assert named_fusion("combsum", tmp_path / "w.json")(RUNS[:1], "c1").hits[0].passage_id == "d1"  # ignored


def test_unknown_name_lists_the_registered_fusions():
    with pytest.raises(UnknownName, match=r"no fusion 'combmx'; known: .*combmax"):
        fuse_queries(RUNS, QUERIES, "combmx", k=3)

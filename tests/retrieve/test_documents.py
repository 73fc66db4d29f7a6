from factscout.records import Passage, Ranking
from factscout.retrieve.base import PassageStore
from factscout.retrieve.documents import max_passage


def test_max_passage_keeps_best_passage_per_document():
    store = PassageStore([Passage("a#0", "a", "", "x"), Passage("a#1", "a", "", "y"), Passage("b", "b", "", "z")])
    ranking = Ranking.from_scores("q", {"a#0": 0.2, "a#1": 0.9, "b": 0.5})
    docs = max_passage(ranking, store)
    assert [(h.passage_id, h.score, h.rank) for h in docs.hits] == [("a", 0.9, 1), ("b", 0.5, 2)]
    assert [h.passage_id for h in max_passage(ranking, store, k=1).hits] == ["a"]

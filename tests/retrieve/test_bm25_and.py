"""bm25-and: only passages containing every query term, ranked by bm25-plain's BM25 scores."""

import datetime as dt

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factscout.errors import BadIndex
from factscout.records import Claim, Passage, Query
from factscout.retrieve import build_retriever, load_index, save_index
from factscout.retrieve.bm25_and import Bm25AndRetriever
from factscout.retrieve.standard_analyzer import standard_tokens

TOY = [
    Passage("d1", "d1", "", "The cat sat on the mat"),
    Passage("d2", "d2", "", "The dog ran"),
    Passage("d3", "d3", "", "A cat and a dog"),
    Passage("d4", "d4", "", "A cat, a dog and the bird"),
]


def q(text: str, qid: str = "q") -> Query:
    return Query(qid, qid, text)


@pytest.fixture(scope="module")
def both():
    return build_retriever(TOY, "bm25-and"), build_retriever(TOY, "bm25-plain")


def ids(ranking) -> list[str]:
    return [h.passage_id for h in ranking.hits]


def test_only_passages_with_every_term(both):
    conj, _ = both
    the_cat, cat_dog, cat = conj.search([q("the cat", "1"), q("cat dog", "2"), q("cat", "3")], 10)
    assert set(ids(the_cat)) == {"d1", "d4"}  # d3 has "cat" but not "the"
    assert set(ids(cat_dog)) == {"d3", "d4"}
    assert set(ids(cat)) == {"d1", "d3", "d4"}


def test_ranked_by_the_plain_bm25_scores(both):
    conj, plain = both
    for text in ("cat", "cat dog", "the cat", "a dog", "cat cat dog"):
        (and_ranking,) = conj.search([q(text)], 10)
        (plain_ranking,) = plain.search([q(text)], 10)
        terms = set(standard_tokens(text))
        expected = [
            (h.passage_id, h.score)
            for h in plain_ranking.hits
            if terms <= set(standard_tokens(TOY[int(h.passage_id[1:]) - 1].text))
        ]
        assert [(h.passage_id, h.score) for h in and_ranking.hits] == expected  # same scores, bit for bit
        keys = [(-h.score, h.passage_id) for h in and_ranking.hits]
        assert keys == sorted(keys)
    (cat,) = conj.search([q("cat")], 10)
    assert ids(cat) == ["d3", "d1", "d4"]  # "cat" once in each: the shorter passage first (5, 6, 7 tokens)


def test_unmatched_queries_give_empty_rankings_without_error(both):
    conj, _ = both
    rankings = conj.search([q("cat zebra", "a"), q("-- ...", "b"), q("?!", "c"), q("bird mat", "d")], 10)
    assert [r.query_id for r in rankings] == ["a", "b", "c", "d"]
    assert all(len(r) == 0 for r in rankings)


def test_a_repeated_term_is_one_condition(both):
    conj, plain = both
    twice, once = conj.search([q("cat Cat cat"), q("cat")], 10)
    assert ids(twice) == ids(once)
    (plain_twice,) = plain.search([q("cat Cat cat")], 10)
    assert [h.score for h in twice.hits] == [h.score for h in plain_twice.hits]  # but scores as written


def test_k_cuts_the_ranking(both):
    conj, _ = both
    (ranking,) = conj.search([q("cat")], 2)
    assert ids(ranking) == ["d3", "d1"]


def test_published_before_keeps_only_allowed_conjunctive_matches(tiny_corpus):
    conj = build_retriever(tiny_corpus, "bm25-and")
    (ranking,) = conj.search([q("vaccine report")], 10, published_before=dt.date(2021, 1, 15))
    assert set(ids(ranking)) == {"p01", "p05"}  # p02-p04 are too late; the others lack "vaccine"
    assert ranking.date_filter.allowed == 8


def test_match_returns_positions_and_scores(both):
    conj, _ = both
    positions, scores = conj.match("dog A")
    assert positions.tolist() == [2, 3] and len(scores) == 2 and (scores > 0).all()
    positions, scores = conj.match("zebra")
    assert len(positions) == 0 and len(scores) == 0


def test_save_load_round_trip(both, tmp_path):
    conj, _ = both
    gen = save_index(conj, tmp_path / "idx")
    assert (gen / "bm25-and" / "bm25.json").is_file()
    loaded = load_index(tmp_path / "idx")
    assert isinstance(loaded, Bm25AndRetriever)
    queries = [q("the cat", "a"), q("a dog", "b"), q("zebra", "c")]
    for before, after in zip(conj.search(queries, 5), loaded.search(queries, 5), strict=True):
        assert before.passage_ids == after.passage_ids
        assert [h.score for h in before.hits] == [h.score for h in after.hits]


def test_postings_out_of_order_are_refused():
    conj = build_retriever(TOY, "bm25-and")
    engine = conj.engine
    t = engine.vocab_dict["cat"]
    start, end = engine.scores["indptr"][t], engine.scores["indptr"][t + 1]
    engine.scores["indices"][start:end] = engine.scores["indices"][start:end][::-1].copy()
    with pytest.raises(BadIndex, match="out of order"):
        Bm25AndRetriever(conj.store, engine, conj.config)


def test_search_environment_takes_it(both):
    from factscout.rewrite.environment import SearchEnvironment

    conj, _ = both
    env = SearchEnvironment(conj, {"c1": {"d4": 1}}, "AP@10")
    claim = Claim("c1", "The cat and the dog")
    assert env.rewards(claim, ["the cat and the dog", "bird", "zebra"]) == [1.0, 1.0, 0.0]


WORDS = ["the", "a", "of", "cell", "cells", "protein", "cancer", "patients", "risk", "increased", "gene", "zebra"]


@pytest.fixture(scope="module")
def mini():
    from factscout.datasets import load_dataset

    corpus = list(load_dataset("scifact_mini").corpus)
    return corpus, build_retriever(corpus, "bm25-and"), build_retriever(corpus, "bm25-plain")


@settings(max_examples=60, deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5))
def test_equals_brute_force_conjunction_on_scifact_mini(mini, words):
    corpus, conj, plain = mini
    text = " ".join(words)
    (and_ranking,) = conj.search([q(text)], 1000)
    (plain_ranking,) = plain.search([q(text)], 1000)
    terms = set(words)
    containing = {p.passage_id for p in corpus if terms <= set(standard_tokens(p.contents))}
    assert set(and_ranking.passage_ids) == containing
    assert [(h.passage_id, h.score) for h in and_ranking.hits] == [
        (h.passage_id, h.score) for h in plain_ranking.hits if h.passage_id in containing
    ]
    assert np.isfinite([h.score for h in and_ranking.hits]).all()


def test_pickles_for_worker_processes(both):
    import pickle

    for retriever in both:
        copy = pickle.loads(pickle.dumps(retriever))
        assert type(copy) is type(retriever)
        assert copy.search([q("cat dog")], 5) == retriever.search([q("cat dog")], 5)

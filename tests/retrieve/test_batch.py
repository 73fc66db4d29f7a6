"""search_all: batches, per-query dates and MaxP give what one search call per query gives."""

import datetime as dt

import pytest

from factscout.errors import InputError
from factscout.records import Passage, Query
from factscout.retrieve import build_retriever
from factscout.retrieve.batch import search_all
from factscout.retrieve.documents import max_passage

QUERIES = [
    Query("a", "a", "vaccine report", "test", dt.date(2021, 2, 1)),
    Query("b", "b", "jobs unemployment report", "test", None),
    Query("c", "c", "vaccine safety", "test", dt.date(2021, 2, 1)),
    Query("d", "d", "budget deficit", "test", dt.date(2019, 1, 1)),
]


@pytest.fixture(scope="module")
def bm25(tiny_corpus):
    return build_retriever(tiny_corpus, "bm25")


def ids(rankings):
    return [(r.query_id, [h.passage_id for h in r.hits]) for r in rankings]


def test_each_query_is_searched_before_its_own_date(bm25):
    expected = [bm25.search([q], 5, published_before=q.date)[0] for q in QUERIES]
    assert ids(search_all(bm25, QUERIES, 5)) == ids(expected)
    (safety,) = search_all(bm25, QUERIES[2:3], 12)
    published = [bm25.store[h.passage_id].published for h in safety.hits]
    assert all(day is None or day < dt.date(2021, 2, 1) for day in published) and "p02" in ids([safety])[0][1]


def test_batches_do_not_change_the_result_and_report_their_size(bm25):
    sizes = []
    batched = search_all(bm25, QUERIES, 5, batch_size=3, on_batch=sizes.append)
    assert sizes == [3, 1]
    assert ids(batched) == ids(search_all(bm25, QUERIES, 5, batch_size=1)) == ids(search_all(bm25, QUERIES, 5))


def test_without_date_filter_the_dates_are_ignored(bm25):
    undated = [bm25.search([q], 5)[0] for q in QUERIES]
    rankings = search_all(bm25, QUERIES, 5, date_filter=False)
    assert ids(rankings) == ids(undated)
    assert all(r.date_filter is None for r in rankings)


def test_by_doc_pools_four_times_k_passages_by_max_passage():
    windows = [
        Passage("a#0", "a", "", "vaccine report on trials"),
        Passage("a#1", "a", "", "vaccine vaccine report"),
        Passage("b#0", "b", "", "jobs report"),
        Passage("c#0", "c", "", "vaccine doses"),
    ]
    retriever = build_retriever(windows, "bm25")
    (docs,) = search_all(retriever, QUERIES[:1], 2, date_filter=False, by_doc=True)
    (passages,) = retriever.search([Query("a", "a", "vaccine report", "test")], 8)
    assert ids([docs]) == ids([max_passage(passages, retriever.store, 2)])
    assert docs.hits[0].passage_id == "a" and len(docs) == 2  # a#0 and a#1 pool into one document


@pytest.mark.parametrize("size", [0, -1, 1.5, True])
def test_bad_batch_size_is_rejected(bm25, size):
    with pytest.raises(InputError, match="batch size"):
        search_all(bm25, QUERIES, 5, batch_size=size)

"""BEIR and TREC round trips, and bad input named with its line."""

import datetime as dt
import json

import pytest

from factscout.errors import DataNotFound, InputError
from factscout.formats import beir, trec
from factscout.records import Passage, Query, Ranking


def test_corpus_round_trip(tmp_path, tiny_corpus):
    extra = Passage("p99#1", "p99", "T", "text", dt.date(2020, 1, 2), "https://example.org/x")
    beir.write_corpus(tmp_path / "c.jsonl", [*tiny_corpus, extra])
    assert list(beir.read_corpus(tmp_path / "c.jsonl")) == [*tiny_corpus, extra]


def test_queries_round_trip(tmp_path):
    qs = [Query("c1", "c1", "claim one", "claim", dt.date(2020, 5, 1)), Query("c1-q2", "c1", "sub q", "oracle")]
    beir.write_queries(tmp_path / "q.jsonl", qs)
    assert list(beir.read_queries(tmp_path / "q.jsonl")) == qs


def test_claims_metadata_with_dates_and_tuples_is_written_as_json(tmp_path):
    from factscout.records import Claim

    claim = Claim("c1", "A claim.", dt.date(2021, 3, 4), {"checked": dt.date(2021, 3, 5), "span": (3, 9), "n": 2})
    beir.write_claims(tmp_path / "c.jsonl", [claim])
    row = json.loads((tmp_path / "c.jsonl").read_text())
    assert row["metadata"] == {"checked": "2021-03-05", "span": [3, 9], "n": 2}
    (back,) = beir.read_claims(tmp_path / "c.jsonl")
    assert back.date == claim.date and back.meta == {"checked": "2021-03-05", "span": [3, 9], "n": 2}


def test_qrels_round_trips(tmp_path):
    qrels = {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}}
    beir.write_qrels(tmp_path / "q.tsv", qrels)
    assert beir.read_qrels(tmp_path / "q.tsv") == qrels
    assert trec.read_qrels(tmp_path / "q.tsv") == qrels
    trec.write_qrels(tmp_path / "q.trec", qrels)
    assert trec.read_qrels(tmp_path / "q.trec") == qrels


def test_run_round_trip(tmp_path):
    runs = [Ranking.from_scores("q1", {"a": 2.0, "b": 1.0}), Ranking.from_scores("q2", {"c": 0.5})]
    trec.write_run(tmp_path / "r.trec", runs)
    back = trec.read_run(tmp_path / "r.trec")
    assert [(r.query_id, [(h.passage_id, h.rank) for h in r.hits]) for r in back] == [
        ("q1", [("a", 1), ("b", 2)]),
        ("q2", [("c", 1)]),
    ]


def test_malformed_jsonl_names_the_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"_id": "a", "text": "ok"}) + "\n\n" + '{"_id": "b", "text": \n')
    with pytest.raises(InputError, match=r"c\.jsonl:3: malformed JSON"):
        list(beir.read_corpus(path))


def test_missing_field_names_the_line(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"_id": "a", "text": "x"}\n{"text": "y"}\n')
    with pytest.raises(InputError, match=r"q\.jsonl:2: missing required field '_id'"):
        list(beir.read_queries(path))


def test_bad_date_names_the_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"_id": "a", "text": "x", "published": "last week"}\n')
    with pytest.raises(InputError, match=r"c\.jsonl:1: published"):
        list(beir.read_corpus(path))


def test_missing_file():
    with pytest.raises(DataNotFound, match="no such file"):
        list(beir.read_corpus("/nonexistent/corpus.jsonl"))


def test_bad_run_line(tmp_path):
    (tmp_path / "r.trec").write_text("q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 two 0.4 tag\n")
    with pytest.raises(InputError, match=r"r\.trec:2"):
        trec.read_run(tmp_path / "r.trec")

"""CheckThat! 2022 task 2A loader against the real data."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from factscout.datasets import checkthat


@pytest.mark.parametrize(
    ("split", "n_tweets", "n_pairs"), [("train", 997, 999), ("dev", 199, 199), ("dev-test", 202, 202)]
)
def test_split_counts_and_qrels_ids_exist(loaded, split, n_tweets, n_pairs):
    ds = loaded("checkthat2022", split)
    assert len(ds.claims) == n_tweets
    assert len(ds.corpus) == 14231
    assert set(ds.qrels) == {c.claim_id for c in ds.claims}
    assert sum(len(d) for d in ds.qrels.values()) == n_pairs
    corpus_ids = {p.passage_id for p in ds.corpus}
    assert all(set(d) <= corpus_ids for d in ds.qrels.values())
    assert all(c.date is None for c in ds.claims)


def test_a_repeated_qrels_line_counts_once(loaded):
    # CT2022-Task2A-EN-Dev_QRELs.tsv lists tweet-sno-1167 -> vclaim-sno-21-dead-in-ontario twice (200 lines)
    assert loaded("checkthat2022", "dev").qrels["tweet-sno-1167"] == {"vclaim-sno-21-dead-in-ontario": 1}


def test_train_and_dev_tweets_do_not_overlap(loaded):
    train = {c.claim_id for c in loaded("checkthat2022", "train").claims}
    dev = {c.claim_id for c in loaded("checkthat2022", "dev").claims}
    assert not train & dev
    assert len(train | dev) == 1196


def test_vclaim_passages(loaded):
    ds = loaded("checkthat2022", "dev")
    by_id = {p.passage_id: p for p in ds.corpus}
    p = by_id["vclaim-sno-10-meter-anaconda"]
    assert p.title == "Does Video Show a 10-Meter-Long Anaconda?"
    assert p.text == (
        "A viral video shows a 10-meter-long anaconda swimming across a river in Brazil.\n"
        "The anaconda is one of the largest snakes in the world."
    )
    assert p.published == dt.date(2021, 3, 6)
    assert sum(1 for p in ds.corpus if p.published) == 14231 - 290


def test_tweet_date_from_the_embed_signature(loaded):
    claim = next(c for c in loaded("checkthat2022", "dev").claims if c.claim_id == "tweet-sno-999")
    assert claim.meta["tweet_date"] == dt.date(2016, 2, 25)
    assert checkthat.tweet_date("… — Barack Obama (@BarackObama) October 04, 19") is None
    assert checkthat.tweet_date("no signature") is None


def test_merge_vclaims(tmp_path):
    folder = tmp_path / "vclaims"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps({"vclaim_id": "a", "vclaim": "A.", "title": "T", "date": "26 May 2015"}))
    (folder / "b.json").write_text(json.dumps({"vclaim_id": "b", "vclaim": "B.", "title": "U", "date": "soon"}))
    out = checkthat.merge_vclaims(folder, tmp_path / "vclaims.jsonl")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["vclaim_id"], r["date_iso"]) for r in rows] == [("a", "2015-05-26"), ("b", None)]

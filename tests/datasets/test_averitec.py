"""AVeriTeC loaders against the real data (Schlichtkrull et al. 2023)."""

from __future__ import annotations

import collections
import datetime as dt
import json

import pytest

from factscout.datasets import averitec
from factscout.datasets.base import data_root


@pytest.mark.slow
def test_train_claims_dates_and_labels(loaded):
    ds = loaded("averitec", "train")
    assert len(ds.claims) == 3067  # 3,068 rows; train-1948 has an empty claim text
    assert len(ds.skipped) == 1 and "train-1948" in ds.skipped[0]
    assert sum(1 for c in ds.claims if c.date) == 2962  # 105 rows have no claim_date
    assert collections.Counter(c.meta["label"] for c in ds.claims) == {
        "Refuted": 1742,
        "Supported": 848,
        "Not Enough Evidence": 282,
        "Conflicting Evidence/Cherrypicking": 195,
    }
    first = ds.claims[0]
    assert first.claim_id == "train-0"
    assert first.date == dt.date(2020, 8, 25)  # "25-8-2020" is day-first
    assert first.meta["questions"][0].startswith("Did Hunter Biden have any experience in the energy sector")
    assert all(c.meta["questions"] for c in ds.claims)
    assert any("Numerical Claim" in c.meta["claim_types"] for c in ds.claims)


@pytest.mark.slow
def test_beir_view_matches_the_claims(loaded):
    full, beir = loaded("averitec", "train"), loaded("averitec_beir", "train")
    assert [(c.claim_id, c.text, c.date) for c in beir.claims] == [(c.claim_id, c.text, c.date) for c in full.claims]
    assert len(beir.corpus) == 9453  # train and dev answers pooled
    assert len(beir.qrels) == 3067
    assert sum(len(d) for d in beir.qrels.values()) == 8093 - 2  # train-1948's two answers dropped
    ids = {p.passage_id for p in beir.corpus}
    assert all(set(d) <= ids for d in beir.qrels.values())


@pytest.mark.slow
def test_beir_passages_never_contain_their_question(loaded):
    beir = loaded("averitec_beir", "train")
    question = {}
    with (data_root() / "averitec" / "beir" / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            question[row["_id"]] = row["metadata"]["question"]
    assert sum(1 for q in question.values() if not (q or "").strip()) == 1  # train-438-q2-a0 has no question
    for passage in beir.corpus:
        q = (question[passage.passage_id] or "").strip()
        assert not q or q not in passage.contents
        assert passage.doc_id == passage.passage_id
        assert passage.published is None or "/" in (passage.url or ""), "dates come only from source URLs"
    assert sum(1 for p in beir.corpus if p.url) > 9000
    dated = [p for p in beir.corpus if p.published]
    assert 1000 < len(dated) < 1500  # about 12% of source URLs carry a full date in their path
    assert not any("web.archive.org/web/" in (p.url or "") and p.published.year > 2021 for p in dated)


def test_mini_fixture_uses_the_full_set_ids(loaded):
    ds = loaded("averitec_mini")
    assert len(ds.claims) == 25
    assert collections.Counter(c.meta["label"] for c in ds.claims) == {
        "Refuted": 10,
        "Supported": 7,
        "Not Enough Evidence": 4,
        "Conflicting Evidence/Cherrypicking": 4,
    }
    assert all(c.date is not None and c.meta["questions"] for c in ds.claims)
    by_id = {c.claim_id: c for c in ds.claims}
    assert by_id["train-0"].text.startswith("Hunter Biden had no experience in Ukraine")


def test_write_beir_view_builds_pool_queries_and_qrels(tmp_path):
    claim = {
        "claim": "X said Y.",
        "label": "Refuted",
        "claim_date": "3-2-2021",
        "questions": [
            {"question": "Did X say Y?", "answers": [
                {"answer": "No", "answer_type": "Boolean", "boolean_explanation": "X said Z.",
                 "source_url": "https://web.archive.org/web/20210305000000/https://x.org"},
                {"answer": "", "answer_type": "Unanswerable"},
            ]},
            {"question": "Who is X?", "answers": [{"answer": "A mayor.", "answer_type": "Extractive"}]},
        ],
    }  # fmt: skip
    (tmp_path / "averitec").mkdir()
    (tmp_path / "averitec" / "train.json").write_text(json.dumps([claim]), encoding="utf-8")
    averitec.write_beir_view(tmp_path / "averitec")
    ds = averitec.load_beir("train", root=tmp_path)
    assert [(p.passage_id, p.text) for p in ds.corpus] == [
        ("train-0-q0-a0", "No. X said Z."),
        ("train-0-q1-a0", "A mayor."),
    ]
    assert ds.qrels == {"train-0": {"train-0-q0-a0": 1, "train-0-q1-a0": 1}}
    assert ds.claims[0].date == dt.date(2021, 2, 3)
    assert ds.claims[0].meta["questions"] == ["Did X say Y?", "Who is X?"]
    assert all("Did X say Y?" not in p.contents for p in ds.corpus)

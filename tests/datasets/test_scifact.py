"""SciFact loader against the real data (Wadden et al. 2020)."""

from __future__ import annotations

import collections

from factscout.datasets import load_abstract_sentences


def test_train_counts_and_labels(loaded):
    ds = loaded("scifact", "train")
    assert (ds.name, ds.split) == ("scifact", "train")
    assert len(ds.claims) == 809
    assert len(ds.corpus) == 5183
    labels = collections.Counter(c.meta["label"] for c in ds.claims)
    assert labels == {"SUPPORT": 332, "NEI": 304, "CONTRADICT": 173}
    assert all(c.date is None for c in ds.claims)


def test_qrels_are_the_cited_documents_nei_included(loaded):
    ds = loaded("scifact", "train")
    doc_ids = {p.passage_id for p in ds.corpus}
    assert set(ds.qrels) == {c.claim_id for c in ds.claims}
    for claim in ds.claims:
        assert ds.qrels[claim.claim_id] == dict.fromkeys(claim.meta["cited_doc_ids"], 1)
        assert set(claim.meta["evidence"]) <= set(claim.meta["cited_doc_ids"])
    assert {d for docs in ds.qrels.values() for d in docs} <= doc_ids
    assert sum(len(d) for d in ds.qrels.values()) == 732 + 2 * 53 + 3 * 16 + 4 * 7 + 5


def test_claim_ids_and_evidence_are_as_in_the_file(loaded):
    claims = {c.claim_id: c for c in loaded("scifact", "train").claims}
    claim = claims["2"]
    assert claim.text == "1 in 5 million in UK have abnormal PrP positivity."
    assert claim.meta == {
        "evidence": {"13734012": [{"sentences": [4], "label": "CONTRADICT"}]},
        "cited_doc_ids": ["13734012"],
        "label": "CONTRADICT",
    }


def test_passage_is_title_and_joined_abstract(loaded):
    ds = loaded("scifact", "train")
    sentences = load_abstract_sentences()
    assert len(sentences) == 5183
    passage = next(p for p in ds.corpus if p.passage_id == "4983")
    assert passage.doc_id == "4983"
    assert passage.title.startswith("Microstructural development of human newborn cerebral white matter")
    assert passage.text == " ".join(sentences["4983"])
    assert passage.contents.startswith(passage.title + "\n")


def test_rationale_indices_point_into_the_sentence_lists(loaded):
    sentences = load_abstract_sentences()
    for claim in loaded("scifact", "train").claims:
        for doc_id, sets in claim.meta["evidence"].items():
            for rationale in sets:
                assert all(0 <= i < len(sentences[doc_id]) for i in rationale["sentences"])


def test_test_split_is_unlabelled(loaded):
    ds = loaded("scifact", "test")
    assert len(ds.claims) == 300
    assert ds.qrels == {}
    assert all("label" not in c.meta for c in ds.claims)


def test_mini_fixture(loaded):
    ds = loaded("scifact_mini")
    assert (len(ds.claims), len(ds.corpus)) == (30, 200)
    assert collections.Counter(c.meta["label"] for c in ds.claims) == {"SUPPORT": 10, "CONTRADICT": 10, "NEI": 10}
    corpus_ids = {p.passage_id for p in ds.corpus}
    assert all(set(docs) <= corpus_ids for docs in ds.qrels.values())
    assert len(load_abstract_sentences(mini=True)) == 200

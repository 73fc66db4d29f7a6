"""Sentence data stored with an index: offsets that give the sentences back, one embedding per
distinct sentence, atomic with the generation, and a check that embeds only what is new."""

import hashlib
import logging

import numpy as np
import pytest
from helpers import TEXTS

from factscout.check import Checker, CheckSettings
from factscout.datasets import load_dataset
from factscout.errors import BadIndex
from factscout.records import Passage
from factscout.retrieve import build_index, build_retriever, load_index, save_index
from factscout.retrieve.index import index_sentences
from factscout.retrieve.sentences import (
    SentenceData,
    build_sentence_data,
    load_sentence_data,
    save_sentence_data,
)
from factscout.text.sentences import sentences_of


class FakeEncoder:
    """Deterministic 384-d unit vectors that float16 holds exactly (so stored vectors equal fresh
    ones), counting every text it is asked to embed."""

    model_name = "fake-encoder"
    dimension = 384

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts):
        self.seen += list(texts)
        rows = []
        for t in texts:
            seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:4], "little")
            v = np.random.default_rng(seed).normal(size=self.dimension)
            rows.append((v / np.linalg.norm(v)).astype(np.float16).astype(np.float32))
        return np.array(rows, dtype=np.float32).reshape(len(texts), self.dimension)

    def encode_corpus(self, texts, *, batch=256, show_progress=False):
        return self.encode(texts)


def _passages(texts):
    return [Passage(f"p{i}", f"d{i}", "", t) for i, t in enumerate(texts)]


def test_each_distinct_sentence_is_embedded_once_and_stored_as_float16():
    texts = ["Alpha is here. Beta is there.", "Beta is there. Gamma too.", "Alpha is here."]
    enc = FakeEncoder()
    data = build_sentence_data(_passages(texts), enc)
    assert sorted(enc.seen) == sorted({"Alpha is here.", "Beta is there.", "Gamma too."})
    assert data.pointers.tolist() == [0, 2, 4, 5]
    assert data.vectors.dtype == np.float16 and data.vectors.shape == (5, 384)
    assert data.sentences(1, texts[1]) == ["Beta is there.", "Gamma too."]
    np.testing.assert_array_equal(data.vectors_of(1)[0], FakeEncoder().encode(["Beta is there."])[0])
    np.testing.assert_array_equal(data.vectors_of(0)[1], data.vectors_of(1)[0])
    assert data.encoder == "fake-encoder"


def test_save_and_load_memory_maps_the_vectors(tmp_path):
    data = build_sentence_data(_passages(TEXTS), FakeEncoder())
    save_sentence_data(data, tmp_path)
    back = load_sentence_data(tmp_path, len(TEXTS))
    assert isinstance(back, SentenceData) and isinstance(back.vectors, np.memmap)
    for i, text in enumerate(TEXTS):
        assert back.sentences(i, text) == sentences_of(text)
        np.testing.assert_array_equal(back.vectors_of(i), data.vectors_of(i))
    assert load_sentence_data(tmp_path / "elsewhere") is None
    with pytest.raises(BadIndex, match="covers 6 passages"):
        load_sentence_data(tmp_path, 7)
    (tmp_path / "sentences" / "spans.npy").write_bytes(b"garbage")
    with pytest.raises(BadIndex, match="unreadable"):
        load_sentence_data(tmp_path)


def test_sentence_arrays_that_disagree_are_refused():
    with pytest.raises(BadIndex):
        SentenceData(np.array([0, 3]), np.zeros((2, 2), np.int32), np.zeros((2, 4), np.float16), "x")


def test_a_crash_while_writing_sentences_keeps_the_previous_index(tmp_path, tiny_corpus, monkeypatch):
    build_index(tiny_corpus[:6], tmp_path / "idx")
    import factscout.retrieve.index as index_module

    def boom(data, generation):
        (generation / "sentences").mkdir()
        raise RuntimeError("disk full")

    monkeypatch.setattr(index_module, "save_sentence_data", boom)
    retriever = build_retriever(tiny_corpus, "bm25")
    data = index_sentences(retriever.store.passages, encoder=FakeEncoder())
    with pytest.raises(RuntimeError, match="disk full"):
        save_index(retriever, tmp_path / "idx", sentences=data)
    assert len(load_index(tmp_path / "idx").store) == 6
    assert len(list((tmp_path / "idx").glob("gen-*"))) == 1


@pytest.fixture(scope="module")
def mini():
    return load_dataset("scifact_mini")


@pytest.fixture(scope="module")
def two_indexes(mini, tmp_path_factory):
    """The same BM25 index built before (no sentences) and with stored sentences."""
    root = tmp_path_factory.mktemp("sentences")
    retriever = build_retriever(mini.corpus, "bm25")
    save_index(retriever, root / "old")
    save_index(retriever, root / "new", sentences=index_sentences(retriever.store.passages, encoder=FakeEncoder()))
    return root / "old", root / "new"


def _reports(index, claims, encoder, stance="head"):
    settings = CheckSettings(planner="claim", passages=3, stance=stance, threshold=0.0)
    checker = Checker.from_index(index, settings, encoder=encoder)
    return [r.to_dict() for r in checker.check_many(claims)]


def test_check_with_stored_sentences_embeds_only_the_claims_and_reports_the_same(two_indexes, mini, caplog):
    old, new = two_indexes
    claims = mini.claims[:4]
    slow, fast = FakeEncoder(), FakeEncoder()
    with caplog.at_level(logging.WARNING, logger="factscout.check"):
        before = _reports(old, claims, slow)
    assert "no stored sentence vectors" in caplog.text
    after = _reports(new, claims, fast)
    assert sorted(set(fast.seen)) == sorted({c.text for c in claims}), "only the claims are embedded"
    assert len(set(slow.seen)) > len(claims) * 3
    for a, b in zip(before, after, strict=True):
        a["provenance"].pop("index"), b["provenance"].pop("index")
        a["provenance"].pop("generation"), b["provenance"].pop("generation")
        assert (a["provenance"].pop("sentence_vectors"), b["provenance"].pop("sentence_vectors")) == (
            "per-claim",
            "stored",
        )
        assert a == b
    assert any(r["evidence"] for r in after), "the comparison saw evidence"


def test_vectors_of_another_encoder_are_not_used(two_indexes, mini, caplog):
    _, new = two_indexes

    class Other(FakeEncoder):
        model_name = "another-model"

    other = Other()
    with caplog.at_level(logging.WARNING, logger="factscout.check"):
        _reports(new, mini.claims[:2], other)
    assert "embedding per claim" in caplog.text
    assert len(set(other.seen)) > 2


def test_an_encoder_with_only_encode_is_enough():
    class Plain:
        model_name = "plain"

        def encode(self, texts):
            return FakeEncoder().encode(texts)

    data = build_sentence_data(_passages(TEXTS[:2]), Plain())
    assert data.encoder == "plain" and len(data.vectors) == len(data.spans) > 0

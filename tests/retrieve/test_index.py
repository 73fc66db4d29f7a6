"""Index files: atomic generations, clear errors for missing / partial / foreign indexes."""

import json
import shutil

import pytest

from factscout.errors import BadIndex, InputError, UnknownName
from factscout.records import Passage, Query
from factscout.retrieve import build_index, load_index
from factscout.retrieve.index import read_manifest


def test_unknown_retriever_lists_valid_names(tmp_path, tiny_corpus):
    with pytest.raises(UnknownName, match="no retriever 'bm52'; known: bm25, bm25-and, bm25-plain, dense, hybrid"):
        build_index(tiny_corpus, tmp_path / "idx", "bm52")


def test_missing_index(tmp_path):
    with pytest.raises(BadIndex, match="no index at"):
        load_index(tmp_path / "nowhere")


def test_directory_that_is_not_an_index(tmp_path):
    (tmp_path / "x").mkdir()
    with pytest.raises(BadIndex, match="not a factscout index"):
        load_index(tmp_path / "x")


def test_refuses_to_write_into_a_foreign_directory(tmp_path, tiny_corpus):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("precious")
    with pytest.raises(InputError, match="not a factscout index"):
        build_index(tiny_corpus, tmp_path / "mine")
    assert (tmp_path / "mine" / "thesis.tex").read_text() == "precious"


def test_partial_generation_is_reported(tmp_path, tiny_corpus):
    build_index(tiny_corpus, tmp_path / "idx")
    gen, _ = read_manifest(tmp_path / "idx")
    (gen / "manifest.json").unlink()
    with pytest.raises(BadIndex, match="incomplete"):
        load_index(tmp_path / "idx")


def test_foreign_manifest(tmp_path, tiny_corpus):
    build_index(tiny_corpus, tmp_path / "idx")
    gen, manifest = read_manifest(tmp_path / "idx")
    (gen / "manifest.json").write_text(json.dumps({**manifest, "format": "pyserini"}))
    with pytest.raises(BadIndex, match="foreign index"):
        load_index(tmp_path / "idx")


def test_corrupt_backend_files(tmp_path, tiny_corpus):
    build_index(tiny_corpus, tmp_path / "idx")
    gen, _ = read_manifest(tmp_path / "idx")
    shutil.rmtree(gen / "bm25" / "bm25s")
    with pytest.raises(BadIndex, match="unreadable"):
        load_index(tmp_path / "idx")


def test_crash_while_building_keeps_previous_index(tmp_path, tiny_corpus, monkeypatch):
    build_index(tiny_corpus[:6], tmp_path / "idx")
    from factscout.retrieve.bm25 import Bm25Retriever

    def boom(self, directory):
        raise RuntimeError("disk full")

    monkeypatch.setattr(Bm25Retriever, "save", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        build_index(tiny_corpus, tmp_path / "idx")
    monkeypatch.undo()
    index = load_index(tmp_path / "idx")
    assert len(index.store) == 6
    assert len(list((tmp_path / "idx").glob("gen-*"))) == 1, "the failed generation is cleaned up"


def test_rebuild_replaces_and_cleans_old_generation(tmp_path, tiny_corpus):
    build_index(tiny_corpus[:3], tmp_path / "idx")
    build_index(tiny_corpus, tmp_path / "idx")
    assert len(load_index(tmp_path / "idx").store) == len(tiny_corpus)
    assert len(list((tmp_path / "idx").glob("gen-*"))) == 1


def test_duplicate_passage_ids_rejected(tmp_path):
    p = Passage("a", "a", "", "text")
    with pytest.raises(InputError, match="occurs twice"):
        build_index([p, p], tmp_path / "idx")


def test_empty_corpus_is_an_error(tmp_path):
    with pytest.raises(InputError, match="corpus is empty"):
        build_index([], tmp_path / "idx")
    assert not (tmp_path / "idx" / "CURRENT").exists()


def test_query_with_no_known_term_gets_no_hits(tmp_path, tiny_corpus):
    index = build_index(tiny_corpus, tmp_path / "idx")
    assert index.search([Query("q", "q", "zzyzx qwerty")], 5)[0].hits == ()

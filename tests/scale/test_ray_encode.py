"""Dense corpus encoding on Ray Data (``factscout index --retriever dense|hybrid --ray``) writes the
index of the in-process build: the same embeddings bit for bit, so the same rankings and scores.

Each build gets its own empty embedding cache, so both really encode (a shared cache would hand
the second build the first one's embeddings)."""

from __future__ import annotations

import logging
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from factscout.cli.main import app
from factscout.formats.beir import write_corpus
from factscout.records import Query
from factscout.retrieve import load_index
from factscout.retrieve.sentences import load_sentence_data
from factscout.text.encoder import Encoder

runner = CliRunner()
QUERIES = [
    Query("a", "a", "vaccine trial efficacy"),
    Query("b", "b", "report on jobs and unemployment"),
    Query("c", "c", "rising sea levels"),
]


class Recorder(Encoder):
    """Records the texts of each ``encode`` call; embeds a text as its length (no model)."""

    def __init__(self) -> None:
        super().__init__("recorder", max_seq_length=None)
        self.calls: list[list[str]] = []

    def encode(self, texts, *, show_progress=False):
        self.calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_a_corpus_is_encoded_in_fixed_batches_in_corpus_order():
    texts = [f"passage {i}" for i in range(10)]
    enc = Recorder()
    vectors = enc.encode_corpus(texts, batch=4)
    assert enc.calls == [texts[0:4], texts[4:8], texts[8:10]]
    assert vectors[:, 0].tolist() == [len(t) for t in texts]


@pytest.mark.ray
def test_index_with_ray_encodes_on_ray_data_and_writes_the_in_process_index(
    ray_cluster, tiny_corpus, tmp_path, monkeypatch, caplog
):
    """Hybrid (its dense half is the dense index) in batches of 4 passages: 3 batches over the
    cluster's 2 actors, one per node."""
    write_corpus(tmp_path / "corpus.jsonl", tiny_corpus)
    caplog.set_level(logging.INFO, logger="factscout.scale.encode")
    for name, extra in (("local", []), ("ray", ["--ray", ray_cluster.address])):
        monkeypatch.setenv("FACTSCOUT_CACHE", str(tmp_path / f"cache-{name}"))
        args = ["index", "--corpus", tmp_path / "corpus.jsonl", "--index", tmp_path / name, "--retriever", "hybrid"]
        r = runner.invoke(app, [str(a) for a in [*args, "--encode-batch", "4", "--sentences", *extra]])
        assert r.exit_code == 0, r.output
    assert "encoding 12 passages in 3 batches on 2 Ray Data actors" in caplog.text
    local, remote = (load_index(tmp_path / name) for name in ("local", "ray"))
    assert np.array_equal(remote.dense.vectors, local.dense.vectors) and remote.dense.vectors.dtype == np.float32
    assert remote.dense.config == local.dense.config and local.dense.config.encode_batch == 4
    # the same hybrid rankings, scores compared exactly; one query encoder (the index is under test)
    remote.dense.encoder = local.dense.encoder
    assert remote.search(QUERIES, 12) == local.search(QUERIES, 12)
    # the passages' sentence vectors (index --sentences) were embedded on Ray too
    assert len(re.findall(r"encoding \d+ passages in \d+ batches on \d+ Ray Data actors", caplog.text)) == 2
    stored = [load_sentence_data(next((tmp_path / name).glob("gen-*")), 12) for name in ("local", "ray")]
    assert stored[0] is not None and stored[1] is not None
    assert np.array_equal(stored[0].spans, stored[1].spans) and stored[0].encoder == stored[1].encoder
    np.testing.assert_allclose(stored[1].vectors.astype(np.float32), stored[0].vectors.astype(np.float32), atol=2e-3)


def test_ray_encodes_only_dense_corpora(tmp_path, tiny_corpus):
    write_corpus(tmp_path / "corpus.jsonl", tiny_corpus)
    args = ["index", "--corpus", tmp_path / "corpus.jsonl", "--index", tmp_path / "i", "--ray", "auto"]
    r = runner.invoke(app, [str(a) for a in [*args, "--retriever", "pg-dense"]])
    assert r.exit_code == 2 and "encodes a dense" in r.output

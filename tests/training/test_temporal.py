import numpy as np
import pytest
import torch

from factscout.datasets import load_dataset
from factscout.temporal.joint import FrozenEncoder, JointModel
from factscout.temporal.rankings import METHODS
from factscout.training.temporal import (
    DomainResult,
    Featurizer,
    TrainSettings,
    bilstm_vectors,
    build_model,
    examples_from,
    f1_scores,
    predict,
    pretrain,
    run_method,
    select_time_aware,
    train_bilstm_encoders,
)

SMALL = TrainSettings(
    pretrain_epochs=2, finetune_epochs=1, hidden=32, embedding_dim=16, lstm_hidden=8, encoder_epochs=1
)


@pytest.fixture(scope="module")
def mini():
    torch.set_num_threads(1)
    examples = examples_from(load_dataset("multifc_mini", "dev"))
    featurizer = Featurizer.fit("bilstm", examples)
    tensors = featurizer.transform(examples)
    encoders = train_bilstm_encoders(featurizer, tensors, SMALL)
    return examples, featurizer, tensors, bilstm_vectors(encoders, tensors)


def test_examples_carry_deltas_ranks_and_metadata(mini):
    examples, _, tensors, _ = mini
    assert len(examples) == 40
    assert all(1 <= len(e.evidence) <= 10 for e in examples)
    assert all(len(e.evidence) == len(e.deltas) == len(e.ranks) for e in examples)
    assert any(d is not None and d < 0 for e in examples for d in e.deltas)
    assert tensors.evidence.shape == (40, 10, 32)
    # the claim-based target masks evidence published after the claim
    _, mask = tensors.targets["claim-based date"]
    for i, e in enumerate(examples):
        for j, d in enumerate(e.deltas):
            assert bool(mask[i, j]) == (d is not None and d <= 0)


def test_predictions_stay_inside_the_claims_domain_labels(mini):
    examples, featurizer, _, vectors = mini
    model = build_model(vectors.claim.shape[1], featurizer, "base", SMALL)
    predicted = predict(model, vectors, list(range(len(examples))), featurizer.labels)
    for e, p in zip(examples, predicted, strict=True):
        assert p in featurizer.labels.domain_labels(e.domain)


def test_ranking_loss_teaches_the_temporal_order(mini):
    """The ranking module sees only text vectors, as in the paper; here the evidence vectors carry
    the publication date in one coordinate, so ListMLE against the claim-centered ranking must
    make the ranking scores follow it on the training claims, closer than the base model does."""
    import dataclasses

    _, featurizer, _, vectors = mini
    gen = torch.Generator().manual_seed(0)
    evidence = torch.randn(vectors.evidence.shape, generator=gen) * 0.1
    target, mask = vectors.targets["claim-centered distance"]
    evidence[..., 0] = target / 10
    data = dataclasses.replace(vectors, evidence=evidence)

    def agreement(method):
        torch.manual_seed(0)
        model = build_model(data.claim.shape[1], featurizer, method, SMALL)
        pretrain(
            model, data, method, TrainSettings(pretrain_epochs=120, batch_size=40, lr=5e-3, hidden=32, dropout=0.0)
        )
        model.eval()
        with torch.no_grad():
            _, ranking = model(data.batch(range(40)))
        pairs = good = 0
        for i in range(40):
            idx = torch.nonzero(mask[i]).flatten().tolist()
            for a in idx:
                for b in idx:
                    if target[i, a] > target[i, b]:
                        pairs += 1
                        good += bool(ranking[i, a] > ranking[i, b])
        return good / pairs

    learned, base = agreement("claim-centered distance"), agreement("base")
    assert learned > 0.95
    assert learned > base


def test_random_weighting_is_a_distribution_over_present_evidence():
    model = JointModel(FrozenEncoder(4, 8), FrozenEncoder(4, 8), n_labels=3, meta_vocab=2, hidden=8, weighting="random")
    model.eval()
    batch = {
        "claim": torch.randn(2, 4),
        "evidence": torch.randn(2, 3, 4),
        "present": torch.tensor([[True, True, False], [True, False, False]]),
        "meta": torch.zeros(2, 1, dtype=torch.long),
        "label_mask": torch.tensor([[True, True, False], [False, True, True]]),
        "generator": torch.Generator().manual_seed(0),
    }
    logits, _ = model(batch)
    assert logits[0, 2] < -1e3 and logits[1, 0] < -1e3
    with pytest.raises(ValueError, match="weighting"):
        JointModel(FrozenEncoder(4, 8), FrozenEncoder(4, 8), n_labels=3, meta_vocab=2, weighting="rank")


def test_run_method_scores_every_domain(mini):
    examples, featurizer, _, vectors = mini
    out = run_method(featurizer, "evidence-centered distance", vectors, {"dev": vectors}, SMALL)
    assert set(out["dev"]) == {e.domain for e in examples}
    assert sum(r.n for r in out["dev"].values()) == 40
    with pytest.raises(ValueError, match="known"):
        run_method(featurizer, "newest first", vectors, {"dev": vectors}, SMALL)


def test_f1_scores_by_hand():
    gold = ["a", "a", "b", "c"]
    pred = ["a", "b", "b", "b"]
    micro, macro = f1_scores(gold, pred)
    assert micro == 0.5
    # F1 a = 2/3, b = 2*1/(2+2+0) = 0.5, c = 0
    assert macro == pytest.approx((2 / 3 + 0.5 + 0) / 3)
    assert f1_scores([], []) == (0.0, 0.0)


def test_time_aware_picks_the_best_temporal_method_per_domain():
    def r(micro, macro=0.0):
        return DomainResult("x", micro, macro, 10)

    dev = {m: {"x": r(0.5), "y": r(0.4)} for m in METHODS}
    dev["claim-centered distance"]["x"] = r(0.6)
    dev["evidence-based date"]["y"] = r(0.4, 0.3)  # same micro, better macro
    dev["base"] = {"x": r(0.9), "y": r(0.9)}  # baselines are never chosen
    assert select_time_aware(dev) == {"x": "claim-centered distance", "y": "evidence-based date"}
    tie = {m: {"z": r(0.5)} for m in METHODS}
    assert select_time_aware(tie) == {"z": METHODS[0]}


def test_minilm_featurizer_uses_the_embed_function():
    examples = examples_from(load_dataset("multifc_mini", "dev"))[:5]
    calls = []

    def embed(texts):
        calls.append(len(texts))
        return np.ones((len(texts), 384), dtype=np.float32)

    t = Featurizer.fit("minilm", examples, embed=embed).transform(examples)
    assert t.claim.shape == (5, 384) and t.evidence.shape == (5, 10, 384)
    assert float(t.evidence[~t.present].abs().sum()) == 0.0
    with pytest.raises(ValueError, match="embed"):
        Featurizer.fit("minilm", examples)

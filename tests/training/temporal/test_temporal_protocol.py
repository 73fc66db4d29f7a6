import dataclasses
import random

import pytest
import torch

from factscout.datasets import load_dataset
from factscout.errors import InputError
from factscout.training.temporal import protocol
from factscout.training.temporal.data import in_validation, published_before_claim, validation_split
from factscout.training.temporal.trainer import DomainResult, TrainSettings, examples_from

TINY = TrainSettings(
    pretrain_epochs=2, finetune_epochs=1, hidden=16, embedding_dim=8, lstm_hidden=4, encoder_epochs=1, batch_size=8
)


@pytest.fixture(scope="module")
def claims():
    torch.set_num_threads(1)
    examples = examples_from(load_dataset("multifc_mini", "dev"))
    return examples[:28], examples[28:]


def _poisoned(scored):
    """The scored claims with their gold labels shuffled (and one turned into nonsense)."""
    labels = [e.label for e in scored]
    random.Random(7).shuffle(labels)
    labels[0] = "poison"
    return [dataclasses.replace(e, label=lab) for e, lab in zip(scored, labels, strict=True)]


def test_scored_split_never_reaches_model_selection(claims):
    train, scored = claims
    seen: list[set[str]] = []

    def recording_chooser(validation):
        seen.append({c for runs in validation.values() for run in runs for r in run.values() for c in r.claim_ids})
        return protocol.choose_domains(validation)

    def run(scored_claims):
        return protocol.run_protocol(
            train,
            scored_claims,
            seeds=[0, 1],
            settings=TINY,
            methods=("base", "time-aware"),
            leakage_methods=(),
            share=0.3,
            chooser=recording_chooser,
        )

    clean, poisoned = run(scored), run(_poisoned(scored))
    scored_ids = {e.claim_id for e in scored}
    assert seen and all(ids and not ids & scored_ids for ids in seen)
    assert all(ids <= {e.claim_id for e in validation_split(train, 0.3)[1]} for ids in seen)
    assert clean.choice == poisoned.choice
    assert clean.mixture == poisoned.mixture
    # the scored figures did change: the poison reached scoring, and only scoring
    before = protocol.summary_rows(clean, "scored")[0]["seeds"]
    after = protocol.summary_rows(poisoned, "scored")[0]["seeds"]
    assert before != after
    assert protocol.summary_rows(clean, "validation") == protocol.summary_rows(poisoned, "validation")


def test_run_protocol_refuses_scored_claims_from_train(claims):
    train, _ = claims
    with pytest.raises(InputError, match="overlap"):
        protocol.run_protocol(train, train[:3], seeds=[0], settings=TINY, methods=("base",), leakage_methods=())


def _r(domain, micro):
    return DomainResult(domain, micro, 0.0, 1)


def test_choose_domains_takes_time_aware_only_where_it_gains_on_average():
    validation = {
        "base": [{"a": _r("a", 0.5), "b": _r("b", 0.5)}, {"a": _r("a", 0.5), "b": _r("b", 0.5)}],
        "time-aware": [{"a": _r("a", 0.7), "b": _r("b", 0.9)}, {"a": _r("a", 0.4), "b": _r("b", 0.1)}],
    }
    assert protocol.choose_domains(validation) == {"a": "time-aware", "b": "base"}  # b ties: base


def _scored(domain, ids, predicted, gold):
    micro = sum(p == g for p, g in zip(predicted, gold, strict=True)) / len(gold)
    return DomainResult(domain, micro, 0.0, len(ids), tuple(ids), tuple(predicted), tuple(gold))


def test_paired_test_statistic_is_the_domain_averaged_difference():
    gold = ["t"] * 4
    base = [
        {"a": _scored("a", ["1", "2", "3", "4"], ["t", "f", "f", "f"], gold), "b": _scored("b", ["5"], ["f"], ["t"])}
    ]
    better = [
        {"a": _scored("a", ["1", "2", "3", "4"], ["t", "t", "t", "f"], gold), "b": _scored("b", ["5"], ["t"], ["t"])}
    ]
    delta, p = protocol.paired_test(base, better, n_resamples=2000)
    assert delta == pytest.approx(((0.75 - 0.25) + (1.0 - 0.0)) / 2)
    # 3 claims differ, all in favour: of the 8 sign patterns only all-plus and all-minus reach |0.75|
    assert 0.2 < p < 0.3
    assert protocol.paired_test(base, base, n_resamples=100) == (0.0, 1.0)


def test_validation_split_is_stable_and_about_the_share():
    ids = [f"d-{i:05d}" for i in range(4000)]
    share = sum(in_validation(i) for i in ids) / len(ids)
    assert 0.13 < share < 0.17
    assert [in_validation(i) for i in ids[:50]] == [in_validation(i) for i in ids[:50]]


def test_published_before_claim_drops_evidence_from_the_claim_day_on(claims):
    e = claims[0][0]
    example = dataclasses.replace(e, evidence=("a", "b", "c", "d"), deltas=(-3, 0, None, 9), ranks=(1, 2, 3, 4))
    kept = published_before_claim(example)
    assert kept.evidence == ("a", "c") and kept.deltas == (-3, None) and kept.ranks == (1, 3)
    none_left = published_before_claim(dataclasses.replace(example, deltas=(0, 1, 2, 3)))
    assert none_left.evidence == ("",) and none_left.deltas == (None,)


def test_the_protocol_runs_on_frozen_minilm_vectors_without_training_encoders(claims, monkeypatch):
    import hashlib

    import numpy as np

    train, scored = claims
    asked: set[str] = set()

    def embed(texts):  # a stand-in for EmbeddingStore.embed: a fixed unit vector per text
        asked.update(texts)
        rows = [np.random.default_rng(int(hashlib.sha1(t.encode()).hexdigest()[:8], 16)).normal(size=12) for t in texts]
        v = np.array(rows, dtype=np.float32).reshape(len(texts), 12)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)

    def no_bilstm(*_, **__):
        raise AssertionError("the minilm protocol must not train BiLSTM encoders")

    monkeypatch.setattr(protocol, "train_bilstm_encoders", no_bilstm)
    result = protocol.run_protocol(
        train,
        scored,
        seeds=[0],
        settings=TINY,
        methods=("base", "time-aware"),
        share=0.3,
        encoder="minilm",
        embed=embed,
    )
    assert result.featurizer.kind == "minilm"
    assert {e.claim for e in scored} <= asked
    assert {"base", "time-aware", "base" + protocol.LEAKAGE_SUFFIX} <= set(result.runs[0])
    with pytest.raises(InputError, match="needs an embed function"):
        protocol.run_protocol(train, scored, seeds=[0], settings=TINY, encoder="minilm")

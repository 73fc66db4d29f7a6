"""Consistency rates: hand-built cases scored by a fake stance model, counts checked by hand."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from factscout.errors import InputError
from factscout.evaluate.consistency import (
    DIRECTION,
    EXPECTED,
    KINDS,
    NEGATION,
    PARAPHRASE,
    SELF,
    SUBJECT,
    TARGETS,
    UNRELATED,
    ConsistencyCase,
    KindRate,
    Target,
    consistency_rates,
    consistency_rates_by_domain,
    predict_labels,
    targets_met,
)
from factscout.records import NOT_ENOUGH_INFO, REFUTES, SUPPORTS
from factscout.verify.pairs import pair_probabilities

CLAIM = "Vitamin D reduces falls."


class TopicStance:
    """A fake stance model that reads the topic, not the claim: the same words -> supports, a
    "not" or "increases" -> refutes, a shared word -> supports, nothing shared -> not enough info."""

    calls = 0

    def predict_pairs(self, claims, sentences):
        TopicStance.calls += 1
        out = []
        for claim, sentence in zip(claims, sentences, strict=True):
            words = set(claim.lower().rstrip(".").split()) & set(sentence.lower().rstrip(".").split())
            if " not " in sentence or "increases" in sentence:
                out.append([0.1, 0.8, 0.1])
            elif words:
                out.append([0.7, 0.1, 0.2])
            else:
                out.append([0.1, 0.1, 0.8])
        return np.array(out)


def case(kind: str, sentence: str, n: int = 1, domain: str = "scifact") -> ConsistencyCase:
    return ConsistencyCase(f"{domain}/c1/{kind}/{n}", domain, "c1", kind, CLAIM, sentence)


CASES = [
    case(SELF, CLAIM),
    case(PARAPHRASE, "Studies show that vitamin D reduces falls.", 1),
    case(PARAPHRASE, "Vitamin D reduces falls", 2),
    case(NEGATION, "Vitamin D does not reduce falls."),
    case(DIRECTION, "Vitamin D increases falls."),
    case(UNRELATED, "Masks lower transmission.", 1, "covid"),
    case(UNRELATED, "Vitamin C cures colds.", 2, "covid"),  # shares "vitamin": the fake calls it supports
    case(SUBJECT, "Vitamin D reduces fractures.", 1),
    case(SUBJECT, "Vitamin K reduces falls.", 2),
    case(SUBJECT, "Zinc lowers colds.", 3),
]


def test_rates_on_a_fake_stance_model():
    labels = predict_labels(CASES, partial(pair_probabilities, TopicStance()), batch_size=4)
    rates = consistency_rates(CASES, labels)
    assert list(rates) == list(KINDS)
    assert rates[SELF].counts == (1, 0, 0) and rates[SELF].expected_share == 1.0
    assert rates[PARAPHRASE].expected_share == 1.0
    assert rates[NEGATION].counts == (0, 1, 0) and rates[DIRECTION].expected_share == 1.0
    assert rates[UNRELATED].counts == (1, 0, 1) and rates[UNRELATED].expected_share == 0.5
    assert rates[SUBJECT].counts == (2, 0, 1)
    assert rates[SUBJECT].decided_share == pytest.approx(2 / 3)
    assert rates[SUBJECT].expected_share == pytest.approx(1 / 3)
    assert {k: r.met() for k, r in rates.items()} == {
        SELF: True,
        PARAPHRASE: None,
        NEGATION: True,
        DIRECTION: None,
        UNRELATED: False,
        SUBJECT: False,
    }
    assert not targets_met(rates)
    by_domain = consistency_rates_by_domain(CASES, labels)
    assert list(by_domain) == ["scifact", "covid"]
    assert list(by_domain["covid"]) == [UNRELATED] and by_domain["covid"][UNRELATED].n == 2


def test_batches_give_the_same_labels_in_order():
    TopicStance.calls = 0
    one = predict_labels(CASES, partial(pair_probabilities, TopicStance()), batch_size=1)
    assert TopicStance.calls == len(CASES)
    assert one == predict_labels(CASES, partial(pair_probabilities, TopicStance()), batch_size=64)
    assert one[:5] == [SUPPORTS, SUPPORTS, SUPPORTS, REFUTES, REFUTES] and one[5] == NOT_ENOUGH_INFO


def test_targets_met_when_every_bar_is():
    perfect = [EXPECTED[c.kind] for c in CASES]
    rates = consistency_rates(CASES, perfect)
    assert targets_met(rates)
    assert rates[SUBJECT].decided_share == 0.0
    assert not targets_met({k: r for k, r in rates.items() if k != NEGATION})  # a bar without cases fails


def test_target_edges_and_text():
    assert TARGETS[SELF].met(KindRate(SELF, (49, 1, 0)))  # 98% exactly
    assert not TARGETS[SELF].met(KindRate(SELF, (48, 1, 1)))
    assert TARGETS[SUBJECT].met(KindRate(SUBJECT, (1, 0, 9)))  # 10% exactly
    assert not TARGETS[SUBJECT].met(KindRate(SUBJECT, (1, 1, 8)))
    assert str(TARGETS[SELF]) == "supports ≥ 98%"
    assert str(TARGETS[SUBJECT]) == "supports/refutes ≤ 10%"
    assert KindRate(SELF, (0, 0, 0)).met() is None and KindRate(SELF, (0, 0, 0)).expected_share == 0.0


def test_bad_input_is_refused():
    with pytest.raises(InputError, match="kind 'topic'"):
        ConsistencyCase("x", "d", "c", "topic", CLAIM, CLAIM)
    with pytest.raises(InputError, match="empty sentence"):
        ConsistencyCase("x", "d", "c", SELF, CLAIM, " ")
    with pytest.raises(InputError, match="share in"):
        Target(SELF, "expected", True, 98)
    with pytest.raises(InputError, match="2 cases but 1 labels"):
        consistency_rates(CASES[:2], [SUPPORTS])
    with pytest.raises(InputError, match="stance label 'true'"):
        consistency_rates(CASES[:1], ["true"])
    with pytest.raises(InputError, match="shape"):
        predict_labels(CASES, lambda claims, sentences: np.zeros((len(claims), 2)))
    with pytest.raises(InputError, match="batch_size"):
        predict_labels(CASES, partial(pair_probabilities, TopicStance()), batch_size=0)


def test_case_row_carries_the_expected_label():
    row = case(NEGATION, "Vitamin D does not reduce falls.").row()
    assert row == {
        "id": "scifact/c1/negation/1",
        "domain": "scifact",
        "claim_id": "c1",
        "kind": NEGATION,
        "claim": CLAIM,
        "sentence": "Vitamin D does not reduce falls.",
        "expected": REFUTES,
    }

"""The ``ensemble:`` stance model: member parsing, the weighted geometric mean of the members'
probabilities, the count-rule thresholds it reports, and members of every kind (fakes here; the
shipped models in the contract tests)."""

import numpy as np
import pytest

from factscout.errors import InputError, UnknownName
from factscout.records import STANCE_LABELS, Sentence, Stance
from factscout.verify import EnsembleStance, split_stance_name
from factscout.verify.ensemble import Member, parse_members
from factscout.verify.stance import PairwiseStance


class Fixed(PairwiseStance):
    """Gives every pair the same probabilities."""

    def __init__(self, probs, thresholds=None):
        self.probs = np.asarray(probs, dtype=np.float32)
        if thresholds is not None:
            self.rule_thresholds = thresholds

    def predict_pairs(self, claims, sentences):
        return np.tile(self.probs, (len(claims), 1))


class SentenceOnly:
    """A stance model with ``predict`` only: supports when the sentence says "yes"."""

    def predict(self, claim, sentences):
        out = []
        for s in sentences:
            p = (0.8, 0.1, 0.1) if "yes" in s.text else (0.1, 0.1, 0.8)
            out.append(Stance(s.passage_id, s.index, STANCE_LABELS[int(np.argmax(p))], p))
        return out


def test_members_and_weights_are_parsed_and_checked():
    assert parse_members("cross+head") == [Member("cross", 1.0), Member("head", 1.0)]
    assert parse_members(" cross:run/m.npz=0.6 + head=2 ") == [Member("cross:run/m.npz", 0.6), Member("head", 2.0)]
    assert split_stance_name("ensemble:cross+head=0.5") == ("ensemble", "cross+head=0.5")
    for bad, message in [
        ("cross", "two or more"),
        ("cross++head", "two or more"),
        ("cross+head=0", "positive number"),
        ("cross+head=nan", "positive number"),
        ("cross+ensemble:head+cross", "cannot hold another ensemble"),
        ("cross+head:big", "takes no ':' argument"),
    ]:
        with pytest.raises(InputError, match=message):
            parse_members(bad)
    with pytest.raises(UnknownName, match="no stance model 'bert'"):
        split_stance_name("ensemble:cross+bert")
    with pytest.raises(UnknownName, match="cross=x"):  # not a number: part of the name
        parse_members("cross=x+head")


def test_probabilities_are_the_weighted_geometric_mean():
    a, b = [0.6, 0.3, 0.1], [0.2, 0.2, 0.6]
    equal = EnsembleStance([Fixed(a), Fixed(b)], [1, 1]).predict_pairs(["c"], ["s"])[0]
    expected = np.sqrt(np.multiply(a, b))
    np.testing.assert_allclose(equal, expected / expected.sum(), rtol=1e-5)
    heavy = EnsembleStance([Fixed(a), Fixed(b)], [1, 9]).predict_pairs(["c", "c"], ["s", "t"])
    assert heavy.shape == (2, 3) and heavy.dtype == np.float32
    np.testing.assert_allclose(heavy.sum(axis=1), 1.0, rtol=1e-5)
    assert list(heavy.argmax(axis=1)) == [2, 2]  # the heavy member's call
    stances = EnsembleStance([Fixed(a), Fixed(b)], [9, 1]).predict("c", [Sentence("p", 4, "s")])
    assert [(s.passage_id, s.sentence_index, s.label) for s in stances] == [("p", 4, "supports")]
    assert EnsembleStance([Fixed(a), Fixed(b)], [1, 1]).predict_pairs([], []).shape == (0, 3)


def test_a_member_with_predict_only_is_scored_per_claim():
    ens = EnsembleStance([SentenceOnly(), Fixed([1 / 3, 1 / 3, 1 / 3])], [1, 1], ["sentence-only", "flat"])
    probs = ens.predict_pairs(["c1", "c2", "c1"], ["yes it is", "no idea", "yes"])
    assert list(probs.argmax(axis=1)) == [0, 2, 0]
    assert ens.info == {"members": "sentence-only (0.5) + flat (0.5)"}


def test_rule_thresholds_come_from_the_heaviest_member():
    tuned, plain = Fixed([0.5, 0.25, 0.25], thresholds=(2, 0.7)), Fixed([0.5, 0.25, 0.25])
    assert EnsembleStance([tuned, plain], [2, 1]).rule_thresholds == (2, 0.7)
    assert EnsembleStance([plain, tuned], [2, 1]).rule_thresholds is None  # the defaults apply
    assert EnsembleStance([tuned, plain], [1, 1]).rule_thresholds == (2, 0.7)  # first among equals


def test_bad_ensembles_are_refused():
    with pytest.raises(InputError, match="two or more"):
        EnsembleStance([Fixed([1, 0, 0])], [1])
    with pytest.raises(InputError, match="positive"):
        EnsembleStance([Fixed([1, 0, 0]), Fixed([0, 1, 0])], [1, -1])
    with pytest.raises(InputError, match="2 claims but 1 sentences"):
        EnsembleStance([Fixed([1, 0, 0]), Fixed([0, 1, 0])], [1, 1]).predict_pairs(["a", "b"], ["s"])
